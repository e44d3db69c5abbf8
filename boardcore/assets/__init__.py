"""The data the package ships: the default tables, the profiles, the JavaScript runtime and
the docs the pages cite, found through ``importlib.resources`` (never by walking up from a
source file), so a wheel installed anywhere finds them as a checkout does.

In the repository the four folders stay where people edit them (``tables/``, ``configs/``,
``runtime/``, ``docs/`` at the top); the entries here are links to them, which a wheel build
replaces by copies (``pyproject.toml``, ``[tool.setuptools.package-data]``).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

FOLDERS = ("tables", "configs", "runtime", "docs")


def path(*parts: str) -> Path:
    """A shipped file or folder as a real, resolved path (``path("tables", "tilematch")``)."""
    if not parts or parts[0] not in FOLDERS:
        raise ValueError(f"shipped data lives under one of {FOLDERS}; got {parts!r}")
    item = resources.files(__name__).joinpath(*parts)
    try:
        return Path(os.fspath(item)).resolve()
    except TypeError:  # a zipped install: its files have no path of their own
        raise RuntimeError("this package must be installed unzipped: its data files are "
                           "read from disk") from None
