"""pipeline: the batch audit of any board generator (SPEC §8-§9) on Dask, Polars and Pandera.

A generator plugs in through ``generator.Generator`` (minegen, tilegen, a test's toygen);
the platform fans its boards out (``engine``: sessions, graphs, tasks, splits), keeps the
runs (``store``), judges and aggregates them (``analysis``), writes the pages
(``reports``) and runs the jobs the commands name (``jobs``: audit, sweep, tune, diff...).
"""
