"""A1 AC-18: nothing in the generator packages (minegen/, tilegen/) draws randomness outside
their documented streams, and neither imports Dask (SPEC §1) or the audit (``pipeline``)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (ROOT / "minegen", ROOT / "tilegen")
FORBIDDEN = {
    "stdlib random": re.compile(r"^\s*(import|from)\s+random\b", re.M),
    "numpy random": re.compile(r"\b(np|numpy)\.random\b|default_rng|RandomState"),
    "os entropy": re.compile(r"\burandom\b|\bsecrets\b|\buuid\d?\b|SystemRandom"),
    "time-based seed": re.compile(r"seed\w*\s*=.*\btime\.(time|time_ns|perf_counter)\b"),
    "salted hash()": re.compile(r"(?<![\w.])hash\("),
}
DASK = re.compile(r"^\s*(import|from)\s+(dask|distributed)\b", re.M)
AUDIT = re.compile(r"^\s*(import|from)\s+pipeline\b", re.M)


def sources():
    files = []
    for package in PACKAGES:
        found = sorted(package.rglob("*.py"))
        assert len(found) >= 10, package
        files += found
    return files


def test_no_randomness_outside_the_stream():
    hits = []
    for path in sources():
        text = path.read_text()
        for name, rx in FORBIDDEN.items():
            for m in rx.finditer(text):
                line = text[: m.start()].count("\n") + 1
                hits.append(f"{path.relative_to(ROOT)}:{line}: {name}: {m.group(0)!r}")
    assert hits == []


def test_scan_patterns_do_catch_offenders():
    bad = "import random\nx = np.random.rand()\nseed = time.time()\ny = hash('a')\n"
    names = {name for name, rx in FORBIDDEN.items() if rx.search(bad)}
    assert names == {"stdlib random", "numpy random", "time-based seed", "salted hash()"}


def test_generator_never_imports_dask():
    assert [p.name for p in sources() if DASK.search(p.read_text())] == []


def test_generators_never_import_the_audit():
    assert [str(p.relative_to(ROOT)) for p in sources() if AUDIT.search(p.read_text())] == []
