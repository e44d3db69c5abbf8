"""Jobs that read a run (tune, diff) after both generators have audited into one --out:
``LATEST`` is per generator, and a run is only ever used with its own tables, generator
and N (the README's review loop, run as the README runs it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_harness import run_cli, tune_exit

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parent.parent
OTHER = REPO / "tests" / "fixtures" / "tables" / "golden"


def cli(*args: str) -> subprocess.CompletedProcess:
    return run_cli("minegen", *args, cwd=REPO)


def one_line_refusal(p: subprocess.CompletedProcess, *words: str) -> None:
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.strip().count("\n") == 0, p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)


@pytest.fixture(scope="module")
def both(tmp_path_factory, cluster):
    """``make audit`` and ``make audit-tilematch`` into one --out (small N), on the shared
    cluster."""
    out = tmp_path_factory.mktemp("both")
    m = cli("audit", "--n", 16, "--scheduler", cluster, "--out", out)
    t = cli("audit", "--generator", "tilegen", "--n", 4, "--scheduler", cluster, "--out", out)
    assert m.returncode == 1 and t.returncode == 1, (m.stderr, t.stderr)
    ids = {g: (out / sub / "metric_v1" / "LATEST").read_text().strip()
           for g, sub in (("minegen", ""), ("tilegen", "tilegen"))}
    return out, ids


def test_diff_latest_reads_the_named_generators_latest(both):
    out, ids = both
    for extra, gen in (((), "minegen"), (("--generator", "tilegen"), "tilegen")):
        p = cli("diff", "LATEST", ids[gen], "--out", out, *extra)
        assert p.returncode == 0, p.stderr
        assert ids[gen] in p.stdout and "ambiguous" not in p.stderr
    p = cli("diff", ids["minegen"], ids["tilegen"], "--out", out)
    one_line_refusal(p, "minegen run", "tilegen run", "one generator")


def test_tune_reads_the_named_generators_latest_at_its_n(both):
    """Without --n, tune takes the run's N; with another N it refuses (it never mixes)."""
    out, ids = both
    p = cli("tune", "--run", "LATEST", "--generator", "tilegen", "--n", 8, "--out", out)
    one_line_refusal(p, "--run LATEST has N = 4, not 8")
    p = cli("tune", "--run", "LATEST", "--n", 8, "--out", out)
    one_line_refusal(p, "--run LATEST has N = 16, not 8")
    assert not (out / "tune").exists()  # a refusal writes nothing


def test_tune_refuses_a_run_of_other_tables_or_another_generator(both):
    out, ids = both
    p = cli("tune", "--run", ids["minegen"], "--tables", OTHER, "--out", out)
    one_line_refusal(p, f"--run {ids['minegen']} audited the tables at", f"not {OTHER}",
                     "drop --tables")
    p = cli("tune", "--run", ids["tilegen"], "--out", out)
    one_line_refusal(p, "is a tilegen run, not minegen", "--generator tilegen")
    assert not (out / "tune").exists()


def test_the_readme_loop_tunes_latest_after_both_audits(both, cluster):
    out, ids = both
    p = cli("tune", "--run", "LATEST", "--out", out, "--scheduler", cluster)
    folder = tune_exit(p)
    doc = json.loads((folder / "tune.json").read_text())
    assert doc["n"] == 16 and Path(doc["baseline_run"]).name == ids["minegen"]
