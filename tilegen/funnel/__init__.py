"""The progression funnel: the population model (``model``), its fit to players'
progression (``fit``), progression read from telemetry (``progress``) and its page
(``page``)."""
