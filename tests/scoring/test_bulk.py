"""A bulk build pauses the cyclic garbage collector and gives it back as it found it."""

from __future__ import annotations

import gc

import pytest

from scoring.bulk import gc_paused


def test_the_collector_is_paused_for_the_block_and_restored_after_an_error() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: the outer block restores it, not this one
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("boom")
    assert gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
