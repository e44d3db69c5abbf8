"""runtime/tilegen.js against tilegen: node's own test runner (runtime/test/) replays the
golden boards and a sample this test generates fresh (every city x level at the production
board and audit boards 0, 1 and 16; both slot rules; a failed_gates and a failed_layout
preset; a raw seed), field for field, with every witness replayed by the JS rules.

Node comes from Debian's package when missing (the test skips only when the package
registry cannot be reached)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tilegen.export import row_json, rows_document
from tilegen.generate import generate_planned
from tilegen.table_loader import load_tables, plans
from tilegen.witness import witness

REPO = Path(__file__).resolve().parent.parent
GOLDEN_TABLES = REPO / "tests" / "fixtures" / "tilematch" / "golden"
GOLDEN_ROWS = REPO / "tests" / "golden" / "tilegen-rows.json"
INDICES = (-1, 0, 1, 16)




def run_node(node: str, **files: Path) -> subprocess.CompletedProcess:
    """node --test on runtime/test/tilegen.test.mjs; ``files``: TILEGEN_JS_<NAME> paths."""
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin"}
    env.update({f"TILEGEN_JS_{k.upper()}": str(v) for k, v in files.items()})
    return subprocess.run([node, "--test", "--test-reporter=tap",
                           str(REPO / "runtime" / "test" / "tilegen.test.mjs")],
                          capture_output=True, text=True, timeout=900, cwd=REPO, env=env)


def tap_counts(out: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"^# (pass|fail|skipped|tests) (\d+)$", out, re.M)}


def test_golden_rows_file_is_the_export_of_the_frozen_tables():
    assert json.loads(GOLDEN_ROWS.read_text()) == rows_document(load_tables(GOLDEN_TABLES))


def test_node_replays_the_golden_boards(node):
    p = run_node(node)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    c = tap_counts(p.stdout)
    assert c["fail"] == 0 and c["pass"] >= 4 and c["skipped"] == 3, c  # sample, pack, daily


def daily_boards(path: Path) -> Path:
    """The dailies of two dates in every city (the default tables' daily.toml), made in
    Python as `tilegen generate CITY --daily DATE` makes them, written to ``path``."""
    from tilegen.daily import board_of
    from tilegen.export import board_doc

    catalog = load_tables()
    boards = []
    for city in (c.id for c in catalog.cities):
        for date in ("2026-01-01", "2026-03-18"):
            plan, seed = board_of(catalog, city, date)
            boards.append({"city": city, "date": date,
                           **board_doc(generate_planned(plan, seed=seed))})
    path.write_text(json.dumps(boards))
    return path


def test_node_builds_every_citys_daily_board(node, tmp_path):
    """Every city's dailies rebuilt by dailyBoard from the exported default tables."""
    from tilegen.export import rows_document

    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps(rows_document(load_tables())))
    p = run_node(node, rows=rows, daily=daily_boards(tmp_path / "daily.json"))
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert re.search(r"^ok \d+ - daily boards: every one rebuilt", p.stdout, re.M), p.stdout
    assert "# SKIP" not in p.stdout.split("daily boards: every one rebuilt")[1].split("\n")[0]


def _board_doc(plan, sample_id: str, which: dict) -> dict:
    res = generate_planned(plan, **which)
    b = res.board
    rec = {k: v for k, v in res.record.items() if k != "gen_ms"}
    rec["stream_seed"] = str(rec["stream_seed"])
    return {"sampleId": sample_id,
            "which": {k: str(v) if k == "seed" else v for k, v in which.items()},
            "board": b.as_json(), "record": rec,
            "witness": witness(b.elem, b.occ, plan.rules.slot_rule, plan.rules.dfs_node_cap)}


def fresh_sample() -> dict:
    catalog = load_tables()
    rows, boards = [], []

    def add(plan, sample_id, whiches):
        rows.append({**row_json(plan), "sampleId": sample_id})
        boards.extend(_board_doc(plan, sample_id, w) for w in whiches)

    every = plans(catalog, sorted(catalog.keys()))
    for plan in every:
        add(plan, plan.row_key, [{"index": i} for i in INDICES])
    by_key = {p.row_key: p for p in every}
    for key in ("beijing:2:1", "tokyo:4:1", "seoul:6:1", "singapore:5:1"):
        p = by_key[key]
        p = replace(p, rules=replace(p.rules, slot_rule="lose_on_full",
                                     tool_order=("undo", "shuffle", "remove")))
        add(p, key + ":lose_on_full", [{"index": i} for i in (-1, 0, 3)])
    p = by_key["istanbul:5:1"]
    add(replace(p, rules=replace(p.rules, runs_per_strategy=3),
                gates=replace(p.gates, tool_free_min_bp=10000)),
        "istanbul:5:1:failed_gates", [{"index": -1}, {"index": 0}])
    p = by_key["bangkok:3:1"]
    add(replace(p, rules=replace(p.rules, near_depth=-1, runs_per_strategy=3)),
        "bangkok:3:1:failed_layout", [{"index": -1}])
    add(by_key["beijing:6:1"], "beijing:6:1:raw", [{"seed": 2**64 - 1}, {"seed": 12345}])
    deadlocks = [deadlock_case(by_key[key], key, strategy) for key, strategy in (
        ("beijing:5:1", "match-first"), ("tokyo:6:1", "slot-build"), ("istanbul:5:1", "risk-averse"),
        ("seoul:4:1", "match-first"), ("bangkok:6:1", "match-first"), ("singapore:5:1", "slot-build"))]
    return {"rows": rows, "boards": boards, "rescue": rescue_cases(),
            "deadlocks": deadlocks, "deadlocks_made": made_deadlocks()}


def made_deadlocks() -> list[dict]:
    """Boards that need tools (soft deadlocks are rare on the reference boards): a game
    that always clicks the lowest legal piece, and the kernel's deadlock class after every
    click (``search.classify_deadlock``, budgets 1 each)."""
    import numpy as np
    import naive_tile_sim as NS
    from test_tile_rescue import column_boards

    from tilegen._kernels import search
    from tilegen.codes import DEADLOCK_NAMES, N_PRM, P

    out = []
    for elem, occ, rule, lanes in column_boards(40):
        T = len(elem)
        prm = np.zeros(N_PRM, dtype=np.int64)
        prm[P.T], prm[P.E], prm[P.SLOT_RULE], prm[P.DFS_CAP] = T, max(elem) + 1, rule, 100_000
        rules = NS.Rules(slot_rule=rule, n_lanes=lanes)
        occl = NS.occluders_from_masks(occ)
        onboard, slot, clicks, classes, number = set(range(T)), [], [], [], 0
        while True:
            moves = NS.legal_clicks(onboard, occl, elem, [elem[q] for q, _ in slot], rules)
            if not moves:
                break
            onboard.discard(moves[0])
            clicks.append(moves[0])
            slot, _ = NS.put_in_slot(slot, moves[0], number, elem)
            number += 1
            s = np.array([q for q, _ in slot] or [0], dtype=np.int32)
            last = max(slot, key=lambda qn: qn[1])[0] if slot else -1
            got = search.classify_deadlock(
                np.asarray(elem, dtype=np.int32), np.asarray(occ, dtype=np.uint64), prm,
                np.uint64(sum(1 << p for p in onboard)), s, len(slot), np.zeros(1, np.int32),
                0, last, 1, search.make_memo(100_000))
            classes.append(DEADLOCK_NAMES[int(got)])
        out.append({"elem": elem, "occ": [[q for q in range(T) if m >> q & 1] for m in occ],
                    "slotRule": rule, "lanes": lanes, "cap": 100_000, "clicks": clicks,
                    "classes": classes})
    return out


def deadlock_case(plan, sample_id: str, strategy: str, run: int = 0) -> dict:
    """The production board's tool-free run ``run`` of ``strategy`` (Python's trace), and
    Python's deadlock class (``generate.classify_deadlock``) after every click of it."""
    from tilegen.generate import RuntimeState, classify_deadlock
    from tilegen.render import trace_run

    res = generate_planned(plan)
    b = res.board
    ids = [p.id for p in b.pieces]
    budgets = {"remove": plan.rules.budget_remove, "shuffle": plan.rules.budget_shuffle,
               "undo": plan.rules.budget_undo}
    clicks, classes = [], []
    for step in trace_run(res, strategy, run=run).steps:
        if step.action != "click":
            continue
        clicks.append(step.piece)
        slot = [ids[p] for p in step.slot]
        last = next(ids[p] for p in reversed(clicks) if ids[p] in slot) if slot else None
        state = RuntimeState(slot=tuple(slot), removed_piece_ids=tuple(
            ids[p] for p in clicks if ids[p] not in slot), last_inserted=last,
            tools_left=dict(budgets))
        classes.append(classify_deadlock(state, b))
    return {"sampleId": sample_id, "clicks": clicks, "classes": classes}


def rescue_cases() -> list[dict]:
    """Boards that need tools (the reference presets' boards all have a tool-free win):
    the least-tools search's answer and node count, at a roomy cap and at a tight one."""
    from test_tile_rescue import column_boards, kernel, tower

    cases = [(*b, cap) for b in column_boards(40) for cap in (100_000, 40)]
    cases += [(*tower(7), 0, 3, 100_000), (*tower(7), 0, 3, 5)]
    out = []
    for elem, occ, rule, lanes, cap in cases:
        answer, nodes = kernel(elem, occ, rule, lanes, cap=cap)
        out.append({"elem": elem, "occ": [[q for q in range(len(elem)) if m >> q & 1]
                                          for m in occ],
                    "slotRule": rule, "lanes": lanes, "cap": cap, "answer": int(answer),
                    "nodes": int(nodes)})
    return out


def tilegen_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilegen.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=REPO)


@pytest.mark.slow
def test_node_rebuilds_a_fresh_sample_and_the_board_pack(node, tmp_path):
    sample = fresh_sample()
    exits = {b["record"]["exit"] for b in sample["boards"]}
    assert {c["answer"] for c in sample["rescue"]} == {-1, 1, 2, 3, 4}
    assert {x for c in sample["deadlocks"] + sample["deadlocks_made"]
            for x in c["classes"]} == {"none", "soft", "hard", "deep"}
    assert exits == {"met", "failed_gates", "failed_layout"}
    path = tmp_path / "sample.json"
    path.write_text(json.dumps(sample))
    pack, rows = tmp_path / "pack.json", tmp_path / "rows.json"
    for cmd, out in (("export", pack), ("export-tables", rows)):
        p = tilegen_cli(cmd, "--out", out)
        assert p.returncode == 0 and out.name in p.stdout, p.stderr
    p = run_node(node, sample=path, pack=pack, rows=rows,
                 daily=daily_boards(tmp_path / "daily.json"))
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-2000:]
    c = tap_counts(p.stdout)
    assert c["fail"] == 0 and c["skipped"] == 0 and c["pass"] >= 5, c


# ------------------------------------------------- what the runtime refuses, as tilegen does

REFUSED = REPO / "runtime" / "test" / "refused-inputs.json"
INPUTS_TEST = REPO / "runtime" / "test" / "tilegen-inputs.test.mjs"

# Each entry of refused-inputs.json given to the runtime's public entry points as a runtime
# user gives it (BigInt(text), Number(text), or the date text): what each throws.
JS_REFUSALS = """
import { readFileSync } from 'node:fs';
import { dailyBoard, generateBoard } from './runtime/tilegen.js';
const [listPath, rowsPath] = process.argv.slice(1);
const tables = JSON.parse(readFileSync(rowsPath, 'utf8'));
const out = JSON.parse(readFileSync(listPath, 'utf8')).refused.map((e) => {
  const v = e.js === 'bigint' ? BigInt(e.text) : e.js === 'number' ? Number(e.text) : e.text;
  try {
    if (e.what === 'date') dailyBoard('beijing', v, tables);
    else generateBoard('beijing', 1, { [e.what]: v }, tables);
    return { taken: true };
  } catch (err) {
    return { error: err.constructor.name, message: err.message };
  }
});
console.log(JSON.stringify(out));
"""


class Taken(Exception):
    """tilegen took every input: it would make the board of these (row, seed, index)."""


def cli_line(argv: list[str], monkeypatch) -> tuple[int, str, tuple | None]:
    """``tilegen ARGV`` in this process: (exit code, stderr, what it would generate: the row
    key, seed and index), the board itself never made (every check comes before it)."""
    from cli_harness import run_cli

    def made(plan, *, seed=None, index=None):
        raise Taken(plan.row_key, seed, index)

    with monkeypatch.context() as m:
        m.setattr("tilegen.generate.generate_planned", made)
        try:
            p = run_cli("tilegen", *argv)
        except Taken as t:
            return 0, "", t.args
    return p.returncode, p.stderr, None


CLI_WORDS = (re.compile(r"tilegen: generate: (?:argument [^:]+: )?(.*) "
                        r"\(see tilegen generate --help\)"), re.compile(r"tilegen: (.*)"))


def cli_outcome(what: str, text: str | None, monkeypatch) -> tuple[str | None, tuple | None]:
    """`tilegen generate beijing 1` (or `--daily`) with ``text`` for the input ``what``
    (None: left out): (the refusal as the runtime words it: the command line's one line
    without its frame, ``tilegen: generate: argument X: `` ... `` (see ... --help)`` or
    ``tilegen: ``; None when tilegen takes it, and then what it would make). A refusal is
    always exit 2 and one line."""
    city, level, options = "beijing", "1", []
    if what == "city":
        city, level = (text, "1") if text is not None else (None, None)
    elif what == "level":
        level = text
    elif what == "date":
        level, options = None, [f"--daily={text}"]
    elif text is not None:
        options = [f"--{what}={text}"]
    argv = ["generate", *options, "--", *(v for v in (city, level) if v is not None)]
    rc, err, made = cli_line(argv, monkeypatch)
    if rc == 0:
        return None, made
    line = err.strip()
    assert rc == 2 and "\n" not in line and "Traceback" not in line, (argv, err)
    return next(m.group(1) for w in CLI_WORDS if (m := w.fullmatch(line))), None


def python_refusal(entry: dict, monkeypatch) -> str | None:
    """tilegen's message for a refused-inputs.json entry (None: tilegen takes the value):
    --seed / --index / --daily as `tilegen generate` reads them."""
    return cli_outcome(entry["what"], entry["text"], monkeypatch)[0]


def default_rows(path: Path) -> Path:
    path.write_text(json.dumps(rows_document(load_tables())))
    return path


def test_js_refuses_what_tilegen_refuses_with_the_same_message(node, tmp_path, monkeypatch):
    """The seeds, indices and dates of refused-inputs.json: tilegen refuses each with the
    listed message, and runtime/tilegen.js (generateBoard, dailyBoard, from tables that have
    a daily setting) throws a RangeError or TypeError with the very same text."""
    entries = json.loads(REFUSED.read_text())["refused"]
    assert {e["what"] for e in entries} == {"seed", "index", "date"}
    assert [python_refusal(e, monkeypatch) for e in entries] == [e["message"] for e in entries]
    p = subprocess.run([node, "--input-type=module", "-e", JS_REFUSALS, str(REFUSED),
                        str(default_rows(tmp_path / "rows.json"))],
                       capture_output=True, text=True, timeout=600, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout)
    for e, js in zip(entries, got, strict=True):
        kind = "TypeError" if e["message"].startswith("not an integer") else "RangeError"
        assert js == {"error": kind, "message": e["message"]}, e


def boundary_boards(path: Path) -> Path:
    """Boards of the values at tilegen's limits, made by Python (`generate_planned`, as
    `tilegen generate` makes them), with each value as refused-inputs.json writes one;
    ``seed_index`` and ``stream_seed`` as decimal text (JSON numbers past 2^53 round)."""
    from tilegen.daily import board_of

    catalog = load_tables()
    plan = plans(catalog, [("beijing", 1, 1)])[0]
    cases = [(plan, {"what": "seed", "js": "bigint", "text": str(2**64 - 1)}, {"seed": 2**64 - 1}),
             (plan, {"what": "seed", "js": "number", "text": "0"}, {"seed": 0}),
             (plan, {"what": "index", "js": "bigint", "text": str(2**63 - 2)},
              {"index": 2**63 - 2}),
             (plan, {"what": "index", "js": "bigint", "text": str(2**53)}, {"index": 2**53}),
             (plan, {"what": "index", "js": "number", "text": str(2**53 - 1)},
              {"index": 2**53 - 1}),
             (plan, {"what": "index", "js": "bigint", "text": "-1"}, {"index": -1})]
    for date in ("2024-02-29", "2000-02-29", "0001-01-01"):
        daily, seed = board_of(catalog, "beijing", date)
        cases.append((daily, {"what": "date", "text": date}, {"seed": seed}))
    boards = []
    for p, which, kwargs in cases:
        res = generate_planned(p, **kwargs)
        rec = {k: v for k, v in res.record.items() if k != "gen_ms"}
        rec["stream_seed"] = str(rec["stream_seed"])
        rec["seed_index"] = None if rec["seed_index"] is None else str(rec["seed_index"])
        boards.append({"city": p.city_id, "level": p.level_id, "which": which,
                       "boardState": res.board.as_json(), "record": rec})
    path.write_text(json.dumps(boards))
    return path


def test_node_takes_tilegens_boundary_values_and_rebuilds_their_boards(node, tmp_path):
    """runtime/test/tilegen-inputs.test.mjs with the boundary boards: every refusal of the
    list, the JavaScript-only ones, and seed 2^64 - 1, index 2^63 - 2 (a BigInt), index
    2^53 - 1 (a Number), 2024-02-29 ... rebuilt as Python builds them."""
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin",
           "TILEGEN_JS_ROWS": str(default_rows(tmp_path / "rows.json")),
           "TILEGEN_JS_BOUNDARY": str(boundary_boards(tmp_path / "boundary.json"))}
    p = subprocess.run([node, "--test", "--test-reporter=tap", str(INPUTS_TEST)],
                       capture_output=True, text=True, timeout=600, cwd=REPO, env=env)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    c = tap_counts(p.stdout)
    assert c["fail"] == 0 and c["skipped"] == 0 and c["pass"] >= 5, c


# ------------------------- every input of generateBoard and dailyBoard x hostile values
# Generated: each input of generateBoard (city, level, revision, seed, index) and
# dailyBoard's date, the others valid, takes each hostile value below; tilegen's command
# line (`tilegen generate beijing 1 ...`, `--daily`) and the runtime must both take it, or
# both refuse it with the same message (Operations IV, defects 11 and 14).

INPUTS = ("city", "level", "revision", "seed", "index", "date")
# (how the JS test gives it, the text): BigInt(text), Number(text), the text, or null (the
# command line leaves the input out)
HOSTILE = [("string", t) for t in (
    "abc", "12", "0", "", "   ", " 7 ", "0x10", "1_0", "-3", "1.5", "1e3", "\u0661\u0662",
    "\uff17", "2026-01-01", "9" * 40, "1" + "0" * 4400)] + [
    ("null", None), ("number", "-1"), ("number", "0"), ("number", "7"), ("number", "1.5"),
    ("number", "NaN"), ("number", "-Infinity"), ("number", "1e+21"), ("bigint", "-2"),
    ("bigint", "1" + "0" * 30), ("bigint", str(2**64 - 1))]


def js_only(what: str, kind: str, text: str | None) -> str | None:
    """The refusals only JavaScript can meet, in its own words (docs/tilegen-js.md): a
    seed or index given as a Number past 2^53 - 1 (it may be another integer rounded), and
    no date at all (the command line without --daily is another command)."""
    n = float(text) if kind == "number" else 0.0
    if what in ("seed", "index") and math.isfinite(n) and n == int(n) and abs(n) > 2**53 - 1:
        return (f"not a safe integer: {text} (a Number past 2^53 - 1 may be another "
                f"integer rounded; give the {what} as a BigInt)")
    if what == "date" and kind == "null":
        return "--daily null: write the date as YYYY-MM-DD, e.g. 2026-01-01"
    return None


WALK_JS = """
import { readFileSync } from 'node:fs';
import { dailyBoard, generateBoard } from './runtime/tilegen.js';
const [casesPath, rowsPath] = process.argv.slice(1);
const tables = JSON.parse(readFileSync(rowsPath, 'utf8'));
const out = JSON.parse(readFileSync(casesPath, 'utf8')).map(({ what, kind, text }) => {
  const v = kind === 'bigint' ? BigInt(text) : kind === 'number' ? Number(text)
    : kind === 'null' ? null : text;
  try {
    let r;
    if (what === 'date') r = dailyBoard('beijing', v, tables);
    else if (what === 'city') r = generateBoard(v, 1, {}, tables);
    else if (what === 'level') r = generateBoard('beijing', v, {}, tables);
    else r = generateBoard('beijing', 1, { [what]: v }, tables);
    const rec = r.record;
    return { taken: [`${rec.city_id}:${rec.level_id}:${rec.revision}`, String(rec.stream_seed),
      rec.seed_index === null ? null : String(rec.seed_index)] };
  } catch (err) {
    return { error: err.constructor.name, message: err.message };
  }
});
console.log(JSON.stringify(out));
"""


def test_every_input_of_the_runtime_refuses_as_the_command_line_does(node, tmp_path,
                                                                    monkeypatch):
    """Every input x hostile value (non-numeric and numeric strings, empty, blank, null,
    negative, float, huge, Unicode digits): the runtime's refusal is the command line's
    one-line message, word for word, and what the command line takes the runtime takes,
    as the same row and seed (``revision: 0`` was taken as revision 1)."""
    cases = [{"what": w, "kind": k, "text": t} for w in INPUTS for k, t in HOSTILE]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    p = subprocess.run([node, "--input-type=module", "-e", WALK_JS, str(tmp_path / "cases.json"),
                        str(default_rows(tmp_path / "rows.json"))],
                       capture_output=True, text=True, timeout=600, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    differ, taken, refused = [], 0, 0
    for case, js in zip(cases, json.loads(p.stdout), strict=True):
        what, kind, text = case["what"], case["kind"], case["text"]
        if (own := js_only(what, kind, text)) is not None:
            if js.get("message") != own:
                differ.append((case, js, f"JS-only: {own}"))
            continue
        # the command line's text is what String() writes of the JS value (HOSTILE's text)
        want, made = cli_outcome(what, text, monkeypatch)
        if want is not None:
            refused += 1
            if js.get("message") != want:
                differ.append((case, js, want))
            continue
        taken += 1
        key, seed, index = made
        expect = [key, str(seed), None] if seed is not None else \
            [key, js.get("taken", [None] * 3)[1], str(-1 if index is None else index)]
        if js.get("taken") != expect:
            differ.append((case, js, f"taken: {made}"))
    assert differ == [], "\n".join(f"{c} JS {j} CLI {w!r}" for c, j, w in differ)
    assert taken >= 10 and refused >= 100, (taken, refused)
