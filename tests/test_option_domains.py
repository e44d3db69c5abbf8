"""Every option of every command has a declared domain, and the command line refuses a
value outside it in one line, exit 2 (decision 214; issue 29 items 3 and 8).

The walk is generated from the parsers themselves: a command or option added later is
walked too, and one without a declared domain fails ``test_every_value_option_declares``.
"""

from __future__ import annotations

import argparse

import pytest
from cli_harness import run_cli

from boardcore.domains import TEXT, Number
from minegen.cli import build_parser as minegen_parser
from tilegen.cli import build_parser as tilegen_parser

# a valid value for each positional that comes before the one walked
VALID_POSITIONAL = {"level": "1", "depth": "0", "city": "beijing", "run_a": "LATEST",
                    "run_b": "LATEST"}


def _options(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _options(sub, (*path, name))
        elif a.nargs != 0 and not isinstance(a, (argparse._HelpAction,
                                                 argparse._VersionAction)):
            positionals = [b.dest for b in parser._actions if not b.option_strings
                           and not isinstance(b, argparse._SubParsersAction)]
            yield path, a, positionals


def every_option():
    for prog, build in (("minegen", minegen_parser), ("tilegen", tilegen_parser)):
        yield from _options(build(), (prog,))


def bad_values(action) -> list[str]:
    if action.choices is not None:
        return ["", "no-such-choice"]
    if action.type is TEXT:
        return ["", "   "]
    return list(action.type.bad_values())


def argv_for(path, action, positionals, value) -> list[str]:
    """The command line with ``value`` for ``action`` (``--opt=VALUE``, and ``--`` before a
    positional: a value such as ``-inf`` is a value there, not an option)."""
    if action.option_strings:
        return [*path[1:], f"{action.option_strings[0]}={value}"]
    before = positionals[:positionals.index(action.dest)]
    return [*path[1:], *(VALID_POSITIONAL[d] for d in before), "--", value]


CASES = [(path, a, pos, v) for path, a, pos in every_option() for v in
         (bad_values(a) if a.type is TEXT or a.choices is not None or hasattr(a.type, "bad_values")
          else [])]


def test_every_value_option_declares_its_domain():
    undeclared, unstated = [], []
    for path, a, _ in every_option():
        if a.choices is None and a.type is not TEXT and not hasattr(a.type, "bad_values"):
            undeclared.append((" ".join(path), a.dest, a.type))
        if isinstance(a.type, Number) and str(a.type) not in (a.help or ""):
            unstated.append((" ".join(path), a.dest))
    assert undeclared == [] and unstated == []
    # the walk saw them all (100 value options on 2026-12-02)
    assert len({(p, a.dest) for p, a, _ in every_option()}) >= 100


@pytest.mark.parametrize("path, action, positionals, value", CASES, ids=[
    f"{' '.join(p)}-{a.option_strings[0] if a.option_strings else a.dest}-{v!r}"
    for p, a, _, v in CASES])
def test_a_value_outside_its_domain_is_exit_2_in_one_line(path, action, positionals, value,
                                                          tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written, here or anywhere
    p = run_cli(path[0], *argv_for(path, action, positionals, value))
    name = action.option_strings[0] if action.option_strings else action.dest
    assert p.returncode == 2, (p.stdout, p.stderr)
    line = p.stderr.strip()
    assert "\n" not in line and "Traceback" not in line and name in line, line
    assert f"see {' '.join(path)} --help" in line, line
    assert p.stdout == "" and list(tmp_path.iterdir()) == []


def test_the_walk_includes_the_defects_once_found():
    """The values issue 29 found running (or overflowing) are in the walk."""
    walked = {(" ".join(p), a.option_strings[0] if a.option_strings else a.dest, v)
              for p, a, _, v in CASES}
    for case in [("minegen audit", "--resume", ""), ("minegen reconcile", "--fdr", "nan"),
                 ("minegen reconcile", "--fdr", "1"),
                 ("minegen reconcile", "--min-sessions", "0"),
                 ("tilegen bench", "--repeats", "1" + "0" * 20),
                 ("tilegen telemetry synth", "--sessions", "1" + "0" * 20)]:
        assert case in walked, case


@pytest.mark.parametrize("value, ok", [("0", True), ("0x10", True), (str(2**64 - 1), True),
                                       (str(2**64), False), ("-1", False), ("1e3", False)])
def test_a_seed_domain_takes_hex_and_stops_at_2_64(value, ok):
    from boardcore.domains import SEED64

    if ok:
        assert SEED64(value) == int(value, 0)
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=r"in \[0, 2\^64\)"):
            SEED64(value)


# ------------------------------------------------- the [slurm] table of a cluster profile
# Every key of a profile's [slurm] table has a declared domain (pipeline.slurm.KEYS), read
# where the profile is read: the walk below is generated from the declarations and from
# configs/slurm.toml, so a key added later is walked too (decision 284; Operations IV,
# defect 5).

import re  # noqa: E402
import tomllib  # noqa: E402
from pathlib import Path  # noqa: E402

from boardcore.errors import InputError  # noqa: E402
from pipeline import slurm  # noqa: E402
from pipeline.options import from_profile, slurm_options  # noqa: E402

SHIPPED = Path(__file__).resolve().parent.parent / "configs" / "slurm.toml"
BASE = tomllib.loads(SHIPPED.read_text())["slurm"]
# one of each class of character no profile string may hold: C0 controls (tab, newline,
# carriage return, NUL, escape, ...), DEL, C1 controls (NEL, CSI), format characters
# (zero-width space, right-to-left override, byte-order mark), line/paragraph separators
CONTROLS = ["\n", "\r", "\t", "\x00", "\x1b", "\x0b", "\x0c", "\x08", "\x7f", "\x85",
            "\x9b", "\u200b", "\u202e", "\ufeff", "\u2028", "\u2029"]


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return {float("inf"): "inf", float("-inf"): "-inf"}.get(v, repr(v))
    if isinstance(v, str):
        return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}"
                             for c in v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(map(_toml, v)) + "]"
    return "{ " + ", ".join(f"{_toml(k)} = {_toml(x)}" for k, x in v.items()) + " }"


def _profile(tmp_path, table: dict) -> Path:
    path = tmp_path / "profile.toml"
    path.write_text("[slurm]\n" + "".join(f"{_toml(k)} = {_toml(v)}\n"
                                          for k, v in table.items()), encoding="utf-8")
    return path


def _poisoned(value, c: str):
    """``value`` with ``c`` inside its first string (a string in place of a number)."""
    if isinstance(value, str):
        return value[:1] + c + value[1:]
    if isinstance(value, list):
        return [_poisoned(value[0] if value else "x", c), *value[1:]]
    if isinstance(value, dict):
        k = next(iter(value))
        return {**value, k: _poisoned(value[k], c)}
    return f"{value}{c}"


def _refused(path: Path, key: str) -> str:
    with pytest.raises(InputError) as e:
        slurm_options(str(path))
    line = str(e.value)
    assert key in line and str(path) in line, line
    assert all(c.isprintable() for c in line), repr(line)  # one line, nothing raw
    return line


def _slurm_keys(doc: str) -> set[str]:
    """Every key configs/slurm.toml names in its [slurm] table, commented-out ones too."""
    section = doc.split("\n[slurm]\n", 1)[1]
    return {m for m in re.findall(r"^#? ?([a-z_]+) = ", section, re.M)}


def test_every_key_the_shipped_profile_names_is_declared():
    named = _slurm_keys(SHIPPED.read_text())
    assert set(BASE) <= named and {"queue", "account"} <= named
    assert named <= set(slurm.KEYS), named - set(slurm.KEYS)
    assert set(BASE.get("scheduler_options", {})) <= set(slurm.SCHEDULER_KEYS)
    slurm.check_slurm(BASE, "shipped")  # and holds its own domains


WALK_KEYS = sorted(set(slurm.KEYS) | set(BASE)) + [
    f"scheduler_options.{k}" for k in slurm.SCHEDULER_KEYS]


def _with(key: str, value) -> tuple[dict, str]:
    if key.startswith("scheduler_options."):
        sub = key.split(".", 1)[1]
        return {**BASE, "scheduler_options": {sub: value}}, key
    return {**BASE, key: value}, key


def _good(key: str):
    if key.startswith("scheduler_options."):
        return slurm.SCHEDULER_KEYS[key.split(".", 1)[1]].good
    return slurm.KEYS[key].good


@pytest.mark.parametrize("key", WALK_KEYS)
@pytest.mark.parametrize("c", CONTROLS, ids=[f"U+{ord(c):04X}" for c in CONTROLS])
def test_a_control_character_in_any_key_is_refused_naming_it(tmp_path, key, c):
    table, name = _with(key, _poisoned(_good(key), c))
    assert "control character" in _refused(_profile(tmp_path, table), name)


@pytest.mark.parametrize("c", CONTROLS, ids=[f"U+{ord(c):04X}" for c in CONTROLS])
def test_a_control_character_in_a_key_name_is_refused(tmp_path, c):
    table = {**BASE, f"job{c}name": "x"}
    assert "control character" in _refused(_profile(tmp_path, table), "key")


def test_every_control_and_format_character_is_one():
    import unicodedata

    for o in [*range(0x20), *range(0x7F, 0xA0)]:
        assert not slurm.control_free(f"a{chr(o)}b"), hex(o)
    assert all(not slurm.control_free(c) for c in map(chr, range(0x110000))
               if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp"))
    assert slurm.control_free("minegen-audit ü ☃")


BAD = [(key, v) for key in WALK_KEYS
       for v in (slurm.SCHEDULER_KEYS[key.split(".", 1)[1]] if "." in key
                 else slurm.KEYS[key]).bad]


@pytest.mark.parametrize("key, value", BAD, ids=[f"{k}-{v!r}" for k, v in BAD])
def test_a_value_outside_a_keys_domain_is_refused_naming_it(tmp_path, key, value):
    table, name = _with(key, value)
    _refused(_profile(tmp_path, table), name)


@pytest.mark.parametrize("key", WALK_KEYS)
def test_each_keys_declared_good_value_is_taken(tmp_path, key):
    table, _ = _with(key, _good(key))
    assert slurm_options(str(_profile(tmp_path, table))) == table


def test_the_profile_walk_includes_the_defects_once_found():
    """The values issue Operations IV found reaching the job script are in the walk."""
    walked = {(k, repr(v)) for k, v in BAD}
    for case in [("walltime", "99:99:99"), ("job_name", "-x"), ("job_name", "a b"),
                 ("worker_extra_args", "--no-dashboard")]:
        assert (case[0], repr(case[1])) in walked, case
    assert "job_name" in WALK_KEYS and "\n" in CONTROLS


@pytest.mark.parametrize("text, seconds", [
    ("90", 5400), ("90:30", 5430), ("01:00:00", 3600), ("36:00:00", 129600),
    ("1-00", 86400), ("1-12:30", 131400), ("1-12:30:15", 131415), ("365-00", 365 * 86400),
    ("99:99:99", None), ("1-24", None), ("1:60", None), ("0", None), ("00:00:00", None),
    ("366-00", None), ("1-", None), ("1:1:1:1", None), ("1:001", None), ("１", None),
    ("1-1:1:1:1", None), (" 10", None)])
def test_walltime_is_read_as_slurm_reads_it(text, seconds):
    assert slurm.walltime_seconds(text) == seconds


def test_a_profiles_slurm_table_is_checked_the_same_way(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('[slurm]\ncores = 1\nmemory = "2GB"\njob_name = "a\\nb"\n')
    with pytest.raises(InputError, match=r"--profile .*p\.toml \[slurm\]: job_name must"):
        from_profile(str(path))
