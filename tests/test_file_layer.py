"""Every file a command reads or writes goes through one layer, ``boardcore.files``
(decision 287; issue "Operations IV" item 1, defects 1 and 8), walked against hostile
targets as tests/test_option_domains.py walks option values. Run as root.

- Defect 1: a link planted at a writer's temporary name (the old, predictable
  ``.<name>.<pid>-<count>.tmp``) is never written through: export-tables, audit
  --junit-xml and generate --play leave the victim as it was and write a regular file.
- Defect 8: a resume refuses a shard that is a link to /dev/zero or a FIFO at once (no
  memory grows, nothing waits); a FIFO as LATEST ends runs, diff and tune --run LATEST at
  once.
- The walk: no module of the four packages reads or writes a file but through the layer
  (a scan of their sources); every reader and writer of the layer meets every hostile
  kind; and every command of ``SCENARIOS`` runs once with the layer's calls recorded, then
  once per file it read or wrote (one per folder and suffix) made hostile. The cases are
  generated from what the commands touch, so a file a command reads later is walked too.
  Each case ends within seconds, never follows the link, never hangs, and either refuses
  in one line naming the file (exit 2) or goes on without it where the command never
  fails on one bad file (the runs listing, the output folder's index).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_harness import run_cli

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("boardcore", "pipeline", "minegen", "tilegen")
KEY = (1, 0)  # the one minegen row of the module's run


class Hang(Exception):
    """A case ran past its guard: it waited on a FIFO or read a device."""


@contextlib.contextmanager
def guard(seconds: float):
    """SIGALRM after ``seconds``: a blocked open() or read() on the main thread raises."""
    def ring(signum, frame):
        raise Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def predictable_names(final: Path, count: int) -> list[Path]:
    """The temporary names the writer of today's main would pick next in this process
    (``.<name>.<pid>-<count as 8 hex>.tmp``, a per-process counter)."""
    try:
        from boardcore import atomic  # today's main: the counter itself
        start = next(atomic._CALLS)
    except (ImportError, AttributeError):
        start = 0
    return [final.with_name(f".{final.name}.{os.getpid()}-{i:08x}.tmp")
            for i in range(start, start + count)]


def plant(final: Path, victim: Path, count: int) -> list[Path]:
    links = predictable_names(final, count)
    for link in links:
        link.symlink_to(victim)
    return links


def make_partial(out: Path, records: Path, name: str) -> Path:
    """A partial run of the module's row (what an interrupted audit leaves), through the
    store's own API."""
    import polars as pl

    from pipeline.generator import load_generator
    from pipeline.store import runs
    from pipeline.store.shards import ShardStore, shard_key

    gen = load_generator("minegen")
    cat = gen.load(None)
    plans = gen.plans(cat, [KEY])
    expects = [shard_key(gen, p, 4) for p in plans]
    store = ShardStore.claim(runs.version_dir(out, gen.report_subdir, gen.metric_version),
                             name, {
        "generator": gen.name, "generator_ref": gen.name, "tables": str(cat.root),
        "table_hash": cat.content_hash, "n": 4, "rows": [list(KEY)], "full_table": False,
        "seeds_per_task": None, "calibration": None,
        "snapshots": [e["snapshot"] for e in expects],
        "created_utc": "2026-12-04T00:00:00+00:00"})
    store.save(0, expects[0], pl.read_parquet(records))
    store.unlock()
    return store.folder


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One small audit run (row 1:0, N = 4) made LATEST, its --junit-xml written with links
    planted at the predictable temporary names, a partial run beside it, a copy of the
    default tables and a profile: every case below reads these."""
    from pipeline.store import runs

    tmp = tmp_path_factory.mktemp("file-layer")
    out, junit = tmp / "out", tmp / "junit" / "audit.xml"
    junit.parent.mkdir()
    victim = tmp / "victim.txt"
    victim.write_text("keep me\n")
    links = plant(junit, victim, 4096)  # the audit's every write before the JUnit file
    p = run_cli("minegen", "audit", "--rows", "1:0", "--n", "4", "--out", out,
                "--junit-xml", junit)
    assert p.returncode == 0, p.stderr
    vdir = out / "metric_v1"
    (run,) = [d for d in vdir.iterdir() if d.is_dir() and not d.name.startswith(".")]
    runs.set_latest(vdir, run.name)
    make_partial(out, run / "records.parquet", "resume-me")
    tables = tmp / "tables"
    tables.mkdir()
    for name in ("board_gen.toml", "variation.toml", "economy.toml", "settlement.toml"):
        shutil.copy(REPO / "tables" / name, tables / name)
    (tmp / "profile.toml").write_text("[audit]\nn = 4\n")
    (tmp / "play").mkdir()
    from test_reconcile_input import make_run

    make_run(tmp / "tile-run")  # a tilegen run as reconcile reads it, and its players
    p = run_cli("tilegen", "telemetry", "synth", "--seeds", "2", "--sessions", "40", "--days",
                "1", "--anomalies", "0", "--out", tmp / "telemetry")
    assert p.returncode == 0, p.stderr
    return {"tmp": tmp, "out": out, "run": run, "junit": junit, "victim": victim,
            "links": links, "tables": tables}


# ------------------------------------------------------------------ defect 1: planted links

def test_the_junit_file_is_never_written_through_a_planted_link(world):
    """Defect 1 (audit --junit-xml): the victim is as it was, the links are links and the
    JUnit file is a regular file."""
    assert world["victim"].read_text() == "keep me\n"
    assert all(link.is_symlink() for link in world["links"])
    assert not world["junit"].is_symlink() and world["junit"].is_file()
    assert "<testsuite" in world["junit"].read_text()


@pytest.mark.parametrize("prog, argv, name", [
    ("tilegen", ["export-tables", "--out"], "rows.json"),
    ("minegen", ["generate", "1", "0", "--play"], "board.html"),
])
def test_a_link_planted_at_the_temporary_name_is_never_written_through(tmp_path, prog, argv,
                                                                       name):
    """Defect 1: links at every temporary name today's writer would pick next."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    target = tmp_path / "out" / name
    target.parent.mkdir()
    links = plant(target, victim, 64)
    p = run_cli(prog, *argv, target)
    assert p.returncode == 0, p.stderr
    assert victim.read_text() == "keep me\n"
    assert all(link.is_symlink() for link in links)
    assert target.is_file() and not target.is_symlink() and target.stat().st_size > 100


# ------------------------------------------------------------- defect 8: FIFOs and devices

def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a runaway read stops here


SCRIPT = """
import json, sys
from minegen.cli import main
import contextlib, io
got = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    got.append([rc, err.getvalue()])
print(json.dumps(got))
"""


def run_each(argvs: list[list[str]], timeout: float = 60) -> list[tuple[int, str]]:
    """The minegen commands ``argvs`` one after another in one fresh process, its memory
    bounded: (exit code, stderr) of each; a process still running after ``timeout`` (a
    FIFO's wait) is killed and fails the test."""
    try:
        p = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(argvs)], cwd=REPO,
                           capture_output=True, text=True, timeout=timeout,
                           preexec_fn=_limited)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{argvs}: still running after {timeout} s (waiting on a FIFO?)")
    assert p.returncode == 0, p.stderr[-2000:]
    return [tuple(x) for x in json.loads(p.stdout.strip().splitlines()[-1])]


def one_line(rc: int, err: str, *words: str) -> None:
    assert rc == 2 and "Traceback" not in err and err.count("\n") == 1, (rc, err)
    for w in words:
        assert w in err, err


def test_a_resume_refuses_a_shard_that_is_dev_zero_or_a_fifo_at_once(world, tmp_path):
    """Defect 8: a shard linked to /dev/zero grew a resume to 15.7 GB; a FIFO shard waited
    for ever. Both are refused in one line, within seconds, in 3 GiB of address space."""
    records = world["run"] / "records.parquet"
    argvs = []
    for kind in ("zero", "fifo"):
        out = tmp_path / kind
        shard = make_partial(out, records, f"resume-{kind}") / "shards" / "r00000.parquet"
        shard.unlink()
        if kind == "zero":
            shard.symlink_to("/dev/zero")
        else:
            os.mkfifo(shard)
        argvs.append(["audit", "--resume", f"resume-{kind}", "--out", str(out),
                      "--scheduler", "tcp://127.0.0.1:9"])
    for (rc, err), kind in zip(run_each(argvs), ("symbolic link", "FIFO")):
        one_line(rc, err, "r00000.parquet", kind)


def test_a_fifo_as_latest_ends_runs_diff_and_tune_at_once(world, tmp_path):
    """Defect 8: a FIFO as LATEST hung runs, diff and tune --run LATEST (and Ctrl-C did
    not end them). The listing goes on without it; diff and tune say so in one line."""
    out = tmp_path / "out"
    shutil.copytree(world["out"] / "metric_v1", out / "metric_v1", symlinks=True,
                    ignore=shutil.ignore_patterns(".partial-*", "LATEST"))
    os.mkfifo(out / "metric_v1" / "LATEST")
    got = run_each([["runs", "--out", str(out)],
                    ["diff", "LATEST", "LATEST", "--out", str(out)],
                    ["tune", "--run", "LATEST", "--out", str(out)]])
    assert got[0][0] == 0 and "Traceback" not in got[0][1], got[0]
    for rc, err in got[1:]:
        one_line(rc, err, "LATEST", "FIFO")
    assert stat.S_ISFIFO(os.lstat(out / "metric_v1" / "LATEST").st_mode)


# -------------------------------------------------------- the walk: the sources themselves

RAW_IO = re.compile(
    r"(?<!files)(?<!atomic)\.(?:read_text|read_bytes|write_text|write_bytes)\(|"
    r"(?<![\w.])open\(|(?<!os)\.open\(|os\.open\((?!os\.devnull|[^)]*O_DIRECTORY)|"
    r"json\.load\(|tomllib\.load\(|shutil\.copy|copytree|"
    r"\bpl\.(?:read|scan)_\w+\((?!\s*(?:files\.)?checked\(|\s*io\.BytesIO\(|raw\b)|"
    r"read_schema\((?!\s*(?:files\.)?checked\()|ParquetWriter\((?!self\._file)|"
    r"\.write_(?:parquet|csv)\((?!\s*(?:buf|f)\b)")


def test_no_module_reads_or_writes_a_file_but_through_the_layer():
    """Every read_text, read_bytes, open, write_text, write_bytes, json.load, tomllib.load,
    Polars or Arrow reader and writer of the four packages is the layer's, or is handed a
    path the layer checked (``files.checked``) or a file it opened."""
    hits = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            if path == REPO / "boardcore" / "files.py":
                continue
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if RAW_IO.search(code) and not code.lstrip().startswith(("\"", "'")):
                    hits.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
    assert hits == []


def test_the_scan_catches_raw_reads_and_writes():
    bad = ["x = p.read_text()", "open(p, 'a+')", "pl.read_parquet(p)", "json.load(f)",
           "frame.write_parquet(tmp / 'a.parquet')", "shutil.copytree(a, b)"]
    good = ["pl.read_parquet(files.checked(p))", "pl.read_parquet(io.BytesIO(raw))",
            "frame.write_parquet(f)", "files.read_text(p)", "files.write_bytes(p, b)"]
    assert all(RAW_IO.search(b) for b in bad) and not any(RAW_IO.search(g) for g in good)


# ------------------------------------------------------------ the walk: hostile targets

HOSTILE_READ = ("symlink", "dangling", "fifo", "zero", "null", "device", "folder", "socket",
                "huge")
HOSTILE_WRITE = ("symlink", "planted", "hardlink", "fifo", "null", "device", "folder",
                 "read-only")
# a command meets one kind per branch of the layer (the layer's own walk meets them all):
# a link (followed or refused), a missing file, a FIFO, a device, a size over the bound;
# a link, a link at the temporary name, a second name, not a file, a read-only folder
COMMAND_READ = ("symlink", "dangling", "fifo", "zero", "huge")
COMMAND_WRITE = ("symlink", "planted", "hardlink", "fifo", "read-only")


def make_hostile(path: Path, kind: str, victim: Path, size: int) -> None:
    """``path`` (absent) made ``kind``: a link to ``victim`` or to nowhere, a FIFO, a link
    to /dev/zero or /dev/null, a device node (what /dev/zero is), a folder, a socket, a
    sparse file of ``size`` bytes, a hard link to ``victim``."""
    if kind == "symlink":
        path.symlink_to(victim)
    elif kind == "dangling":
        path.symlink_to(path.parent / "nowhere" / "at-all")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind in ("zero", "null"):
        path.symlink_to(f"/dev/{kind}")
    elif kind == "device":
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        import socket

        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(size)
    elif kind == "hardlink":
        os.link(victim, path)
    else:
        raise ValueError(kind)


def snapshot(path: Path):
    """What stands at ``path`` (followed by nothing): its kind, link target, bytes."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(st.st_mode):
        return ("file", st.st_size, st.st_nlink, path.read_bytes() if st.st_size < 1 << 20
                else None)
    return (stat.S_IFMT(st.st_mode),)


def clear(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


@contextlib.contextmanager
def read_only(folder: Path):
    """``folder`` as a read-only bind mount of itself (root writes anywhere otherwise)."""
    subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_every_function_of_the_layer_is_walked():
    """A function added to the layer later is a reader, a writer or a helper here: the
    walk below meets it."""
    from boardcore import files

    public = {n for n, v in vars(files).items() if callable(v) and not n.startswith("_")
              and getattr(v, "__module__", "") == files.__name__}
    assert public == set(LAYER_READERS) | set(LAYER_WRITERS) | LAYER_HELPERS


LAYER_READERS = {  # name: a call reading ``p`` (with and without following links)
    "opened": lambda f, p, follow: _read_opened(f, p, follow),
    "read_bytes": lambda f, p, follow: f.read_bytes(p, f.LINE, follow=follow),
    "read_text": lambda f, p, follow: f.read_text(p, f.LINE, follow=follow),
    "read_json": lambda f, p, follow: f.read_json(p, f.LINE, follow=follow),
    "checked": lambda f, p, follow: f.checked(p, f.LINE, follow=follow),
}
LAYER_WRITERS = {  # name: a call writing ``p``
    "write": lambda f, p: f.write(p, b"new bytes"),
    "write_path": lambda f, p: f.write_path(p, lambda t: t.write_bytes(b"new bytes")),
    "create": lambda f, p: f.create(p, b"new bytes"),
    "new_file": lambda f, p: f.new_file(p).close(),
    "append": lambda f, p: f.append(p, b"new line\n"),
    "lock_file": lambda f, p: f.lock_file(p).close(),
    "target": lambda f, p: f.target(p),
}
LAYER_HELPERS = {"Refused", "kind", "size_text", "temp_folder", "fsync", "probe",
                 "copy_tree"}


def _read_opened(f, p, follow):
    with f.opened(p, f.LINE, follow=follow) as fh:
        return fh.read()


@pytest.mark.parametrize("follow", [False, True], ids=["own-file", "followed"])
@pytest.mark.parametrize("name", sorted(LAYER_READERS))
def test_every_reader_of_the_layer_refuses_every_hostile_kind_at_once(tmp_path, name,
                                                                      follow):
    from boardcore import files

    victim = tmp_path / "victim.txt"
    victim.write_text('"keep me"')
    for kind in HOSTILE_READ:
        path = tmp_path / f"{kind}.json"
        make_hostile(path, kind, victim, files.LINE + 1)
        before = snapshot(path)
        with guard(3):
            if kind == "symlink" and follow:  # a person's file may be a link: read through
                LAYER_READERS[name](files, path, follow)
            else:
                with pytest.raises((files.Refused, FileNotFoundError)) as e:
                    LAYER_READERS[name](files, path, follow)
                assert isinstance(e.value, files.Refused) or kind == "dangling", (kind, e)
                assert "\n" not in str(e.value) and path.name in str(e.value)
        assert snapshot(path) == before and victim.read_text() == '"keep me"', kind


@pytest.mark.parametrize("name", sorted(LAYER_WRITERS))
def test_every_writer_of_the_layer_refuses_every_hostile_kind(tmp_path, name):
    from boardcore import files

    ro = tmp_path / "ro"
    ro.mkdir()
    for kind in HOSTILE_WRITE:
        victim = tmp_path / "victim.txt"
        victim.write_text("keep me")
        folder = ro if kind == "read-only" else tmp_path / kind
        folder.mkdir(exist_ok=True)
        path = folder / "target.json"
        links = []
        if kind == "planted":
            links = plant(path, victim, 64)
        elif kind != "read-only":
            make_hostile(path, kind, victim, 0)
        before = snapshot(path)
        with guard(3), read_only(ro) if kind == "read-only" else contextlib.nullcontext():
            try:
                LAYER_WRITERS[name](files, path)
                done = True
            except files.Refused as e:
                assert "\n" not in str(e) and path.name in str(e), (kind, e)
                done = False
            except OSError as e:  # what the system refuses: read-only, a folder there
                assert kind in ("read-only", "folder"), (kind, e)
                done = False
        assert victim.read_text() == "keep me", kind
        assert all(link.is_symlink() for link in links)
        if kind == "planted":  # nothing stood there: the file is written, a regular one
            assert done and (name in ("target",) or stat.S_ISREG(os.lstat(path).st_mode))
        else:
            assert not done or name == "target" and kind == "read-only", kind
            assert snapshot(path) == before, kind


def test_a_copied_table_root_holds_regular_files_only(tmp_path):
    from boardcore import files

    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.toml").write_text("x = 1\n")
    (src / "sub" / "b.toml").write_text("y = 2\n")
    files.copy_tree(src, tmp_path / "copy")
    assert (tmp_path / "copy" / "sub" / "b.toml").read_text() == "y = 2\n"
    for kind in ("fifo", "zero", "device"):
        make_hostile(src / f"{kind}.toml", kind, src / "a.toml", 0)
        with guard(3), pytest.raises(files.Refused, match=f"{kind}.toml"):
            files.copy_tree(src, tmp_path / f"copy-{kind}")
        clear(src / f"{kind}.toml")
    (src / "sub" / "up").symlink_to(src)
    with guard(3), pytest.raises(files.Refused, match="too deep"):
        files.copy_tree(src, tmp_path / "copy-loop")


# ------------------------------------------------------------- the walk: every command

@dataclass(frozen=True)
class Scenario:
    name: str
    prog: str
    argv: tuple[str, ...]  # {out} {tmp} {run} {tables} are filled in
    stop: tuple[str, ...] = ()  # "module:attribute"s replaced by a call ending the command
    lines: int = 1  # the lines a refusal may take (a table listing: its head and finding)


SCENARIOS = [
    Scenario("runs", "minegen", ("runs", "--out", "{out}")),
    Scenario("diff", "minegen", ("diff", "LATEST", "LATEST", "--out", "{out}")),
    Scenario("tune", "minegen", ("tune", "--run", "LATEST", "--out", "{out}"),
             stop=("pipeline.jobs.tune:_baseline",)),
    Scenario("resume", "minegen", ("audit", "--resume", "resume-me", "--out", "{out}",
                                   "--scheduler", "tcp://127.0.0.1:9"),
             stop=("pipeline.engine.spot:subprocess", "pipeline.jobs.audit:execute")),
    Scenario("profile", "minegen", ("audit", "--profile", "{tmp}/profile.toml", "--rows",
                                    "1:0", "--out", "{tmp}/never"),
             stop=("pipeline.jobs.audit:run_audit",)),
    Scenario("validate", "minegen", ("validate", "--tables", "{tables}"), lines=2),
    Scenario("play", "minegen", ("generate", "1", "0", "--play", "{tmp}/play/board.html")),
    Scenario("export-tables", "tilegen", ("export-tables", "--out", "{tmp}/play/rows.json")),
    Scenario("export", "tilegen", ("export", "--out", "{tmp}/play/pack.json")),
    Scenario("synth", "tilegen", ("telemetry", "synth", "--seeds", "1", "--sessions", "1",
                                  "--days", "1", "--anomalies", "0", "--out", "{tmp}/synth")),
    Scenario("reconcile", "minegen", ("reconcile", "--run", "{tmp}/tile-run", "--telemetry",
                                      "{tmp}/telemetry/synthetic-sessions.parquet", "--out",
                                      "{out}", "--engine", "local")),
]
WALKED = {"minegen runs": "runs", "minegen diff": "diff", "minegen tune": "tune",
          "minegen audit": "resume, profile; the module's run itself writes --junit-xml "
                           "with links planted at its temporary names",
          "minegen validate": "validate", "minegen generate": "play",
          "tilegen export-tables": "export-tables", "tilegen export": "export",
          "tilegen telemetry synth": "synth", "minegen reconcile": "reconcile",
          # not run here, and why
          "minegen sweep": "a cluster's run: its reads are the run store's and the tables' "
                           "(walked through diff, tune and resume), its writes a new folder's",
          "minegen bench": "reads and writes no file", "tilegen bench": "no file either",
          "tilegen validate": "the table reader of minegen validate (boardcore.tables)",
          "tilegen generate": "--play: the writer of minegen generate --play"}


def _commands(parser, path=()):
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(path)
    for a in subs:
        for name, sub in a.choices.items():
            yield from _commands(sub, (*path, name))


def test_every_command_is_walked_or_says_why_not():
    from minegen.cli import build_parser as minegen_parser
    from tilegen.cli import build_parser as tilegen_parser

    commands = {*_commands(minegen_parser(), ("minegen",)),
                *_commands(tilegen_parser(), ("tilegen",))}
    assert commands == set(WALKED)
    names = {s.name for s in SCENARIOS}
    assert all(w.split(",")[0].split(";")[0] in names or " " in w for w in WALKED.values())


class Stop(Exception):
    """The command reached the scenario's stop: it went on as it would without the file."""


class _Stopper:
    def __getattr__(self, name):
        raise Stop(name)

    def __call__(self, *a, **k):
        raise Stop("called")


def run_scenario(sc: Scenario, world: dict, monkeypatch) -> tuple[int, str]:
    args = [a.format(out=world["out"], tmp=world["tmp"], tables=world["tables"])
            for a in sc.argv]
    with monkeypatch.context() as m:
        for stop in sc.stop:
            module, attr = stop.split(":")
            m.setattr(f"{module}.{attr}", _Stopper())
        try:
            p = run_cli(sc.prog, *args)
        except Stop:
            return 0, ""
    return p.returncode, p.stderr


def record(monkeypatch, seen: list) -> None:
    """Every path the layer opens, checks or writes, as (what, absolute path)."""
    from boardcore import files

    def spy(what, real, at=0):
        def call(*a, **k):
            seen.append((what, os.path.abspath(a[at])))
            return real(*a, **k)
        return call

    monkeypatch.setattr(files, "_open", spy("read", files._open))
    monkeypatch.setattr(files, "target", spy("write", files.target))
    monkeypatch.setattr(files, "lock_file", spy("write", files.lock_file))
    monkeypatch.setattr(files, "append", spy("write", files.append))


WALKED_ALREADY: set = set()  # (what, folder, suffix) an earlier command of the module walked


def walked(seen: list, root: Path) -> list[tuple[str, Path]]:
    """One path per (what, folder, suffix) under ``root`` that no command before walked
    (the output folder's index and docs: once), outside a temporary folder (its name is
    new each time)."""
    picked = {}
    for what, p in seen:
        path = Path(p)
        if root not in path.parents or any(part.endswith(".tmp") for part in path.parts):
            continue
        group = (what, path.parent, path.suffix)
        if group not in WALKED_ALREADY:
            picked.setdefault(group, (what, path))
    WALKED_ALREADY.update(picked)
    return sorted(picked.values())


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_file_a_command_touches_is_walked_against_hostile_targets(world, sc,
                                                                        monkeypatch):
    from boardcore import files

    seen: list = []
    record(monkeypatch, seen)
    normal = run_scenario(sc, world, monkeypatch)
    assert normal[0] in (0, 1), normal
    assert any(Path(p).is_relative_to(world["tmp"]) for _, p in seen), \
        f"{sc.name}: touched no file under the test's folder"
    targets = walked(seen, world["tmp"])
    victim = world["tmp"] / f"victim-{sc.name}.txt"
    failures = []
    for what, path in targets:
        bound = files.LINE if path.name == "LATEST" else files.DOC if path.suffix in (
            ".json", ".toml", ".html", ".md") else files.DATA
        saved = path.read_bytes() if path.is_file() else None
        for kind in COMMAND_READ if what == "read" else COMMAND_WRITE:
            victim.write_bytes(saved or b"keep me")
            clear(path)
            links = []
            if kind in ("planted", "read-only") and saved is not None:
                path.write_bytes(saved)
            if kind == "planted":
                links = plant(path, victim, 16)
            elif kind != "read-only":
                make_hostile(path, kind, victim, bound + 1)
            case = f"{sc.name} {what} {path.relative_to(world['tmp'])} {kind}"
            failures += _case(sc, world, monkeypatch, seen, path, kind, victim, links,
                              normal[0], case)
            for link in links:
                link.unlink(missing_ok=True)
            clear(path)
            if saved is not None:
                path.write_bytes(saved)
    assert failures == []


def _case(sc, world, monkeypatch, seen, path, kind, victim, links, normal, case) -> list:
    """The failures of one hostile case ([] when it went right)."""
    before, kept = snapshot(path), victim.read_bytes()
    seen.clear()
    try:
        with guard(15), read_only(path.parent) if kind == "read-only" else \
                contextlib.nullcontext():
            rc, err = run_scenario(sc, world, monkeypatch)
    except Hang as e:
        return [f"{case}: {e}"]
    out = []
    problem = _judge(sc, path, rc, err, normal)
    if problem:
        out.append(f"{case}: {problem}")
    if victim.read_bytes() != kept:
        out.append(f"{case}: the victim changed")
    after = snapshot(path)
    if kind not in ("planted", "read-only") and after != before and not (
            kind == "huge" and after and after[:3:2] == ("file", 1)):  # a page rewritten
        out.append(f"{case}: it was changed")
    if any(not link.is_symlink() for link in links):
        out.append(f"{case}: a planted link was moved")
    return out


def _judge(sc: Scenario, path: Path, rc: int, err: str, normal: int) -> str:
    """Why a hostile case went wrong ("" when it did not)."""
    if "Traceback" in err:
        return "a traceback: " + err.strip().splitlines()[-1]
    if rc == 2:
        lines = err.strip().splitlines()
        if len(lines) > sc.lines:
            return f"{len(lines)} lines: {err.strip()[:300]}"
        if path.name not in err and path.parent.name not in err:
            return f"the line does not name it: {err.strip()[:300]}"
        return ""
    if rc == normal:
        return ""  # went on without it (a listing, the index), or never touched it
    return f"exit {rc}: {err.strip()[:300]}"
