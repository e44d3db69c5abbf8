"""Table edits through tomlkit and ``tune --apply`` (issue "Operations IV" item 3, defects
3 and 10), without a cluster: every header form the loader accepts and every value type
walk through the patch (``Tune.patch_tables``, what ``tune`` writes its proposal with), the
loader and ``tune --apply`` on a tiny table, and only the changed keys' lines differ; a
symlinked table file is written through to its target, a hard-linked one and a read-only
root are refused in one line with nothing written (decisions 277, 278)."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from cli_harness import run_cli

from boardcore.toml_patch import patch_rows
from minegen.audit.generator import GENERATOR

VARIATION = Path(__file__).parent / "fixtures" / "tables" / "monotone_drop" / "variation.toml"
TILES = Path(__file__).parent.parent / "tables" / "tilematch"

HEADERS = {  # every form TOML (the loader's tomllib) reads as a row of `rows`
    "plain": "[[rows]]",
    "spaced": "[[ rows ]]",
    "indented": "  [[rows]]",
    "commented": "[[rows]]  # a row",
    "tabs": "\t[[\trows ]]\t# tabbed",
    "quoted": '[[ "rows" ]]',
    "literal-quoted": "[['rows']]",
}
VALUES = {  # type: (key, old literal (None: the row lacks it), new value, new literal)
    "int": ("min_safe_count", "20", 25, "25"),
    "float": ("mine_density", "0.10", 0.12, "0.12"),
    "string": ("solver_rules", '"single_subset"', "single", '"single"'),
    "literal string": ("solver_rules", "'single_subset'", "single", "'single'"),
    "list": ("board_biome", '["dungeon"]', ["dungeon", "cave"], '["dungeon", "cave"]'),
    "bool": ("tune_locked", "false", True, "true"),
    "added": ("tune_locked", None, True, "true"),
}
CHANGED = ((2, 0), (3, 0))  # a row under the plain header, one under the form tested


def row(header: str, level: int, key: str, literal: str | None) -> str:
    pad = header[:len(header) - len(header.lstrip())]  # an indented header's body too
    fields = {"level_index": level, "node_depth": 0, "board_width": 10, "board_height": 10,
              "mine_density": "0.10", "inferability_target": 0.85,
              "solver_rules": '"single_subset"', "min_safe_count": 20,
              "max_gen_attempts": 8, "fog_region_count": 0, "fog_target_ratio": "0.0",
              "board_biome": '["dungeon"]', "tune_locked": "false"}
    if literal is None:
        del fields[key]
    else:
        fields[key] = literal
    body = "".join(f"{pad}{k} = {v}" + ("  # the designer's note" if k == key else "") + "\n"
                   for k, v in fields.items())
    return f"{header}\n{body}\n"


def make_root(root: Path, header: str, key: str = "min_safe_count",
              literal: str | None = "20") -> Path:
    """Three rows: the form tested, then a plain header (tomlkit spells every header as
    the first one), then the form again."""
    root.mkdir(parents=True)
    shutil.copy(VARIATION, root / "variation.toml")
    (root / "board_gen.toml").write_text(
        "# a tiny table\n\n" + row(header, 1, key, literal) + row("[[rows]]", 2, key, literal)
        + row(header, 3, key, literal), encoding="utf-8")
    return root


def fake_tune(out: Path, root: Path, proposed: Path, tune_id: str = "t1") -> str:
    """A finished tune of ``root`` proposing ``proposed``, as ``tune --apply`` reads it."""
    folder = out / "tune" / tune_id
    folder.mkdir(parents=True)
    shutil.copytree(proposed, folder / "tables")
    (folder / "tune.json").write_text(json.dumps({
        "tune_id": tune_id, "changes": {"(2, 0)": {}}, "generator": "minegen",
        "generator_ref": "minegen", "tables": str(root),
        "table_hash": GENERATOR.load(str(root)).content_hash}))
    return tune_id


@pytest.mark.parametrize("kind", list(VALUES))
@pytest.mark.parametrize("form", list(HEADERS))
def test_every_header_form_and_value_type_patches_loads_and_applies(tmp_path, form, kind):
    """Defect 10: a valid table under any header form is patched (no ValueError), only the
    changed keys' lines differ (comments, indentation and the headers' spelling kept), the
    value keeps its literal style, the loader reads the change and ``--apply`` writes it."""
    key, old, new, literal = VALUES[kind]
    root = make_root(tmp_path / "tables", HEADERS[form], key, old)
    proposed = tmp_path / "proposed"
    GENERATOR.patch_tables(GENERATOR.load(str(root)), proposed, {k: {key: new} for k in CHANGED})
    before = (root / "board_gen.toml").read_text().splitlines()
    after = (proposed / "board_gen.toml").read_text().splitlines()
    pads = {level: HEADERS[form][:len(HEADERS[form]) - len(HEADERS[form].lstrip())]
            for level in (1, 3)} | {2: ""}
    new_lines = [f"{pads[level]}{key} = {literal}" for level, _ in CHANGED]
    ops = [op for op in difflib.SequenceMatcher(None, before, after).get_opcodes()
           if op[0] != "equal"]
    if old is None:  # added after the row's last key, in the row's indentation
        assert [(t, after[j1:j2]) for t, _, _, j1, j2 in ops] == [
            ("insert", [line]) for line in new_lines]
    else:
        assert [(a, b) for a, b in zip(before, after) if a != b] == [
            (f"{line.replace(literal, old)}  # the designer's note",
             f"{line}  # the designer's note") for line in new_lines]
    tables = GENERATOR.load(str(proposed))
    for k in CHANGED:
        got = getattr(tables.resolve(*k), key)
        assert got == (frozenset(new) if isinstance(new, list) else new)
    assert getattr(tables.resolve(1, 0), key) == getattr(
        GENERATOR.load(str(root)).resolve(1, 0), key)
    out = tmp_path / "out"
    p = run_cli("minegen", "tune", "--apply", fake_tune(out, root, proposed), "--out", out)
    assert p.returncode == 0, p.stderr
    assert (root / "board_gen.toml").read_bytes() == (proposed / "board_gen.toml").read_bytes()


def test_crlf_multiline_and_bases_keep_their_style():
    text = ("[[rows]]\r\nid = 1\r\nh = 0x1F  # hex\r\nf = 0.5\r\nl = [\r\n  'a',\r\n]\r\n"
            "\r\n  [[ rows ]]\r\n  id = 2\r\n  f = 1.5\r\n")
    out = patch_rows(text, ("id",), {(1,): {"h": 255, "f": 2, "l": ["b", "c"]},
                                     (2,): {"new": "x"}})
    assert "\n" not in out.replace("\r\n", "")  # every line ending kept, new lines too
    assert "h = 0xFF  # hex\r\n" in out and "f = 2.0\r\n" in out
    assert "\r\n  [[ rows ]]\r\n  id = 2\r\n  f = 1.5\r\n  new = \"x\"\r\n" in out
    assert tomllib.loads(out)["rows"] == [{"id": 1, "h": 255, "f": 2.0, "l": ["b", "c"]},
                                          {"id": 2, "f": 1.5, "new": "x"}]
    assert out.count("'b'") == 1 and "[\r\n" in out  # literal strings, still multi-line
    with pytest.raises(ValueError, match=r"0 \[\[rows\]\] tables have the key \(9,\)"):
        patch_rows(text, ("id",), {(9,): {"f": 1.0}})


def test_tilegen_presets_under_any_header_form(tmp_path):
    """tilegen's patch goes through the same editor: presets.toml with mixed header forms
    gets the changed keys and the new revision, every other line as it was."""
    from tilegen.audit import tune as tilegen_tune
    from tilegen.audit.generator import GENERATOR as TILES_GEN

    root = tmp_path / "tiles"
    shutil.copytree(TILES, root)
    text = (root / "presets.toml").read_text()
    forms = iter(["[[ rows ]]", "  [[rows]]  # indented", "[['rows']]"] * 1000)
    (root / "presets.toml").write_text("".join(
        (next(forms) if line == "[[rows]]" else line) + "\n" for line in text.splitlines()))
    cat = TILES_GEN.load(str(root))
    key = next(r.key for r in cat.presets if r.layers > 1)
    TILES_GEN.patch_tables(cat, tmp_path / "p", {key: {"layers": 1}})
    before = (root / "presets.toml").read_text().splitlines()
    after = (tmp_path / "p" / "presets.toml").read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and {a.split(" = ")[0] for a, _ in changed} == {
        "layers", "revision"}
    assert ("revision = 1", f"revision = {tilegen_tune.next_revision(cat, key)}") in changed
    new = TILES_GEN.load(str(tmp_path / "p"))
    assert new.preset((*key[:2], tilegen_tune.next_revision(cat, key))).layers == 1


@pytest.fixture
def proposal(tmp_path):
    """A tiny table root and a proposal of it."""
    root = make_root(tmp_path / "tables", "[[rows]]")
    proposed = tmp_path / "proposed"
    GENERATOR.patch_tables(GENERATOR.load(str(root)), proposed,
                           {(2, 0): {"min_safe_count": 30}})
    return root, proposed, tmp_path / "out"


def test_apply_writes_through_a_symlink_to_its_target(proposal, tmp_path):
    """Defect 3: the designer's real file is updated, atomically in its own folder; the
    link stays a link."""
    root, proposed, out = proposal
    real = tmp_path / "designer" / "board_gen.toml"
    real.parent.mkdir()
    (root / "board_gen.toml").rename(real)
    (root / "board_gen.toml").symlink_to(os.path.relpath(real, root))
    p = run_cli("minegen", "tune", "--apply", fake_tune(out, root, proposed), "--out", out)
    assert p.returncode == 0, p.stderr
    assert (root / "board_gen.toml").is_symlink()
    assert real.read_bytes() == (proposed / "board_gen.toml").read_bytes()
    assert str(real) in p.stdout and sorted(os.listdir(real.parent)) == ["board_gen.toml"]


def test_apply_refuses_a_hard_linked_file(proposal, tmp_path):
    """Defect 3: a table file with another name is refused in one line naming it; nothing
    is written (an atomic replace would leave the other name with the old rows)."""
    root, proposed, out = proposal
    other = tmp_path / "elsewhere.toml"
    os.link(root / "board_gen.toml", other)
    before = other.read_bytes()
    p = run_cli("minegen", "tune", "--apply", fake_tune(out, root, proposed), "--out", out)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and str(root / "board_gen.toml") in p.stderr
    assert "hard link" in p.stderr and "nothing written" in p.stderr
    assert (root / "board_gen.toml").read_bytes() == other.read_bytes() == before
    assert os.stat(other).st_nlink == 2


def test_apply_to_a_read_only_root_is_exit_2(tmp_path):
    """Defect 3: a root on a read-only file system (tmpfs, mounted by root for the test):
    exit 2 in one line, no traceback, nothing written."""
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(ro)], check=True)
    try:
        root = make_root(ro / "tables", "[[rows]]")
        proposed = tmp_path / "proposed"
        GENERATOR.patch_tables(GENERATOR.load(str(root)), proposed,
                               {(2, 0): {"min_safe_count": 30}})
        tune_id = fake_tune(tmp_path / "out", root, proposed)
        before = (root / "board_gen.toml").read_bytes()
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        p = run_cli("minegen", "tune", "--apply", tune_id, "--out", tmp_path / "out")
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
        assert "read-only file system" in p.stderr and "nothing written" in p.stderr
        assert (root / "board_gen.toml").read_bytes() == before
        assert sorted(os.listdir(root)) == ["board_gen.toml", "variation.toml"]
    finally:
        subprocess.run(["umount", str(ro)], check=False)


def test_a_row_patched_alone_equals_the_whole_file_patched(tmp_path):
    """``patch_rows`` sends only the changed rows' own text through tomlkit: under every
    header form and value type, its result is the whole file patched at once, byte for
    byte, and the cut path is the one taken."""
    from boardcore import toml_patch

    for form, header in HEADERS.items():
        for kind, (key, old, new, _) in VALUES.items():
            text = (make_root(tmp_path / form / kind, header, key, old)
                    / "board_gen.toml").read_text()
            assert toml_patch._read(text)[2] is not None, (form, kind)
            keys = [(level, 0) for level in (1, 2, 3)]
            changes = {k: {key: new} for k in CHANGED}
            assert patch_rows(text, ("level_index", "node_depth"), changes) == \
                toml_patch._patched(text, keys, changes), (form, kind)


def test_a_header_line_inside_a_string_patches_the_whole_file():
    """A line that reads as a ``[[rows]]`` header inside a multi-line string is no cut: the
    file is patched whole, and the string stays as it was."""
    from boardcore import toml_patch

    text = ('[[rows]]\nid = 1\nnote = """\n[[rows]]\n"""\nf = 1.0\n\n'
            '[[rows]]\nid = 2\nf = 2.0\n')
    assert toml_patch._read(text)[2] is None
    out = patch_rows(text, ("id",), {(2,): {"f": 3.0}})
    assert out == text.replace("f = 2.0", "f = 3.0")
