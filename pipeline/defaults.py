"""The platform's two defaults that jobs use and printed commands leave out: the generator
(``--generator``) and the output folder (``--out``). A leaf: the modules that print
commands (``hints``) and the store read them without importing the contract or the
options."""

DEFAULT_GENERATOR = "minegen"
DEFAULT_OUT = "reports"
