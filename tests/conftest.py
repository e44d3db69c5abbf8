"""Shared fixtures. Hypothesis is derandomized everywhere: tests see fixed examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("minegen", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("minegen")

FIXTURES = Path(__file__).parent / "fixtures" / "tables"
REPO = Path(__file__).resolve().parent.parent
_REPO_OUTPUTS = ("reports", "tables")  # a test writes inside its own tmp_path, never here


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(REPO)) for d in _REPO_OUTPUTS for p in (REPO / d).rglob("*")}


def pytest_sessionstart(session) -> None:
    session.config._repo_tree = _tree(REPO)


def pytest_sessionfinish(session, exitstatus) -> None:
    """A test that wrote into the repository's reports/ or tables/ fails the session."""
    new = sorted(_tree(REPO) - getattr(session.config, "_repo_tree", set()))
    if new:
        print(f"\nthe tests wrote into the repository: {new[:5]}"
              + (f" and {len(new) - 5} more" if len(new) > 5 else ""))
        session.exitstatus = 1


@pytest.fixture(scope="session")
def default_tables():
    from minegen.table_loader import load_tables

    return load_tables()


@pytest.fixture(scope="session")
def fixture_tables():
    """fixture_tables("name") -> Tables of tests/fixtures/tables/name."""
    from minegen.table_loader import load_tables

    cache = {}

    def get(name: str):
        if name not in cache:
            cache[name] = load_tables(FIXTURES / name)
        return cache[name]

    return get


CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]  # this machine's network is closed: Chromium stays quiet


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by the pinned Playwright (installed from the
    package registry when missing; the tests skip only when it cannot be reached)."""
    from slurm_local import PackagesUnavailable, ensure_packages

    try:
        ensure_packages(packages=("chromium",), needed=("chromium",))
    except PackagesUnavailable as e:
        pytest.skip(f"Debian's chromium is missing and cannot be installed here: {e}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def node() -> str:
    """Node.js for node's own test runner (Debian's nodejs when missing, as ``browser``)."""
    import shutil

    from slurm_local import PackagesUnavailable, ensure_packages

    try:
        ensure_packages(packages=("nodejs",), needed=("node",))
    except PackagesUnavailable as e:
        pytest.skip(f"node is missing and cannot be installed here: {e}")
    return shutil.which("node") or "/usr/bin/node"
