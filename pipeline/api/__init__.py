"""The platform's public surfaces: a game imports from these modules and from nothing else
of ``pipeline`` (tests/test_house.py holds it), so what the platform may change without
touching a game is everything not named here.

- ``contract``: what a generator is (``Generator``, the capabilities it may declare: ``Tune``,
  ``Daily`` and those of ``pipeline.capabilities``; the lines, the drill-down, the costs, the
  search space) and the errors a job raises;
- ``stats``: the intervals and quantiles every figure on a page is given with;
- ``pages``: the report's document model, charts, tables, JUnit and the rendered docs;
- ``runs``: run folders, the file layer, options, the cluster session and interrupts, the
  commands the pages print.
"""
