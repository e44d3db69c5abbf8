"""Every file a command writes at a path the user gave goes through one writer
(``boardcore.output``; decision 213; issue 29 items 1 and 4): a regular file or a new name
only, whole or not at all; anything else, and any place the system will not write, is
exit 2 in one line with the target left as it was."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest
from cli_harness import run_cli

# (program, arguments before the target, the option that names it, what it writes)
FILE_WRITERS = [
    ("minegen", ["generate", "1", "0"], "--play", "a play page"),
    ("tilegen", ["generate", "beijing", "1"], "--play", "a play page"),
    ("tilegen", ["export"], "--out", "a board pack"),
    ("tilegen", ["export-tables"], "--out", "the rows document"),
]
FOLDER_WRITERS = [
    ("tilegen", ["telemetry", "synth", "--seeds", "1", "--sessions", "1", "--days", "1",
                 "--anomalies", "0"], "--out"),
    ("minegen", ["reconcile", "--run", "/nonexistent-run", "--telemetry", "x.csv"], "--out"),
]
WRITER_IDS = [f"{w[0]} {w[1][0]} {w[2]}" for w in FILE_WRITERS]
# the audit checks its --junit-xml target before the run (the file is written after it)
CHECKED_FIRST = [*FILE_WRITERS,
                 ("minegen", ["audit", "--rows", "1:0", "--n", "4", "--out", "never-made"],
                  "--junit-xml", "a JUnit file"),
                 ("minegen", ["reconcile", "--telemetry", "x.csv", "--run", "/nonexistent",
                              "--out", "never-made"], "--junit-xml", "a JUnit file")]
CHECKED_IDS = [f"{w[0]} {w[1][0]} {w[2]}" for w in CHECKED_FIRST]


def _targets(tmp: Path) -> dict[str, tuple[Path, str]]:
    """Things that are not a regular file, made inside ``tmp`` (root makes the device)."""
    tmp.mkdir()
    elsewhere = tmp / "elsewhere.txt"
    elsewhere.write_text("keep me")
    made = {}
    dev = tmp / "null-device"
    os.mknod(dev, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    made["device"] = (dev, "is a character device")
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    made["fifo"] = (fifo, "is a FIFO")
    link = tmp / "link.html"
    link.symlink_to(elsewhere)
    made["symlink"] = (link, "is a symbolic link")
    folder = tmp / "a-folder"
    folder.mkdir()
    made["folder"] = (folder, "is a folder")
    sock = tmp / "sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    s.close()
    made["socket"] = (sock, "is a socket")
    return made


def _state(p: Path):
    st = p.lstat()
    return st.st_mode, st.st_ino, st.st_size


@pytest.mark.parametrize("prog, head, option, what", CHECKED_FIRST, ids=CHECKED_IDS)
def test_a_target_that_is_not_a_regular_file_is_refused_and_untouched(tmp_path, prog, head,
                                                                       option, what,
                                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    targets = _targets(tmp_path / "t")
    before = {p: _state(p) for p, _ in targets.values()}
    listing = sorted(os.listdir(tmp_path / "t"))
    for name, (target, why) in targets.items():
        p = run_cli(prog, *head, option, target)
        assert p.returncode == 2, (name, p.stdout, p.stderr)
        line = p.stderr.strip()
        assert "\n" not in line and why in line and option in line, (name, line)
        assert "Traceback" not in line and p.stdout == ""
    assert {p: _state(p) for p in before} == before  # same kind, same inode, same size
    assert sorted(os.listdir(tmp_path / "t")) == listing  # no temporary file left
    assert (tmp_path / "t" / "elsewhere.txt").read_text() == "keep me"
    assert not (tmp_path / "never-made").exists()  # refused before any work


@pytest.mark.parametrize("prog, head, option, what", FILE_WRITERS, ids=WRITER_IDS)
def test_a_regular_file_is_replaced_whole_and_a_new_name_made(tmp_path, prog, head, option,
                                                              what):
    old = tmp_path / "old.out"
    old.write_text("old")
    for target in (old, tmp_path / "new.out"):
        p = run_cli(prog, *head, option, target)
        assert p.returncode == 0, p.stderr
        assert target.is_file() and not target.is_symlink() and target.stat().st_size > 1000
    assert sorted(x.name for x in tmp_path.iterdir()) == ["new.out", "old.out"]


@pytest.fixture
def places(tmp_path):
    """Places no file can be written: a read-only and a full file system (tmpfs, mounted
    by root for the test and unmounted after), /proc, and a file where a folder must be."""
    full, ro = tmp_path / "full", tmp_path / "ro"
    for m, opts in ((full, "size=16k"), (ro, "ro,size=16k")):
        m.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(m)], check=True)
    (full / "filler").write_bytes(b"\0" * 12 * 1024)  # what is left cannot hold the output
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    try:
        yield {"read-only": (ro, "read-only file system"),
               "full": (full, "no space left"),
               "proc": (Path("/proc"), "system tree"),
               "under a file": (a_file, "")}
    finally:
        for m in (full, ro):
            subprocess.run(["umount", str(m)], check=False)


@pytest.mark.parametrize("prog, head, option, what", CHECKED_FIRST, ids=CHECKED_IDS)
def test_an_unusable_place_for_a_file_is_exit_2_in_one_line(places, prog, head, option, what,
                                                            monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for name, (where, why) in places.items():
        if name == "full" and option == "--junit-xml":
            continue  # known only when the file is written, after a whole audit
        before = sorted(os.listdir(where)) if where.is_dir() and name != "proc" else None
        p = run_cli(prog, *head, option, where / "x.out")
        assert p.returncode == 2, (name, p.stdout, p.stderr)
        line = p.stderr.strip()
        assert "\n" not in line and "Traceback" not in line and why in line, (name, line)
        if before is not None:
            assert sorted(os.listdir(where)) == before, name


@pytest.mark.parametrize("prog, head, option", FOLDER_WRITERS,
                         ids=[f"{w[0]} {w[1][0]}" for w in FOLDER_WRITERS])
def test_an_unusable_output_folder_is_exit_2_in_one_line(places, tmp_path, prog, head, option):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases = {**{k: (w / "out", why) for k, (w, why) in places.items()},
             "a file": (places["under a file"][0], "it is a file"),
             "a fifo": (fifo, "it is a FIFO (named pipe), not a folder")}
    for name, (where, why) in cases.items():
        p = run_cli(prog, *head, option, where)
        assert p.returncode == 2, (name, p.stdout, p.stderr)
        line = p.stderr.strip()
        assert "\n" not in line and "Traceback" not in line and why in line, (name, line)
        assert option in line, (name, line)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert not list(places["full"][0].glob("out*"))
    assert not (places["read-only"][0] / "out").exists()
