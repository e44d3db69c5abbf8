"""The players' loop (docs/telemetry.md): real or synthetic players' telemetry reconciled
with an audit's predictions (``minegen reconcile``: ``reconcile``, its page, tables, JUnit
file and charts), the calibration a reconcile fits and an audit reads back (``calibration``),
the proposals it makes and the progression funnel's pages (``funnel_page``).

It reads the platform through ``pipeline.api`` as the audit side does; the telemetry
itself (``tilegen.telemetry``) and the funnel model (``tilegen.funnel``) are library code.
"""
