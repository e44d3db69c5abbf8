"""The package installs like a library: a wheel built from the tracked files, installed into
a fresh virtual environment outside the checkout, runs the audit and a board there, finding
its tables, profiles, runtime and docs through ``importlib.resources`` (boardcore.assets).

The third-party packages come from this checkout's environment (the same pins), offered to
the fresh one through a folder of links that leaves out this project's own install; the
project itself comes only from the wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from cli_harness import audit_exit

REPO = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def tracked_copy(dest: Path) -> Path:
    """The files git tracks, copied (links kept as links) into ``dest``."""
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True,
                         check=True).stdout.decode().split("\0")
    for rel in filter(None, out):
        src, dst = REPO / rel, dest / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        elif src.is_file():
            shutil.copy2(src, dst)
    return dest


def third_party(dest: Path) -> Path:
    """A folder of links to this environment's installed packages, this project's excluded."""
    site = Path(sysconfig.get_paths()["purelib"])
    own = ("minegen", "__editable__", "_minegen", "boardcore", "pipeline", "tilegen")
    dest.mkdir()
    for entry in site.iterdir():
        if not entry.name.startswith(own) and not entry.name.endswith(".pth"):
            (dest / entry.name).symlink_to(entry)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tracked_copy(tmp / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp / "dist"), str(src)], check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp / "dist").glob("minegen-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, timeout=600)
    purelib = subprocess.run([venv / "bin" / "python", "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "_deps.pth").write_text(str(third_party(tmp / "deps")) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv, env, Path(purelib), tmp


def run(installed, *cmd: str) -> subprocess.CompletedProcess:
    venv, env, _, tmp = installed
    return subprocess.run([str(venv / "bin" / cmd[0]), *cmd[1:]], capture_output=True,
                          text=True, env=env, cwd=tmp, timeout=600)


def test_the_wheel_runs_the_audit_and_a_board_outside_the_checkout(installed):
    venv, env, purelib, tmp = installed
    where = subprocess.run([venv / "bin" / "python", "-c",
                            "import minegen, boardcore.assets as a; print(minegen.__file__); "
                            "print(a.path('tables'))"],
                           capture_output=True, text=True, env=env, cwd=tmp, check=True)
    module, tables = where.stdout.split()
    assert Path(module).is_relative_to(purelib) and Path(tables).is_relative_to(purelib)
    assert not Path(module).is_relative_to(REPO)

    audit = run(installed, "minegen", "audit", "--n", "8", "--workers", "1", "--out",
                str(tmp / "out"))
    audit_exit(audit, tmp / "out")  # 1: the default tables fail a hard line
    assert "Traceback" not in audit.stderr
    (manifest,) = (tmp / "out").rglob("manifest.json")
    m = json.loads(manifest.read_text())
    assert Path(m["table_root"]).is_relative_to(purelib)  # the shipped tables, not the checkout's
    html = next((tmp / "out").rglob("report.html")).read_text()
    assert str(REPO) not in html  # its doc links point at the installed docs

    board = run(installed, "tilegen", "generate", "beijing", "1", "--format", "json")
    assert board.returncode == 0, board.stderr
    assert json.loads(board.stdout)["cityId"] == "beijing"
    validate = run(installed, "minegen", "validate")
    assert validate.returncode == 0 and "tables OK" in validate.stdout, validate.stderr
