"""The first-call compile scope changes numba's -O level and the GC only inside itself."""

import gc

import pytest
from numba.core import config

from boardcore._kernels import COMPILE_OPT, compiling


def test_scope_sets_and_restores_opt_and_gc():
    before = int(config.OPT)
    assert gc.isenabled()
    with compiling():
        assert int(config.OPT) == COMPILE_OPT
        assert not gc.isenabled()
    assert int(config.OPT) == before and gc.isenabled()


def test_scope_restores_after_an_error():
    before = int(config.OPT)
    with pytest.raises(RuntimeError):
        with compiling():
            raise RuntimeError("compile failed")
    assert int(config.OPT) == before and gc.isenabled()


def test_scope_keeps_a_disabled_gc_disabled():
    gc.disable()
    try:
        with compiling():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


# ------------------------------------------------ a cold machine's compile, in parts

def _mark(folder: str, name: str, seconds: float = 0.6) -> None:
    """A stand-in compile step: its start and end times in ``folder/name``."""
    import json
    import time
    from pathlib import Path

    t0 = time.time()
    time.sleep(seconds)
    Path(folder, name).write_text(json.dumps([t0, time.time()]))


class PartedGenerator:
    """A generator whose compile comes in two parts and a warm-up (each a stand-in)."""

    compile_seconds = 1

    def __init__(self, folder: str):
        self.folder = folder

    def compile_parts(self) -> tuple:
        import functools

        return tuple(functools.partial(_mark, self.folder, f"part{i}") for i in (1, 2))

    def warm(self) -> None:
        _mark(self.folder, "warm", 0.1)


def test_compile_parts_run_at_once_then_the_warm_up(tmp_path, monkeypatch):
    """CompileOnce runs the parts in processes of their own at the same time (two CPUs),
    then ``warm`` once they all ended; the announcement gives the declared seconds."""
    import json
    import os

    from pipeline.engine.run import CompileOnce

    here = os.path.dirname(__file__)
    monkeypatch.setenv("PYTHONPATH", here + os.pathsep + os.environ.get("PYTHONPATH", ""))
    said = []
    job = CompileOnce(PartedGenerator(str(tmp_path)), said.append)
    job.wait()
    marks = {p.name: json.loads(p.read_text()) for p in tmp_path.iterdir()}
    assert sorted(marks) == ["part1", "part2", "warm"], job.failed
    (a0, a1), (b0, b1), (w0, _) = marks["part1"], marks["part2"], marks["warm"]
    if (os.cpu_count() or 1) >= 2:
        assert a0 < b1 and b0 < a1  # the two parts overlapped
    assert w0 >= max(a1, b1)  # the warm-up after both
    assert said == ["compiling kernels once for this machine (about 1 s on a 2-core "
                    "machine; later runs load them)"]


class BrokenPart(PartedGenerator):
    def compile_parts(self) -> tuple:
        import functools

        return (functools.partial(int, "not a number"),)


def test_a_failed_compile_part_is_said_in_one_line_and_not_fatal(tmp_path, monkeypatch):
    import os

    from pipeline.engine.run import CompileOnce

    monkeypatch.setenv("PYTHONPATH", os.path.dirname(__file__) + os.pathsep
                       + os.environ.get("PYTHONPATH", ""))
    said = []
    CompileOnce(BrokenPart(str(tmp_path)), said.append).wait()
    assert said[-1].startswith("compiling once failed; each worker compiles instead: ")
    assert "invalid literal for int()" in said[-1] and "\n" not in said[-1]
    assert (tmp_path / "warm").is_file()  # the warm-up still ran


def test_a_second_checkout_loads_the_kernels_the_first_compiled(tmp_path):
    """The kernel cache is keyed by the kernels' sources, not their path: the packages
    copied to another folder (as a second clone holds them) load the compiled kernels."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from boardcore import kernel_cache
    from minegen import bench

    repo = Path(__file__).resolve().parent.parent
    bench.run(12, 12, 0.15, boards=10, repeats=1)  # this checkout: compiled or loaded
    clone = tmp_path / "clone"
    for pkg in ("boardcore", "minegen", "tilegen", "pipeline"):
        shutil.copytree(repo / pkg, clone / pkg, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import json, boardcore.kernel_cache as k, minegen.bench as b; "
            "r = b.run(12, 12, 0.15, boards=10, repeats=1); "
            "print(json.dumps([k.__file__, str(k.cache_dir()), r['cache_hit']]))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(clone)}, timeout=300)
    where, cache, hit = json.loads(p.stdout.strip().splitlines()[-1])
    assert Path(where).is_relative_to(clone)  # the copy's code ran
    assert cache == str(kernel_cache.cache_dir()) and hit is True


def test_the_compile_halves_take_the_entry_kernels_argument_types():
    """``compile_part`` compiles tile-match's two halves with the very argument types the
    entry kernel is called with (a type that differed would make the entry compile the
    callees again, decision 207): one signature each, equal to the entry's."""
    from tilegen import batch
    from tilegen._kernels import attempt

    batch.warm_up()  # the entry, compiled or loaded
    for part in batch.PARTS:
        batch.compile_part(part)  # loaded from the cache on a warm machine
    (entry,) = attempt.generate_tile_boards.signatures
    assert attempt.loop_types.signatures == [entry]
    assert attempt.closing_types.signatures == [entry]
    with pytest.raises(KeyError):
        batch.compile_part("everything")


def test_where_the_kernel_cache_lives(monkeypatch, tmp_path):
    """$MINEGEN_KERNEL_CACHE, else $XDG_CACHE_HOME/minegen/kernels, else ~/.cache/...; a
    file outside the kernel packages is not the locator's (numba's own rules apply)."""
    from boardcore import kernel_cache as kc

    monkeypatch.setenv("MINEGEN_KERNEL_CACHE", str(tmp_path / "shared"))
    assert kc.cache_dir() == tmp_path / "shared" / f"kernels-{kc.sources_digest()}"
    monkeypatch.delenv("MINEGEN_KERNEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kc.base_dir() == tmp_path / "xdg" / "minegen" / "kernels"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert kc.base_dir() == tmp_path / "home" / ".cache" / "minegen" / "kernels"
    assert kc.env_name() == "MINEGEN_KERNEL_CACHE" and kc.project() == "minegen"
    assert kc._owner(__file__) is None and kc._owner("\0bad") is None
    assert kc._owner(str(kc.CORE / "_kernels" / "pcg.py")) == "boardcore"
    kc.install_locator()  # a second install adds nothing
    from numba.core import caching
    assert sum(getattr(c, "_content_digest", False)
               for c in caching.CacheImpl._locator_classes) == 1


def test_shipped_data_is_named_by_its_folder():
    from boardcore import assets

    assert (assets.path("tables") / "board_gen.toml").is_file()
    assert assets.path("tables", "tilematch").name == "tilematch"
    for bad in ((), ("tests",), ("../tables",)):
        with pytest.raises(ValueError, match="shipped data lives under"):
            assets.path(*bad)


@pytest.mark.parametrize("name", ["minegen", "tilegen"])
def test_the_announced_compile_time_is_the_measured_one(name):
    """What a cold audit announces (``compile_seconds``) is the median "as the audit does
    it" of docs/performance.md's First compile section, rounded (the page shows it to a
    tenth): benchmarks/compile.py --doc writes both, so neither is typed by hand (the
    house, item 6)."""
    import re
    from pathlib import Path

    from pipeline.generator import load_generator

    page = (Path(__file__).resolve().parent.parent / "docs" / "performance.md").read_text()
    section = page[page.index("<!-- begin compile -->"):page.index("<!-- end compile -->")]
    row = re.search(rf"^\| {name} \| [^|]+ \| ([0-9.]+) s .*\| (\d+) s \|$", section, re.M)
    assert row, f"no {name} row in docs/performance.md's First compile section"
    measured, announced_there = float(row.group(1)), int(row.group(2))
    announced = load_generator(name).compile_seconds
    assert announced == announced_there and abs(announced - measured) <= 0.55, (announced,
                                                                                measured)
