"""The first-call compile scope changes numba's -O level and the GC only inside itself."""

import gc

import pytest
from numba.core import config

from boardcore._kernels import COMPILE_OPT, compiling


def test_scope_sets_and_restores_opt_and_gc():
    before = int(config.OPT)
    assert gc.isenabled()
    with compiling():
        assert int(config.OPT) == COMPILE_OPT
        assert not gc.isenabled()
    assert int(config.OPT) == before and gc.isenabled()


def test_scope_restores_after_an_error():
    before = int(config.OPT)
    with pytest.raises(RuntimeError):
        with compiling():
            raise RuntimeError("compile failed")
    assert int(config.OPT) == before and gc.isenabled()


def test_scope_keeps_a_disabled_gc_disabled():
    gc.disable()
    try:
        with compiling():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
