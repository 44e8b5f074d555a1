"""A bulk build pauses the cyclic garbage collector and gives it back as it found it (when the
process policy says so: the engine used as a library leaves the collector alone)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from scoring.bulk import gc_paused
from scoring.process import COMMAND_LINE, LIBRARY, using


@pytest.fixture(autouse=True)
def _program_policy() -> Iterator[None]:
    with using(COMMAND_LINE):
        yield


def test_a_library_leaves_the_collector_alone() -> None:
    with using(LIBRARY), gc_paused():
        assert gc.isenabled()


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


def test_what_the_block_made_goes_to_the_oldest_generation_and_cycles_are_still_freed() -> None:
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    with gc_paused():
        kept = [Node() for _ in range(5000)]  # many more than a young collection's threshold
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle that is garbage once the names are gone
        cycle = weakref.ref(a)
        del a, b
    assert gc.get_count()[0] < 100  # no young backlog left to traverse
    assert any(o is kept[-1] for o in gc.get_objects(generation=2))  # moved, not traversed
    assert cycle() is not None  # no collection has run yet
    gc.collect()
    assert cycle() is None  # the next full collection frees the cycle
