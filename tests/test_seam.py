"""The plug-in seam (``pipeline.generator``): a required core, capabilities with defaults,
``format_key`` the inverse of ``parse_key``, and a one-line refusal (exit 2) when a job
needs a capability the generator does not declare."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from cli_harness import run_cli

from pipeline import capabilities
from pipeline.generator import CORE, Generator, Sweep, Tune, load_generator

HERE = Path(__file__).resolve().parent


def test_the_core_fits_on_one_screen_and_every_other_hook_has_a_default():
    assert len(CORE) <= 16, CORE
    hooks = {n for n in dir(Generator) if not n.startswith("_")}
    assert set(CORE) - {"name", "metric_version", "generator_version", "seed_rule",
                        "key_fields", "index_field", "record", "lines"} \
        == set(Generator.__abstractmethods__)
    # everything outside the core is defined on the base class (a default, not a comment)
    assert hooks - set(CORE) <= set(vars(Generator)), hooks - set(CORE) - set(vars(Generator))


def test_a_generator_missing_a_core_method_cannot_be_built():
    class Half(Generator):
        def load(self, root):
            return None

    with pytest.raises(TypeError, match="abstract"):
        Half()


@pytest.mark.parametrize("ref", ["minegen", "tilegen"])
def test_format_key_is_the_inverse_of_parse_key_on_every_row(ref):
    gen = load_generator(ref)
    keys = [gen.key(p) for p in gen.plans(gen.load(None), [])]
    assert keys
    for key in keys:
        text = gen.format_key(key)
        assert gen.parse_key(text) == key, (key, text)


def test_the_contract_reads_on_one_screen():
    """The Generator class (core and defaults) fits 80 lines, and what one game alone needs
    is a capability: no member of a capability is also a member of the contract."""
    import inspect

    assert len(inspect.getsource(Generator).rstrip().splitlines()) <= 80
    hooks = {name for cap in (capabilities.Calibration, capabilities.Progression,
                              capabilities.Revisions, capabilities.OwnVerdict,
                              capabilities.RunTables, capabilities.Kernels,
                              capabilities.Drawings, capabilities.Categories)
             for name in vars(cap) if not name.startswith("_")}
    assert {"exhibits", "exhibit", "play_page", "first_index"} <= hooks
    assert not hooks & set(dir(Generator)), hooks & set(dir(Generator))
    assert "rows_ordered" not in dir(Generator)


def test_the_contract_depends_on_nothing_in_analysis_or_reports():
    """Importing the contract (in a fresh process) loads no module of ``pipeline.analysis``
    or ``pipeline.reports``: what a generator declares with lives in ``declarations``."""
    code = ("import sys, pipeline.generator; print(sorted(m for m in sys.modules if "
            "m.startswith(('pipeline.analysis', 'pipeline.reports'))))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=HERE.parent, timeout=60)
    assert (p.returncode, p.stdout.strip()) == (0, "[]"), p.stderr


def test_the_store_and_the_printed_commands_import_nothing_above_them():
    """``hints``, ``store/`` and the capabilities read the contract's defaults and a row's
    board span from leaves (``defaults``, ``capabilities``), not from the contract or the
    options (three imports ran back up)."""
    import re

    files = [HERE.parent / "pipeline" / "hints.py", HERE.parent / "pipeline" / "capabilities.py",
             *(HERE.parent / "pipeline" / "store").glob("*.py")]
    up = re.compile(r"^from \.\.?(generator|options|jobs|commands)\b", re.M)
    assert [f.name for f in files if up.search(f.read_text(encoding="utf-8"))] == []


def test_the_generic_audit_names_no_capabilitys_option():
    """--daily and --calibration come through the entry points (``audit_options``): the
    audit job, its options and its command name neither; both are registered."""
    from pipeline import audit_options

    opts = {o.name: o for o in audit_options.registered()}
    assert {"daily", "calibration"} <= set(opts) and opts["calibration"].kept
    for path in ("pipeline/jobs/audit.py", "pipeline/options.py", "pipeline/commands.py"):
        text = (HERE.parent / path).read_text(encoding="utf-8")
        for name in opts:
            assert f"opts.{name}" not in text and f'"{name}"' not in text, (path, name)
            assert f"--{name}" not in text, (path, name)


def test_the_games_declare_sweep_and_tune_and_the_core_only_toy_neither(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    for ref in ("minegen", "tilegen", "toygen:GENERATOR"):
        gen = load_generator(ref)
        assert isinstance(gen, Sweep) and isinstance(gen, Tune), ref
    core = load_generator("toygen:AUDIT_ONLY")
    assert not isinstance(core, Sweep) and core.report_subdir == "toygen"
    assert core.diff_columns and core.side_tables(None) == {}
    assert capabilities.exhibits(core, pl.DataFrame(), []) == []
    assert capabilities.rows_ordered(core)


def test_something_that_is_not_a_generator_is_refused(monkeypatch):
    from boardcore.errors import InputError

    with pytest.raises(InputError, match="not a pipeline.generator.Generator"):
        load_generator("json:JSONDecoder")


def _cli(*args, cwd):
    """``minegen ARGS`` in this process (``toygen`` imports from tests/, on its path)."""
    return run_cli("minegen", *args, cwd=cwd)


@pytest.mark.parametrize("job", [
    ["sweep", "--row", "alpha:1", "--vary", "p=0.1:0.3:0.1"],
    ["tune"],
])
def test_a_job_the_generator_cannot_do_refuses_in_one_line(tmp_path, job):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "toy.toml").write_text(
        '[[rows]]\nname = "alpha"\nsize = 1\np = 0.2\n', encoding="utf-8")
    out = tmp_path / "out"
    p = _cli(*job, "--generator", "toygen:AUDIT_ONLY", "--tables", str(tmp_path / "t"),
             "--out", str(out), cwd=tmp_path)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr, p.stderr
    assert f"cannot {job[0]}" in p.stderr and "declares no" in p.stderr, p.stderr
    assert not out.exists()


@pytest.mark.parametrize("ref, rows, shown", [
    ("minegen", ["1:0", "2:4", "1:0"], "1:0"),
    ("tilegen", ["beijing:1", "beijing:1:1"], "beijing:1:1"),  # one row, written two ways
])
def test_a_row_named_twice_is_refused_by_the_engine_for_every_generator(ref, rows, shown):
    from boardcore.errors import InputError
    from pipeline.jobs.audit import keys_of

    with pytest.raises(InputError, match=f"names a row twice: {shown}$"):
        keys_of(load_generator(ref), rows)


def test_a_change_is_shown_in_the_tables_own_keys_and_values():
    """tune's knobs that are no TOML key are spelt out as the lines the patch changes."""
    mine, tile = load_generator("minegen"), load_generator("tilegen")
    assert mine.table_edits(mine.load(None), (3, 4), "board_size", 20, 21) == [
        ("board_width", "20", "21"), ("board_height", "20", "21")]
    cat = tile.load(None)
    key = next(p.key for p in tile.plans(cat, []) if p.density == "medium_high")
    assert tile.table_edits(cat, key, "density_class", 2, 1) == [
        ("density", '"medium_high"', '"medium"'), ("revision", "1", "2")]
