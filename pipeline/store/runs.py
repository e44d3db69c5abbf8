"""Run folders: where a run lives, its id, ``LATEST``, the manifest's common facts and
reading a finished run back (``diff`` and tests).

Layout: ``<out>/<generator subdir>/metric_v<k>/<run_id>/`` (the subdir is "" for the
default generator). A finished run folder holds at least ``manifest.json``,
``aggregates.parquet`` and ``assertions.json``; an unfinished one is
``.partial-<run_id>/`` beside it (``store.shards``).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import polars as pl

from boardcore import files
from boardcore.errors import InputError

from . import atomic

PACKAGES = ("numpy", "numba", "polars", "pyarrow", "pandera", "dask", "distributed",
            "dask-jobqueue")
PARTIAL_PREFIX = ".partial-"
LATEST = "LATEST"
VERSION_DIR = re.compile(r"^metric_v(\d+)$")
REPO = Path(__file__).resolve().parents[2]


def version_dir(out: str | os.PathLike, subdir: str, metric_version: int) -> Path:
    return Path(out) / subdir / f"metric_v{metric_version}"


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def run_id_base(table_hash: str, n: int, now: datetime) -> str:
    """``<UTC second>-<table hash>-n<N>``; ``store.shards.ShardStore.claim`` adds ``-2``,
    ``-3`` ... when another run (even one started in the same second) holds it."""
    return f"{now.strftime('%Y%m%dT%H%M%SZ')}-{table_hash[:8]}-n{n}"


def set_latest(vdir: Path, run_id: str) -> None:
    atomic.write_text(vdir / LATEST, run_id + "\n")  # a unique temporary name per writer


_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def latest(vdir: Path) -> str | None:
    """The run id LATEST names; None when there is none, or when LATEST holds anything but
    one run id (damaged bytes, a path): it is never followed outside ``vdir``."""
    try:  # a regular file of one line, never through a link (a FIFO never blocks)
        name = files.read_text(vdir / LATEST, files.LINE).strip()
    except (OSError, UnicodeDecodeError, files.Refused):
        return None
    return name if _RUN_NAME.fullmatch(name) else None


def advance_latest(vdir: Path, run_id: str, created_utc: str, root: str | None = None,
                   default_root: str | None = None) -> tuple[str, str] | None:
    """Point ``LATEST`` at ``run_id`` when that run is newer than the one it names and of
    its table root; decided and written under a lock on the folder ``vdir`` itself (no lock
    file left behind), so of two audits finishing into one --out the newer stays LATEST
    whichever finishes last. ``root``: the run's table root. LATEST follows one root
    (decision 273): a run of another root leaves it, unless it is of ``default_root`` (the
    generator's own), which takes LATEST over. Returns (run id, table root) of the run
    LATEST keeps naming because it is of another root; else None."""
    import fcntl
    import os

    fd = os.open(vdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held for a read and a rename: microseconds
        current = latest(vdir)
        theirs = str(_manifest_of(vdir, current).get("table_root") or "")
        if root and theirs and not same_root(theirs, root):
            if not (default_root and same_root(root, default_root)):
                return str(current), theirs  # another root's lineage: not this run's
        elif not newer_than_latest(vdir, created_utc, run_id):
            return None
        set_latest(vdir, run_id)
        return None
    finally:
        os.close(fd)  # closing releases the lock


def same_root(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _manifest_of(vdir: Path, run_id: str | None) -> dict:
    try:
        got = files.read_json(vdir / str(run_id) / "manifest.json")
    except (OSError, ValueError, files.Refused):
        return {}
    return got if isinstance(got, dict) else {}


def newer_than_latest(vdir: Path, created_utc: str, run_id: str = "") -> bool:
    """True when run ``run_id`` made at ``created_utc`` comes after LATEST's (or LATEST names
    none): by second, then by id in claim order, whoever finishes last (decision 291)."""
    theirs = _manifest_of(vdir, current := latest(vdir)).get("created_utc")
    return not isinstance(theirs, str) or (created_utc, atomic.claim_order(run_id)) >= (
        theirs, atomic.claim_order(str(current)))


def to_json(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n"


def to_json_rows(obj: dict) -> str:
    """``obj`` (a dict) as JSON whose top-level lists hold one item a line: the same
    document as ``to_json`` to a reader, written by the C encoder (``indent`` is not:
    assertions.json's thousands of results took a tenth of a second), one result a line
    for grep."""
    def one(v) -> str:
        return json.dumps(v, ensure_ascii=False, default=str)

    parts = []
    for k, v in obj.items():
        if isinstance(v, list) and v:
            value = "[\n" + ",\n".join("    " + one(x) for x in v) + "\n  ]"
        else:
            value = json.dumps(v, indent=2, ensure_ascii=False, default=str
                               ).replace("\n", "\n  ")
        parts.append(f"  {one(k)}: {value}")
    return "{\n" + ",\n".join(parts) + "\n}\n" if parts else "{}\n"


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def base_manifest(gen, run_id: str, created: datetime, catalog, n: int,
                  seeds_per_task: int | None, keys: list[tuple]) -> dict:
    """The facts every run of any generator records (SPEC §9 manifest)."""
    from importlib.metadata import version

    return {
        "run_id": run_id,
        "created_utc": created.isoformat(timespec="seconds"),
        "generator": gen.name,
        "code_version": version("minegen"),
        "generator_version": gen.generator_version,
        "metric_version": gen.metric_version,
        "record_schema_version": gen.record_schema_version,
        "git_commit": git_commit(),
        "table_root": str(catalog.root),
        "table_hash": catalog.content_hash,
        "n": n,
        "key_fields": list(gen.key_fields),
        "rows": [list(k) for k in keys],
        "sigma_formula": gen.seed_rule,
        "seeds_per_task": seeds_per_task,
        "packages": package_versions(),
    }


# ------------------------------------------------------------------------ reading back

@dataclass(frozen=True)
class Run:
    """One finished run as read back from its folder."""

    path: Path
    manifest: dict
    key_fields: tuple[str, ...]
    rows: dict[tuple, dict]  # key -> aggregates row
    results: dict[tuple, dict[str, dict]]  # key -> line -> result dict
    notes: tuple[str, ...] = ()  # inconsistencies inside the folder, said loudly

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id") or self.path.name)

    @property
    def metric_version(self):
        return self.manifest.get("metric_version")


def resolve_run(ref: str, out: str | os.PathLike, subdir: str | None = None) -> Path:
    """A run folder path (a directory with manifest.json), ``LATEST``, or a run id (or a
    unique prefix of one) looked up under ``<out>`` (``metric_v*/`` or ``*/metric_v*/``).
    ``subdir``: the generator's report folder (``Generator.report_subdir``): ``LATEST`` is
    that generator's latest run, and an id found under several generators is read as that
    generator's. Unknown or ambiguous -> InputError saying where it looked."""
    if not str(out).strip():
        raise InputError("--out is empty: name the folder the runs were written to")
    p = Path(ref)
    if p.is_dir():
        if (p / "manifest.json").is_file():
            return p
        raise InputError(f"{ref} is a folder but not an audit run folder: it has no "
                           "manifest.json")
    root = Path(out)
    named = bool(ref) and ref not in (".", "..") and "/" not in ref and os.sep not in ref
    found, scope = _lookup(ref, root, subdir) if named else ([], [])
    if len(found) > 1:
        raise InputError(f"run {ref} is ambiguous: it names "
                           f"{', '.join(str(f) for f in found)}; pass the run folder "
                           "path instead")
    if not found:
        raise _no_run(ref, p, root, subdir, scope)
    return found[0]


def _lookup(ref: str, root: Path, subdir: str | None) -> tuple[list[Path], list[Path]]:
    """The run folders a run id, a unique prefix or LATEST names under ``root`` -> (found,
    the version folders LATEST is read in: the generator's own, or all)."""
    vdirs = sorted(d for d in [*root.glob("metric_v*"), *root.glob("*/metric_v*")]
                   if VERSION_DIR.match(d.name) and d.is_dir())
    own = [d for d in vdirs if subdir is not None and d.parent == root / subdir]
    scope = own if subdir is not None else vdirs
    if ref == LATEST:
        return [d / str(latest(d)) for d in scope
                if latest(d) and (d / str(latest(d)) / "manifest.json").is_file()], scope
    found = [d / ref for d in vdirs if (d / ref / "manifest.json").is_file()]
    if not found:  # a unique prefix of a run id
        found = [r for d in vdirs for r in sorted(d.glob(f"{glob.escape(ref)}*"))
                 if (r / "manifest.json").is_file()]
    if len(found) > 1 and any(f.parent in own for f in found):
        found = [f for f in found if f.parent in own]
    return found, scope


def _no_run(ref: str, p: Path, root: Path, subdir: str | None, scope: list) -> InputError:
    """Why ``ref`` names no run, in one line: a path that is not a folder, a damaged
    LATEST, or where it was looked for."""
    if "/" in ref or os.sep in ref:  # a path: looked up as given, never under --out
        what = "is not a folder" if p.exists() else "does not exist"
        return InputError(f"no audit run {ref!r}: {ref} {what} (give a run folder, a run "
                          "id, or LATEST)")
    damaged = [f"{d / LATEST} {why}" for d in scope if (why := latest_problem(d))] \
        if ref == LATEST else []
    if damaged:
        return InputError(f"no audit run 'LATEST': {'; '.join(damaged)} (give the run "
                          "folder path or run id; the next full audit rewrites it)")
    where = (f"no {root / subdir}/metric_v*/LATEST names a finished run"
             if subdir is not None and ref == LATEST
             else f"no {root}/metric_v*/{ref}/manifest.json exists")
    return InputError(f"no audit run {ref!r}: it is not a run folder (a directory with "
                      f"manifest.json) and {where} (give the run folder path, or the "
                      "--out it was written to)")


def latest_problem(vdir: Path) -> str:
    """Why the LATEST file in ``vdir`` names no run ("" when there is none, or it names
    a finished run): said as such, never as "missing"."""
    path = vdir / LATEST
    try:
        raw = files.read_bytes(path, files.LINE)
    except FileNotFoundError:
        return ""
    except OSError as e:
        return f"is unreadable ({e.strerror})"
    except files.Refused:
        st = os.lstat(path)
        return (f"is {files.kind(st.st_mode)}, not a regular file (never read)"
                if not os.path.isfile(path) or os.path.islink(path) else
                f"is {files.size_text(st.st_size)}, not one run id (never read)")
    if raw.startswith(b"\xef\xbb\xbf"):
        return "starts with a byte-order mark (save it as UTF-8 without BOM)"
    try:
        name = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    if not name:
        return "is empty"
    if not _RUN_NAME.fullmatch(name):
        return f"holds {name[:40]!r}, not a run id"
    if not (vdir / name / "manifest.json").is_file():
        return f"names run {name}, which is not a finished run folder here"
    return ""


def read_json(path: Path) -> dict:
    try:
        data = files.read_json(path)  # a regular file, bounded, never through a link
    except FileNotFoundError:
        raise InputError(f"{path} is missing: not a complete audit run folder") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path} is not readable JSON: {e}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} is not a JSON object")
    return data


def load_run(path: str | os.PathLike, default_key_fields: tuple[str, ...] = ()) -> Run:
    """Read manifest.json, aggregates.parquet and assertions.json of one run folder."""
    path = Path(path)
    manifest = read_json(path / "manifest.json")
    if "metric_version" not in manifest:
        raise InputError(f"{path / 'manifest.json'} has no metric_version: cannot tell "
                           "which metric definitions its numbers use")
    key_fields = tuple(manifest.get("key_fields") or default_key_fields)
    agg_path = path / "aggregates.parquet"
    try:
        agg = pl.read_parquet(files.checked(agg_path))
    except FileNotFoundError:
        raise InputError(f"{agg_path} is missing: not a complete audit run folder") from None
    except files.Refused:
        raise
    except Exception as e:  # polars raises several types for a damaged file
        raise InputError(f"{agg_path} is not a readable Parquet file: {e}") from None
    missing = [c for c in key_fields if c not in agg.columns]
    if missing or not key_fields:
        raise InputError(f"{agg_path} has no key column(s) {missing or '(none named)'}: "
                           "not per-row aggregates")
    rows: dict[tuple, dict] = {}
    for row in agg.to_dicts():
        key = tuple(row[k] for k in key_fields)
        if key in rows:
            raise InputError(f"{agg_path} lists row {key} twice")
        rows[key] = row
    assertions = read_json(path / "assertions.json")
    results: dict[tuple, dict[str, dict]] = {}
    try:
        for r in assertions["results"]:
            results.setdefault(tuple(r[k] for k in key_fields), {})[r["line"]] = r
    except (KeyError, TypeError) as e:
        raise InputError(f"{path / 'assertions.json'} has no well-formed results list "
                           f"({e!r})") from None
    notes = []
    version = manifest["metric_version"]
    if assertions.get("metric_version", version) != version:
        notes.append(f"run {path.name}: assertions.json says metric_version "
                     f"{assertions['metric_version']} but manifest.json says {version}; "
                     "the manifest is used")
    parent = VERSION_DIR.match(path.resolve().parent.name)
    if parent and str(version) != parent.group(1):
        notes.append(f"run {path.name} sits under {path.resolve().parent.name} but its "
                     f"manifest says metric_version {version}; the manifest is used")
    return Run(path, manifest, key_fields, rows, results, tuple(notes))


@contextlib.contextmanager
def run_folder(vdir: Path, run_id: str, created_utc: str | None = None,
               root: str | None = None, default_root: str | None = None,
               kept=None) -> Iterator[Path]:
    """Fill the yielded temporary folder; it becomes ``vdir/run_id`` atomically (fsynced)
    and, for a run that may be LATEST (``created_utc`` given), ``LATEST`` then names it if
    no newer run of its table root ``root`` holds it (``advance_latest``); ``kept(run id,
    root)`` is called when LATEST stays on a run of another table root."""
    atomic.remove_stale(vdir / run_id)  # an earlier attempt of this run killed mid-write
    with atomic.folder(vdir / run_id) as tmp:
        yield tmp
    if created_utc is not None:
        other = advance_latest(vdir, run_id, created_utc, root, default_root)
        if other and kept is not None:
            kept(*other)
