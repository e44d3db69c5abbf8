"""Importing this module loads the audit's kernels (``TilegenAudit.warm``).

An embedded cluster's worker template imports it last, and only when the kernel cache is
warm (``pipeline.engine.run.worker_modules``), so every worker forked from the template
starts with the kernels loaded (decision 272). Nothing else imports it: the import is the
warm-up.
"""

from .generator import GENERATOR

GENERATOR.warm()
