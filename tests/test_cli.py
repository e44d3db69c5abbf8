"""The thin CLI, run as a real process: exit codes, no tracebacks, output shapes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import warnings

import pytest
from cli_harness import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "tables"


def run(*args: str) -> subprocess.CompletedProcess:
    """``minegen ARGS`` in this process, every warning shown (as PYTHONWARNINGS=default
    shows them to a process of its own)."""
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        return run_cli("minegen", *args)


def test_validate_default_root():
    p = run("validate")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("tables OK") and len(p.stdout.strip().splitlines()) == 1


def test_validate_lists_every_violation_without_traceback():
    p = run("validate", "--tables", str(FIXTURES / "many_errors"))
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    categories = {line.split("]")[1].split(":")[0].strip()
                  for line in p.stderr.splitlines() if line.startswith("[error]")}
    assert {"missing_field", "unknown_field", "type", "domain", "duplicate_key", "fog_params",
            "mine_floor", "min_safe_feasibility", "cost", "biome_empty", "anchor",
            "mask_constraint"} <= categories
    assert "board_gen.toml row (1, 12) field max_gen_attempts" in p.stderr


@pytest.mark.parametrize("name", ["bad_parse", "fog_domain", "min_safe", "biome_empty",
                                  "variation_mask_constraint", "no_anchor"])
def test_validate_broken_fixture_exits_2(name):
    p = run("validate", "--tables", str(FIXTURES / name))
    assert p.returncode == 2 and "Traceback" not in p.stderr and "[error]" in p.stderr


def test_validate_global_scope_only_warns():
    p = run("validate", "--tables", str(FIXTURES / "global_scope"))
    assert p.returncode == 0
    assert "[warning] scope_global" in p.stdout


def test_generate_json_shape():
    p = run("generate", "3", "4", "--index", "0", "--format", "json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert set(doc) == {"board", "metrics"}
    b = doc["board"]
    assert set(b) == {"width", "height", "spawn", "mines", "fog"}
    assert b["spawn"] == [b["width"] // 2, b["height"] // 2]
    assert b["mines"] == sorted(b["mines"], key=lambda c: (c[1], c[0]))
    assert b["fog"] == sorted(b["fog"], key=lambda c: (c[1], c[0]))
    assert len(b["mines"]) == doc["metrics"]["mines"] and len(b["fog"]) == doc["metrics"]["fog_cells"]
    assert doc["metrics"]["level_index"] == 3 and doc["metrics"]["seed_index"] == 0


def test_generate_text_draws_board_and_legend():
    p = run("generate", "3", "4", "--index", "0")
    assert p.returncode == 0, p.stderr
    assert "legend:" in p.stdout and "~" in p.stdout and "[" in p.stdout
    assert "fog: 1 of 2 region(s) of 20 cells placed" in p.stdout
    assert "inferability_core" in p.stdout


@pytest.mark.parametrize("args", [("generate", "9", "0"), ("generate", "1", "-1"),
                                  ("generate", "1", "0", "--tables", "/nonexistent"),
                                  ("bench", "--width", "4", "--height", "8", "--density", "0.1")])
def test_bad_requests_exit_2_without_traceback(args):
    p = run(*args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and p.stderr.startswith(("minegen:", "table validation"))


def test_unknown_level_names_known_levels():
    p = run("generate", "9", "0")
    assert "known levels: [1, 2, 3, 4]" in p.stderr


def test_bench_prints_one_json_object():
    p = run("bench", "--width", "12", "--height", "12", "--density", "0.15", "--boards", "50",
            "--repeats", "2")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    for key in ("us_per_attempt", "us_per_board", "boards_per_s", "attempts", "boards", "compile_s"):
        assert key in doc
    assert doc["boards"] == 50 and doc["attempts"] >= 50 and doc["us_per_attempt"] > 0
