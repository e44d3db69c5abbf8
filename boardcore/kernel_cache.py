"""Where the compiled kernels live, and how numba finds them there.

One cache per machine, not per checkout. numba's own cache is keyed by the kernel file's
absolute path and modification time, so every fresh clone (CI's included) compiled every
kernel again. Here the cache is keyed by *content*: a folder named by a digest of every
kernel source (this package's ``_kernels`` and, for each generator package registered under
the entry-point group ``boardcore.kernels`` in ``pyproject.toml``, its ``_kernels/*.py`` and
``codes.py``), inside a per-user base folder:

1. ``$<PROJECT>_KERNEL_CACHE`` when set (``MINEGEN_KERNEL_CACHE``; on a cluster, set in
   the environment the workers start with, one folder on a shared filesystem serves every
   node);
2. else ``$XDG_CACHE_HOME/<project>/kernels``, else ``~/.cache/<project>/kernels``.

``<project>`` is the distribution that registers the kernel packages (``pyproject.toml``'s
name), so the core names no game.

The digest covers every source because numba's cache checks only the file of the function
it compiles, not the jitted functions it calls: an edit to a callee must not leave a stale
caller. Any edit selects a fresh folder, whichever checkout it was made in; two checkouts of
the same kernels share one.

``install_locator()`` puts :class:`DigestLocator` first in numba's list of cache locators,
for the kernel files of the registered packages only (every other numba user in the process
keeps numba's own behaviour). It must run before the first kernel is decorated;
``boardcore._kernels`` calls it on import, and each generator's ``_kernels`` imports that
first.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from importlib import metadata
from pathlib import Path

from . import files

GROUP = "boardcore.kernels"
CORE = Path(__file__).resolve().parent


def registered() -> list[tuple[str, Path]]:
    """(package name, folder) of every registered kernel package, sorted by name; found
    without importing them (``find_spec`` of a top-level package only locates it)."""
    out = []
    for name in sorted({ep.value for ep in metadata.entry_points(group=GROUP)}):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            out.append((name, Path(next(iter(spec.submodule_search_locations))).resolve()))
    return out


@functools.cache
def project() -> str:
    """The distribution that registers the kernel packages (the cache's folder name)."""
    names = sorted({ep.dist.name for ep in metadata.entry_points(group=GROUP) if ep.dist})
    return names[0] if names else CORE.name


def env_name() -> str:
    """The environment variable that moves the cache (``MINEGEN_KERNEL_CACHE``)."""
    return f"{project().upper()}_KERNEL_CACHE"


@functools.cache
def kernel_packages() -> tuple[tuple[str, Path], ...]:
    """boardcore and every registered package: (name, folder); read once per process (the
    locator asks for every kernel decorated, and each scan reads every installed
    distribution's entry points)."""
    return ((CORE.name, CORE), *[(n, p) for n, p in registered() if n != CORE.name])


@functools.cache
def sources_digest() -> str:
    h = hashlib.sha256()
    for pkg, root in kernel_packages():
        for path in sorted((root / "_kernels").glob("*.py")) + [root / "codes.py"]:
            if path.is_file():
                h.update(f"{pkg}/{path.name}".encode())
                h.update(files.read_bytes(path, follow=True))
    return h.hexdigest()[:16]


def base_dir() -> Path:
    """The per-user folder that holds one ``kernels-<digest>`` folder per kernel version."""
    if os.environ.get(env_name()):
        return Path(os.environ[env_name()]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / project() / "kernels"


def cache_dir() -> Path:
    return base_dir() / f"kernels-{sources_digest()}"


def is_warm(entry: str) -> bool:
    """True when this machine already holds the compiled entry kernel ``entry`` (a glob of
    its index file, e.g. ``attempt.generate_boards-*.nbi``): a cache load, not a compile,
    is what the next first call costs."""
    d = cache_dir()
    return d.is_dir() and any(d.rglob(entry))


def _owner(py_file: str) -> str | None:
    """The registered package whose ``_kernels`` folder holds ``py_file``, else None."""
    try:
        folder = Path(py_file).resolve().parent
    except (OSError, ValueError):
        return None
    for name, root in kernel_packages():
        if folder == root / "_kernels":
            return name
    return None


def install_locator() -> None:
    """Make numba cache the registered packages' kernels under :func:`cache_dir` (once)."""
    from numba.core import caching

    if any(getattr(c, "_content_digest", False) for c in caching.CacheImpl._locator_classes):
        return

    class DigestLocator(caching._CacheLocator):
        """A kernel file's cache: ``cache_dir()/<package>``, valid while the digest of every
        kernel source is unchanged (the digest names the folder, so the source stamp numba
        compares is the digest itself, not the file's path or mtime)."""

        _content_digest = True

        def __init__(self, py_func, package: str):
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(cache_dir() / package)

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return sources_digest()

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            package = _owner(py_file)
            if package is None:
                return None
            self = cls(py_func, package)
            try:
                self.ensure_cache_path()
            except OSError:
                return None  # an unwritable cache: numba's next locator (or none) decides
            return self

    caching.CacheImpl._locator_classes.insert(0, DigestLocator)
