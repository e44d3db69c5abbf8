"""A batch of candidate rows audited as one graph and judged (``minegen tune``'s search,
its multi-field search and its confirmation on fresh boards): each candidate's lines, its
cost to the player, its flags and its margin (``analysis.cost``).

``first`` (optional): the boards [first, n) instead of the audit's own (tune confirms a
proposal on boards past the audit's N, which it was never ranked on: issue 40).
"""

from __future__ import annotations

from pathlib import Path

from ..analysis import cost
from ..analysis import lines as L
from ..analysis.collect import ROW, collect_each
from ..engine import spot
from ..engine.run import execute
from ..options import AuditOptions
from ..store import runs
from ..store.shards import ShardStore, shard_key
from .audit import announce


def round_of(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, name: str,
             wanted: dict[tuple, list[dict]], progress) -> tuple[dict[tuple, list], str]:
    """Run every valid candidate of every row as one graph (shards under
    ``.partial-<name>``, so an interrupted tune resumes) -> ({key: evaluated candidates in
    the declared order}, the scheduler's description)."""
    out: dict[tuple, list] = {key: [] for key in wanted}
    plans, meta = [], []
    for key, changes in wanted.items():
        for order, change in enumerate(changes):
            plan, diags = gen.vary_many(catalog, key, change)
            entry = {"change": change, "field": " + ".join(change),
                     "value": next(iter(change.values())) if len(change) == 1
                     else list(change.values()), "order": order}
            if plan is None:
                out[key].append({**entry, "status": "invalid",
                                 "rule": diags[0].rule if diags else ""})
                continue
            meta.append((key, entry))
            plans.append(plan)
    return run_batch(gen, a, base, folder, name, out, meta, plans, progress)


def run_batch(gen, a: AuditOptions, base: runs.Run, folder: Path, name: str, out: dict,
              meta: list[tuple[tuple, dict]], plans: list, progress,
              first: int | None = None, n: int | None = None) -> tuple[dict, str]:
    """Audit ``plans`` (one per ``meta`` entry (key, entry)) as one graph and append each
    evaluated entry to ``out[key]``, in the declared order; boards [first, n) when given
    (default: the audit's N and span)."""
    if not plans:
        return out, ""
    cand = folder / f"{runs.PARTIAL_PREFIX}{name}"  # kept by an interrupted tune
    # a candidate's shard is made again when a crash lost it (decision 302): not fsynced
    store = ShardStore(cand, durable=False) if (cand / "run.json").is_file() else \
        ShardStore.create(folder, name, {name: len(plans)}, durable=False)
    n = n or a.n
    expects = [shard_key(gen, p, n, first) for p in plans]
    kept = set(spot.reusable(gen, store, plans, expects, announce))  # an interrupted tune's
    todo = [i for i in range(len(plans)) if i not in kept]
    with execute(gen, a.cluster(scratch=str(store.folder / "scratch")), plans, todo, n,
                 a.seeds_per_task, store, expects, progress, what="tune",
                 announce=announce, start=first) as ex:
        ex.close_soon()
        judged = verdicts(gen, [got for _, got in collect_each(
            gen, store.rows(list(range(len(plans)))))])
    for (key, entry), v in zip(meta, judged):
        out[key].append(evaluated(gen, base.rows.get(entry.get("row_key", key)) or {}, entry, v))
    for key in out:
        out[key].sort(key=lambda c: c["order"])
    store.remove()
    return out, ex.scheduler


def verdicts(gen, collected: list) -> list[dict]:
    """Each candidate's lines and figures from its collected records (the lines of every
    candidate judged in one Pandera pass: ``lines.evaluate_many``)."""
    frames = [gen.row_columns(got.rows.drop(ROW), None) for got in collected]
    out = []
    for got, frame, results in zip(collected, frames,
                                    L.evaluate_many(frames, gen.lines, gen.key_fields)):
        hard = [r for r in results if r["hard"] and r["applies"]]
        out.append({
            "holds": not L.hard_failures(results), "records_sha256": got.records_sha256,
            "row": frame.to_dicts()[0], "_raw": got.rows.drop(ROW),
            "lines": {r["line"]: {"observed": r["observed"], "passed": r["passed"],
                                  **({"interval": r["interval"],
                                      "within_noise": r["within_noise"]}
                                     if "interval" in r else {})} for r in hard}})
    return out


def evaluated(gen, base_row: dict, entry: dict, verdict: dict) -> dict:
    """A candidate's verdict with its cost to the player, its flags and its margin."""
    before = cost.figures(gen.tune_costs, base_row)
    after = cost.figures(gen.tune_costs, verdict["row"])
    ops = {ln.name: ln for ln in gen.lines}
    noise = [{"line": n, "observed": x["observed"], "interval": x["interval"],
              "threshold": ops[n].threshold,
              "n_needed": cost.n_to_clear(x["observed"], ops[n].threshold,
                                          above=ops[n].op in (">=", ">"))}
             for n, x in verdict["lines"].items() if x.get("within_noise")]
    return {**entry, "status": "ok", "holds": verdict["holds"], "_raw": verdict["_raw"],
            "margin": verdict["holds"] and not noise, "noise": noise,
            "lines": verdict["lines"], "records_sha256": verdict["records_sha256"],
            "figures": after, "cost": cost.cost(gen.tune_costs, before, after),
            "shown": cost.figures(getattr(gen, "tune_shown", ()), verdict["row"]),
            "errors": cost.errors((*gen.tune_costs, *getattr(gen, "tune_shown", ())),
                                  verdict["row"]),
            "flags": cost.flags(gen.tune_costs, base_row, after) if verdict["holds"] else []}
