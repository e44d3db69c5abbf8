"""``minegen diff RUN_A RUN_B``: row-by-row comparison of two audit runs (orchestration).

In: two run folders (``store.runs`` layout) or run ids looked up under ``--out``; from
each only ``manifest.json``, ``aggregates.parquet`` and ``assertions.json`` are read. The
generator is the one that wrote the runs (``generator_ref`` in the manifest); the model is
``analysis.compare``. Out: the Markdown on stdout and one HTML page
``<out>/diffs/<runA>__vs__<runB>.html`` (the only file written). Exit 0; 2 on bad input
(an unknown run, runs of different generators, or of different metric_version without
``--allow-cross-version``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from boardcore.errors import InputError

from ..analysis.compare import FAIL, PASS, RunDiff, compare
from ..errors import EXIT_ASSERTION_FAILED, EXIT_OK, describe_os_error
from ..generator import DEFAULT_GENERATOR, load_generator
from ..options import DEFAULT_OUT
from ..store import atomic
from ..store.runs import load_run, resolve_run
from . import history

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


# ------------------------------------------------------------------------------ writing

def html_path(d: RunDiff, out: str | os.PathLike) -> Path:
    def safe(run_id: str) -> str:
        return _UNSAFE.sub("_", run_id).lstrip(".") or "run"

    return Path(out) / "diffs" / f"{safe(d.a.run_id)}__vs__{safe(d.b.run_id)}.html"


def write_html(d: RunDiff, out: str | os.PathLike) -> Path:
    """Write the HTML page under ``<out>/diffs/`` (temporary file, then rename)."""
    from ..reports import diff_page

    final = html_path(d, out)
    final.parent.mkdir(parents=True, exist_ok=True)
    return atomic.write_text(final, diff_page.html(d, str(final.parent),
                                                   str(Path(out) / history.INDEX)))


def diff_runs(run_a: str, run_b: str, out: str | os.PathLike = DEFAULT_OUT,
              allow_cross_version: bool = False, generator: str | None = None) -> RunDiff:
    """Resolve, load and compare two runs (see ``resolve_run`` and ``compare``);
    ``generator`` (default minegen) is whose ``LATEST`` a name reads."""
    named = load_generator(generator or DEFAULT_GENERATOR)
    paths = (resolve_run(run_a, out, named.report_subdir),
             resolve_run(run_b, out, named.report_subdir))
    default_key = load_generator(DEFAULT_GENERATOR).key_fields  # runs without key_fields
    a, b = (load_run(p, default_key) for p in paths)
    gens = [r.manifest.get("generator") or DEFAULT_GENERATOR for r in (a, b)]
    if gens[0] != gens[1]:
        raise InputError(f"{run_a} is a {gens[0]} run and {run_b} a {gens[1]} run: diff "
                         "compares two runs of one generator")
    gen = load_generator(a.manifest.get("generator_ref") or a.manifest.get("generator"))
    return compare(gen, a, b, allow_cross_version)


def regressions(d: RunDiff) -> list[tuple]:
    """(key, line) of every hard line that flipped pass -> fail from run A to run B."""
    return [(key, ln) for key, ln in d.flips
            if ln.hard and ln.status_a == PASS and ln.status_b == FAIL]


def cmd_diff(args) -> int:
    """CLI: Markdown on stdout, the HTML page under <out>/diffs/, its path. Exit 0, or 1
    with --fail-on-regression when a hard line flipped pass -> fail."""
    from ..reports import diff_page

    d = diff_runs(args.run_a, args.run_b, args.out, args.allow_cross_version,
                  getattr(args, "generator", None))
    try:
        page = write_html(d, args.out)  # first: the page exists even if stdout goes away
        history.refresh(args.out)
    except OSError as e:  # a read-only archive: diff only reads, so it still answers
        page = None
        why = f"not written ({describe_os_error(e)}: {e.filename or args.out})"
    print(diff_page.markdown(d), end="")
    print(f"\nHTML page: {page if page is not None else why}")
    worse = regressions(d)
    if worse:
        print(f"regressions: {len(worse)} hard line(s) flipped pass -> fail: "
              + ", ".join(f"{ln.line} on {d.gen.label(key)}" for key, ln in worse))
    return EXIT_ASSERTION_FAILED if worse and args.fail_on_regression else EXIT_OK
