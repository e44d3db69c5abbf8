"""pipeline: the F4 batch audit (SPEC §8-§9) on Dask, Polars and Pandera.

Task functions (``tasks``) are pure; graph building and submission (``graph``,
``cluster``) are apart from them; aggregation (``aggregate``), assertions (``assertions``)
and report writing (``report``) each have their own module.
"""
