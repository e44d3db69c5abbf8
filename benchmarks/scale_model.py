"""Scale on paper: a discrete-event model of the audit's fan-out, calibrated here, validated
on a measured 2-worker run, then run for a nightly table on 100 and 1,000 workers.

No machine of 16+ cores is at hand: every figure for more than 2 workers is SIMULATED.
What is measured on this machine (``calibrate``):
- the client's cost to submit one task, one by one as ``engine.graph`` does (and batched);
- the per-task cost through the scheduler: many tiny tasks on a real LocalCluster of 1 and
  of 2 workers on loopback (per task: 1 worker -> the worker's occupancy, 2 workers -> the
  serial part: scheduler and client);
- a result's transfer to the client per byte (tasks returning a real record frame);
- the client's finishing pass per board (shard write, validate + digest + Parquet,
  read back of a row that waited too long), on a real run's records;
- each row's seconds per board, from a real run's ``row_seconds.json``.
The model (``simulate``): tasks in the engine's own split and order (``split.by_cost``);
the client submits them (serially), the scheduler dispatches them (serially), a free worker
takes the next (its per-task occupancy added), the result crosses to the client, and the
client, a single thread, receives results, saves each finished row and feeds the finishing
pass in key order (``InOrder``: rows held up to 2 batches of boards, later ones read back).

    .venv/bin/python benchmarks/scale_model.py --runs RUN1 RUN2 RUN3 RUN4 [--doc]

RUN1..: finished tile-match audit folders of the same table and N, in time order, the
later ones split from the earlier ones' timings: each run's fan-out is predicted from
its predecessor's timings and compared with what it measured.
"""

from __future__ import annotations

import heapq
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import perfdoc  # noqa: E402  (benchmarks/)

from pipeline.engine import split  # noqa: E402

BATCH = 32768  # analysis.collect.BATCH_BOARDS
HOLD = 2 * BATCH  # InOrder's hold_boards


@dataclass(frozen=True)
class Params:
    submit_s: float  # client, per task submitted one by one
    batch_submit_s: float  # client, per task when submitted in one call
    serial_s: float  # scheduler and client per task, one at a time (2-worker tiny tasks)
    task_s: float  # a worker's occupancy per task beyond its boards (1-worker tiny tasks)
    start_s: float  # a worker's start and warm-up (cluster start + warm)
    bytes_board: float  # a record in transit
    transfer_s_byte: float  # client's receive per byte
    save_s: float  # client: a row's shard, per board
    fin_s: float  # client: finishing pass, per board
    read_s: float  # client: a row read back from its shard, per board
    mem_board: float  # a record in the client's memory, bytes
    batched: bool = False


def simulate(rows: list[tuple[int, float]], n: int, start: int, workers: int, p: Params,
             costs: list[float] | None = None) -> dict:
    """rows: (boards, seconds per board) per row in key order; ``costs``: what the split
    believes (default the true per-board seconds). Seconds from the fan-out's start."""
    blocks = split.by_cost(costs or [s for _, s in rows], n, start, workers)
    m = len(blocks)
    t = m * (p.batch_submit_s if p.batched else p.submit_s)  # submission ends (client)
    sub = [t] * m if p.batched else [(k + 1) * p.submit_s for k in range(m)]
    free = [p.start_s] * workers
    heapq.heapify(free)
    disp, arrivals, work = 0.0, [], 0.0
    for k, b in enumerate(blocks):
        disp = max(disp, sub[k]) + p.serial_s
        w = heapq.heappop(free)
        secs = b.count * rows[b.position][1]
        work += secs
        end = max(w, disp) + p.task_s + secs
        heapq.heappush(free, end)
        arrivals.append((end + b.count * p.bytes_board * p.transfer_s_byte, k))
    arrivals.sort()
    left = {}
    for b in blocks:
        left[b.position] = left.get(b.position, 0) + 1
    client, parts, held, nxt, done, peak = t, 0, {}, 0, set(), 0
    for at, k in arrivals:
        b = blocks[k]
        client = max(client, at) + b.count * p.bytes_board * p.transfer_s_byte
        parts += b.count
        left[b.position] -= 1
        if left[b.position]:
            peak = max(peak, parts + sum(held.values()))
            continue
        boards = rows[b.position][0]
        parts -= boards
        client += boards * p.save_s
        done.add(b.position)
        if b.position == nxt or sum(held.values()) + boards <= HOLD:
            held[b.position] = boards
        peak = max(peak, parts + sum(held.values()))
        while nxt in done:
            got = held.pop(nxt, None)
            client += rows[nxt][0] * (p.fin_s + (p.read_s if got is None else 0.0))
            nxt += 1
    last_end = max(free)
    return {"tasks": m, "submit_s": t, "last_task_s": last_end, "client_s": client,
            "makespan_s": max(client, last_end), "work_s": work,
            "ideal_s": work / workers, "peak_boards": peak + BATCH,
            "peak_mb": (peak + BATCH) * p.mem_board / 1e6}


# ------------------------------------------------------------------------ calibration

def _noop(i):
    return i


def _payload(path: str, rows: int):
    import polars as pl

    return pl.read_parquet(path, n_rows=rows)


def calibrate(run: Path, tiny: int = 2000) -> tuple[Params, dict]:
    """The overheads, measured on LocalClusters of this machine and a real run's records."""
    import polars as pl
    from dask.distributed import Client, LocalCluster, wait

    from pipeline.analysis.collect import collect
    from pipeline.generator import load_generator

    import dask

    from pipeline.engine.housekeeping import SETTINGS

    raw = {}
    for width in (1, 2):
        with dask.config.set(SETTINGS), LocalCluster(n_workers=width, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None) as lc, Client(lc) as c:
            c.submit(_noop, -1, pure=False).result()
            t0 = time.perf_counter()
            futs = [c.submit(_noop, i, key=f"t-{width}-{i}", pure=False, retries=3)
                    for i in range(tiny)]
            t1 = time.perf_counter()
            wait(futs)
            t2 = time.perf_counter()
            raw[f"submit_{width}"] = (t1 - t0) / tiny
            raw[f"per_task_{width}"] = (t2 - t0) / tiny
            del futs
            if width == 2:
                t0 = time.perf_counter()
                futs = c.map(_noop, range(tiny), key=[f"b-{i}" for i in range(tiny)],
                             pure=False, retries=3)
                raw["batch_submit"] = (time.perf_counter() - t0) / tiny
                wait(futs)
                del futs
                recs = str(run / "records.parquet")
                sizes = {}
                for rows in (64, 1 << 20):  # a small frame, the whole run's records
                    took = []
                    for _ in range(5):
                        t0 = time.perf_counter()
                        frame = c.submit(_payload, recs, rows, pure=False).result()
                        took.append(time.perf_counter() - t0)
                    sizes[rows] = (statistics.median(took), frame.estimated_size(),
                                   frame.height)
                (t_s, b_s, _), (t_l, b_l, h_l) = sizes[64], sizes[1 << 20]
                raw["transfer_s_byte"] = max(t_l - t_s, 0.0) / max(b_l - b_s, 1)
                raw["bytes_board"] = b_l / h_l
    gen = load_generator(json.loads((run / "manifest.json").read_text())["generator"])
    records = pl.read_parquet(run / "records.parquet")
    rows = records.partition_by(gen.key_fields, maintain_order=True)
    scratch = Path("/tmp") / f"scale-model-{time.time_ns()}"
    scratch.mkdir()
    t0 = time.perf_counter()
    for i, r in enumerate(rows):
        r.write_parquet(scratch / f"{i}.parquet")
    t1 = time.perf_counter()
    copies = 8  # the rows 8 times over: full batches, as a large run's finishing pass
    collect(gen, list(enumerate(rows * copies)), scratch / "records.parquet")
    t2 = time.perf_counter()
    for i in range(len(rows)):
        pl.read_parquet(scratch / f"{i}.parquet")
    t3 = time.perf_counter()
    for f in scratch.iterdir():
        f.unlink()
    scratch.rmdir()
    boards = records.height
    m = json.loads((run / "manifest.json").read_text())["timings_s"]
    p = Params(submit_s=raw["submit_2"], batch_submit_s=raw["batch_submit"],
               serial_s=raw["per_task_2"], task_s=raw["per_task_1"],
               start_s=m["cluster_start"] + m["warmup"], bytes_board=raw["bytes_board"],
               transfer_s_byte=raw["transfer_s_byte"], save_s=(t1 - t0) / boards,
               fin_s=(t2 - t1) / (copies * boards), read_s=(t3 - t2) / boards,
               mem_board=records.estimated_size() / boards)
    return p, raw


def per_row(run: Path) -> tuple[list[str], list[tuple[int, float]]]:
    got = split.read(run / split.TIMINGS)
    return ([r["key"] for r in got["rows"]],
            [(r["boards"], r["seconds"] / r["boards"]) for r in got["rows"]])


def validate(runs: list[Path], p: Params) -> list[dict]:
    """Each run's fan-out predicted from its predecessor's timings, beside the measured."""
    out = []
    for before, run in zip(runs, runs[1:]):
        m = json.loads((run / "manifest.json").read_text())
        _, prior = per_row(before)  # the work as the run before measured it
        sim = simulate(prior, m["n"], -1 if m["generator"] == "tilegen" else 0,
                       m["workers"], replace(p, start_s=0.0))
        pred = sim["makespan_s"]  # the fan-out starts with the workers warm
        out.append({"run": run.name, "measured": m["timings_s"]["fanout"], "predicted": pred,
                    "error": pred / m["timings_s"]["fanout"] - 1})
    return out


def nightly(rows36: list[tuple[int, float]], p: Params, n_rows: int = 10_000, n: int = 4096,
            seed: int = 1) -> list[dict]:
    """10,000 rows at N 4,096: each row a measured row's seconds per board (in turn) times
    a lognormal spread (sigma 0.3, seeded); 100 and 1,000 workers, submission one by one
    and batched."""
    rnd = random.Random(seed)
    rows = [(n + 1, rows36[i % len(rows36)][1] * rnd.lognormvariate(0, 0.3))
            for i in range(n_rows)]
    out = []
    for workers in (100, 1000):
        for batched in (False, True):
            sim = simulate(rows, n, -1, workers, replace(p, batched=batched))
            out.append({"workers": workers, "batched": batched, **sim})
    return out


def sixteen(rows: list[tuple[int, float]], n: int, start: int, p: Params) -> list[dict]:
    """One table's fan-out (each row's measured seconds per board, N ``n``) on 2 and on 16
    workers, beside an ideal pool of as many workers on the same blocks (no scheduler, no
    client: each free worker takes the next block at once, as ``multiprocessing.Pool``
    does). ``generation``: from the workers being up to the last task's end."""
    boards = [(n - start, s) for _, s in rows]
    pool_p = replace(p, submit_s=0.0, batch_submit_s=0.0, serial_s=0.0, task_s=0.0,
                     start_s=0.0, transfer_s_byte=0.0, save_s=0.0, fin_s=0.0, read_s=0.0)
    free_p = replace(p, save_s=0.0, fin_s=0.0, read_s=0.0)  # the client's per-board work
    out = []
    for workers in (2, 16):
        sim = simulate(boards, n, start, workers, p)
        pool = simulate(boards, n, start, workers, pool_p)
        free = simulate(boards, n, start, workers, free_p)
        generation = sim["last_task_s"] - p.start_s
        out.append({"workers": workers, **sim, "generation_s": generation,
                    "efficiency": sim["work_s"] / workers / generation,
                    "pool_s": pool["makespan_s"],
                    "vs_pool": (sim["makespan_s"] - p.start_s) / pool["makespan_s"],
                    "free_vs_pool": (free["makespan_s"] - p.start_s) / pool["makespan_s"]})
    return out


def _sixteen_rows(name: str, at: list[dict]) -> list[list[str]]:
    two, many = at
    return [[name, f"{r['workers']}", f"{r['tasks']:,}", f"{r['makespan_s']:.1f} s",
             f"{r['generation_s']:.1f} s", f"{r['efficiency']:.2f}", f"{r['pool_s']:.1f} s",
             f"{r['vs_pool']:.2f}", f"{r['free_vs_pool']:.2f}",
             f"{two['makespan_s'] / r['makespan_s']:.1f}x" if r is many else "1.0x"]
            for r in at]


def main() -> None:
    ap = perfdoc.arguments(__doc__, repeats=1)
    ap.add_argument("--runs", nargs="+", required=True, type=Path)
    ap.add_argument("--minegen-run", type=Path, help="a minegen audit of benchmarks/tables/"
                    "scaling (its row_seconds.json: the 16-worker prediction at N 4,096)")
    a = ap.parse_args()
    load = Path("/proc/loadavg").read_text().split()[0]
    p, raw = calibrate(a.runs[-1])
    val = validate(a.runs, p)
    keys, rows36 = per_row(a.runs[-1])
    night = nightly(rows36, p)
    at16 = {"tile-match default presets, N 1,024": sixteen(rows36, 1024, -1, p)}
    if a.minegen_run:
        at16["minegen scaling table, N 4,096"] = sixteen(per_row(a.minegen_run)[1], 4096, 0,
                                                         p)
    print(json.dumps({"params": p.__dict__, "raw": raw, "validation": val, "nightly": night,
                      "sixteen": at16}, indent=1))
    us = lambda s: f"{s * 1e6:.0f} µs"  # noqa: E731
    cal = [["client: submit one task (one by one / batched)",
            f"{us(p.submit_s)} / {us(p.batch_submit_s)}"],
           ["per task through scheduler and client, 2 workers (serial part)", us(p.serial_s)],
           ["per task, 1 worker (a worker's occupancy per task)", us(p.task_s)],
           ["worker start and warm-up (this run's LocalCluster)", f"{p.start_s:.2f} s"],
           ["a record in transit / in the client's memory",
            f"{p.bytes_board:.0f} B / {p.mem_board:.0f} B"],
           ["client receive per MB", f"{p.transfer_s_byte * 1e6 * 1e3:.1f} ms"],
           ["client per board: shard write / finishing pass / read back",
            f"{us(p.save_s)} / {us(p.fin_s)} / {us(p.read_s)}"]]
    v = [[r["run"], f"{r['measured']:.2f} s", f"{r['predicted']:.2f} s",
          f"{100 * r['error']:+.1f} %"] for r in val]
    nt = [[f"{r['workers']:,}", "batched" if r["batched"] else "one by one", f"{r['tasks']:,}",
           f"{r['ideal_s']:.0f} s", f"{r['makespan_s']:.0f} s",
           f"{r['ideal_s'] / r['makespan_s']:.2f}", f"{r['submit_s']:.1f} s",
           f"{r['last_task_s']:.0f} s", f"{r['client_s']:.0f} s", f"{r['peak_mb']:.0f} MB"]
          for r in night]
    body = (
        "**Figures for more than 2 workers are simulated, not measured**: no machine of more "
        "than 2 cores was at hand. The model is a discrete-event simulation of the fan-out "
        "(`simulate`): the engine's own split (`split.by_cost`, heaviest first), the client "
        "submitting tasks, the scheduler dispatching them one at a time, each free worker "
        "taking the next, each result crossing to the client, and the client (one thread) "
        "saving each finished row and feeding the finishing pass in key order (rows held up "
        "to 65,536 boards, later ones read back from their shards).\n\n"
        f"Calibration, measured here (machine load average {load} at the start):\n\n"
        + perfdoc.table(["measure", "measured"], cal)
        + "\n\nValidation: each tile-match run (default presets, N "
        f"{json.loads((a.runs[-1] / 'manifest.json').read_text())['n']}, 2 workers) "
        "predicted from the per-row timings of the run before it, beside its measured "
        "fan-out (bound: within 15 %):\n\n"
        + perfdoc.table(["run", "measured fan-out", "predicted", "error"], v)
        + "\n\nPrediction (SIMULATED): a nightly table of 10,000 rows at N 4,096 (each row "
        "one of the measured rows' seconds per board, times a seeded lognormal spread, "
        "sigma 0.3), the default split:\n\n"
        + perfdoc.table(["workers", "submission", "tasks", "ideal (work / workers)",
                         "makespan", "efficiency", "submission ends", "last task ends",
                         "client done (finishing pass)", "client memory bound"], nt)
        + "\n\nPrediction (SIMULATED): the tables issue 43 measured on 16 cores, on 2 and "
        "16 workers of this calibration (wall: from the cluster's start, the workers' "
        "start in parallel; generation: from the workers being up to the last task's end; "
        "efficiency: the work over workers x generation; the ideal pool: the same blocks "
        "on as many workers with no scheduler and no client; the next column: the same "
        "run if the client's shard writes, finishing pass and read-backs cost nothing, "
        "which is what moving them to the workers would approach):\n\n"
        + perfdoc.table(["table", "workers", "tasks", "wall", "generation", "efficiency",
                         "ideal pool", "wall after start / pool", "the same, the client's "
                         "per-board work free", "speed-up over 2"],
                        [r for name, at in at16.items() for r in _sixteen_rows(name, at)])
        + "\n\nThe worker start is this machine's LocalCluster's; a SLURM allocation's "
        "workers join over minutes and are not modelled. The memory bound is the records the "
        "client holds at its peak (rows in flight, rows held for the finishing pass, one "
        "batch), at their in-memory size; the process's own libraries (about 140 MB, "
        "[Game-table scale](#game-table-scale)) come on top.")
    perfdoc.publish(a.doc, "scale-model", "Scale on paper (simulated)", body)


if __name__ == "__main__":
    main()
