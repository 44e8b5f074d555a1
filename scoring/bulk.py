"""Building many long-lived objects at once, with the cyclic garbage collector paused.

A bulk build (1,813 rubrics validated and compiled into 63,000 checks, 50,000 responses read
into units) allocates objects that all live on: every collection it triggers traverses them and
frees nothing, and the full collections their number sets off traverse every object of the
process. At paper scale that is a third of such a build's time. Reference counting still frees
everything that is not in a cycle; a cycle made meanwhile waits for the next full collection.

Pausing alone only defers the work: the first allocation after the pause would set off young
collections that traverse everything the build made (a quarter of a second of a paper-scale
compile). So the pause ends by moving every tracked object into the oldest generation without
traversing it (``gc.freeze()`` then ``gc.unfreeze()``: two list splices), where only the rare
full collections look at them, as they would have once the objects had aged. (Objects frozen
before the block would be unfrozen with them: the project freezes only at exit, in
``gamut.cli.run``, after every block.)

The pause is a step of the process policy (``gc_pause``, :mod:`scoring.process`): the engine
used as a library leaves its caller's collector alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from scoring import process


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block, then restore it as it was (a nested
    or already paused block leaves it alone), when the process policy says so."""
    if not gc.isenabled() or not process.current().gc_pause:
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()  # every tracked object to the permanent generation ...
        gc.unfreeze()  # ... and from there to the oldest one, with no traversal
        gc.enable()


__all__ = ["gc_paused"]
