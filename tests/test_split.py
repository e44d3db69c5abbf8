"""Rows split into tasks by expected cost (pipeline.engine.split, decision 288): every board
once, tasks of about equal cost, heaviest first, the costs from an earlier run's timings;
and whatever the split, the same records, byte for byte."""

from __future__ import annotations

import json

import pytest

from pipeline.capabilities import first_index
from pipeline.engine import split
from pipeline.engine.split import Block


def covered(blocks: list[Block], rows: int, start: int, n: int) -> bool:
    """Every board [start, n) of every row in exactly one block."""
    seen = {pos: [] for pos in range(rows)}
    for b in blocks:
        seen[b.position] += range(b.first, b.first + b.count)
    return all(sorted(v) == list(range(start, n)) for v in seen.values())


def test_by_cost_balances_heaviest_first_and_covers_every_board():
    costs = [1.0] * 30 + [8.8] * 6  # tile-match's shape: a few rows far heavier
    blocks = split.by_cost(costs, 256, -1, workers=2)
    assert covered(blocks, 36, -1, 256)
    per_task = [costs[b.position] * b.count for b in blocks]
    heavy = [i for i, b in enumerate(blocks) if b.position >= 30]
    assert heavy == list(range(len(heavy)))  # the heaviest rows' tasks lead
    assert max(per_task) <= sum(per_task) / (split.TASKS_PER_WORKER * 2) * 1.01
    assert len(blocks) >= split.TASKS_PER_WORKER * 2
    # a row's tasks stay together, in board order
    order = [b.position for b in blocks]
    assert all(order.index(p) + order.count(p) - 1 == max(i for i, q in enumerate(order)
                                                          if q == p) for p in set(order))


def test_by_cost_many_rows_one_task_each_and_small_rows_unsplit():
    assert len(split.by_cost([1.0] * 1000, 64, 0, workers=4)) == 1000
    assert len(split.by_cost([1.0, 100.0], 12, 0, workers=8)) == 2  # < 2 x MIN_BOARDS
    assert split.by_cost([0.0, 0.0], 10, 0, workers=2) == split.fixed(2, 10, None)


class Gen:
    """What ``split`` asks of a generator: a name, keys and its estimate."""

    name = "toy"

    def key(self, plan):
        return plan

    def format_key(self, key):
        return key[0]

    def row_cost(self, plan):
        return {"a": 1.0, "b": 2.0, "c": 4.0}[plan[0]]


def test_costs_come_from_the_newest_earlier_run_of_the_same_tables(tmp_path):
    gen, plans = Gen(), [("a",), ("b",), ("c",)]
    assert split.costs(gen, plans, tmp_path, "h1") == ([1.0, 2.0, 4.0], "estimate")
    for run, table, secs in (("20260101T000000Z-x", "h1", (0.5, 1.0, 2.0)),
                             ("20260102T000000Z-x", "h2", (9.0, 9.0, 9.0))):
        (tmp_path / run).mkdir()
        split.write(tmp_path / run, gen, plans, {i: (10, 10 * s) for i, s in enumerate(secs)
                                                 if i < 2}, table)
    got, whence = split.costs(gen, plans, tmp_path, "h1")
    assert whence == "timings of run 20260101T000000Z-x"
    assert got == pytest.approx([0.5, 1.0, 2.0])  # c: its estimate x the median ratio
    got, whence = split.costs(gen, plans, tmp_path, "other")  # none of its tables: newest
    assert whence.endswith("20260102T000000Z-x") and got[:2] == [9.0, 9.0]
    (tmp_path / "20260103T000000Z-x").mkdir()
    (tmp_path / "20260103T000000Z-x" / split.TIMINGS).write_text("not json")  # ignored
    assert split.costs(gen, plans, tmp_path, "h1")[1].endswith("20260101T000000Z-x")
    rows = json.loads((tmp_path / "20260101T000000Z-x" / split.TIMINGS).read_text())["rows"]
    assert [r["key"] for r in rows] == ["a", "b"]


@pytest.mark.cluster
@pytest.mark.parametrize("name", ["minegen", "tilegen"])
def test_two_splits_give_the_same_records_sha256(name, cluster):
    """Whole rows against the rows split by skewed costs over many workers (uneven blocks,
    heavy rows first): the same records_sha256, the same records."""
    from dask.distributed import Client

    from pipeline.analysis.collect import collect
    from pipeline.engine.graph import run_rows
    from pipeline.generator import load_generator

    gen = load_generator(name)
    plans = gen.plans(gen.load(None), [])[:4]
    out = {}
    with Client(cluster) as client:
        for how, kw in (("rows", {"seeds_per_task": 64}),
                        ("cost", {"seeds_per_task": None, "costs": [1.0, 9.0, 3.0, 0.5],
                                  "workers": 16})):
            got: dict = {}
            spt = kw.pop("seeds_per_task")
            run_rows(client, gen, plans, 40, spt, lambda p, f: got.__setitem__(p, f),
                     **kw)
            out[how] = collect(gen, sorted(got.items()), None)
    assert out["rows"].records_sha256 == out["cost"].records_sha256
    assert out["rows"].boards == out["cost"].boards == 4 * (40 - first_index(gen))


def test_the_split_plans_for_the_workers_asked_for_not_those_joined():
    """SLURM's workers join over minutes: the default split plans for the profile's jobs
    times their processes (an embedded cluster: its ``--workers``; an existing scheduler:
    unknown, the workers joined)."""
    from pipeline.engine.session import ClusterSpec

    assert ClusterSpec(slurm={"jobs": 3, "processes": 2}).planned_workers == 6
    assert ClusterSpec(slurm={"jobs": 5}).planned_workers == 5
    assert ClusterSpec(workers=4).planned_workers == 4
    assert ClusterSpec(scheduler="tcp://127.0.0.1:1").planned_workers is None
    # planned for 6 workers, a row is split as for 6, whoever has joined
    assert len(split.by_cost([1.0], 64, 0, 6)) > len(split.by_cost([1.0], 64, 0, 1))
