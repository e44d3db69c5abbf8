"""Whether a run fits the job that reads it (decisions 165, 274): the same generator, the
tables the job holds (by content hash) and the same N; and which tables a job given no
--tables reads (the run's own)."""

from __future__ import annotations

from pathlib import Path

from boardcore.errors import InputError

from .runs import same_root


def check_fits(manifest: dict, gen, catalog, n: int, what: str) -> None:
    """InputError (one line) unless the run ``manifest`` describes is of ``gen``, of the
    tables ``catalog`` holds (same content hash) and of N = ``n``: a job that reads a run
    never mixes it with other tables, another generator or another N."""
    _check_generator(manifest, gen, what)
    differ = tables_differ(manifest, catalog.root, catalog.content_hash, what)
    theirs = manifest.get("table_root")
    if differ and theirs and same_root(theirs, catalog.root):
        raise InputError(f"{what} audited {theirs} when its files hashed "
                         f"{str(manifest.get('table_hash'))[:12]}; they hash "
                         f"{catalog.content_hash[:12]} now (edited since the run): audit "
                         "them again first")
    if differ:
        raise InputError(f"{differ}: drop --tables (the run's own tables are used), or "
                         "audit these tables first")
    if manifest.get("n") != n:
        raise InputError(f"{what} has N = {manifest.get('n')}, not {n}: drop --n (the run's "
                         "N is used) or audit at that N first")


def _check_generator(manifest: dict, gen, what: str) -> None:
    if manifest.get("generator") != gen.name:
        raise InputError(f"{what} is a {manifest.get('generator')} run, not {gen.name}: name "
                         f"the generator it was audited with (--generator "
                         f"{manifest.get('generator')})")


def run_tables(manifest: dict, gen, what: str) -> str | None:
    """The table root of the run ``manifest`` describes, for a job given no --tables
    (decision 274): None when it is the generator's default root, or the manifest names
    none; InputError when the run is another generator's or its root is gone."""
    _check_generator(manifest, gen, what)
    root = manifest.get("table_root")
    if not root or (gen.default_root and same_root(root, gen.default_root)):
        return None
    if not Path(root).is_dir():
        raise InputError(f"{what} audited the tables at {root}, which is no longer a "
                         "folder: give --tables, a root with the same files")
    return str(root)


def tables_differ(manifest: dict, root, content_hash: str, what: str) -> str:
    """Nothing when the run ``manifest`` describes audited tables of ``content_hash``; else
    one clause naming both roots and hashes."""
    was = manifest.get("table_hash")
    return "" if was == content_hash else (
        f"{what} audited the tables at {manifest.get('table_root')} (hash {str(was)[:12]}), "
        f"not {root} (hash {content_hash[:12]})")
