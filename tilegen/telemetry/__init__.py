"""Player telemetry of the tile-match game (05 §17; docs/telemetry.md): the session schema,
the readers, a synthetic player model, and the reconciliation against a finished audit."""
