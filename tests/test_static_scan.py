"""A1 AC-18: nothing in the generator packages (boardcore/, minegen/, tilegen/) draws
randomness outside the documented streams. (Which package may import which: test_house.)"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (ROOT / "boardcore", ROOT / "minegen", ROOT / "tilegen")
FORBIDDEN = {
    "stdlib random": re.compile(r"^\s*(import|from)\s+random\b", re.M),
    "numpy random": re.compile(r"\b(np|numpy)\.random\b|default_rng|RandomState"),
    "os entropy": re.compile(r"\burandom\b|\bsecrets\b|\buuid\d?\b|SystemRandom"),
    "time-based seed": re.compile(r"seed\w*\s*=.*\btime\.(time|time_ns|perf_counter)\b"),
    "salted hash()": re.compile(r"(?<![\w.])hash\("),
}


def sources():
    files = []
    for package in PACKAGES:
        found = sorted(package.rglob("*.py"))
        assert len(found) >= 8, package
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
