"""How the engine uses the machine, in one place: its thread pools, the forked compile, the
garbage collector, numpy's BLAS threads and page size, and the response files read once for two
readers.

The engine asks the active :class:`ProcessPolicy` (:func:`current`) before it starts a thread or
a process: ``process.pool("ledger_pull")`` is a thread pool of the policy's size for that step,
or an executor that runs each task in the calling thread when the size is 0. The default policy
is :data:`LIBRARY`: the engine used as a library (``import scoring`` in a notebook) starts no
thread or process of its own, and leaves the collector and numpy alone. The ``gamut`` program
enters :data:`COMMAND_LINE` at its entry point (:func:`gamut.cli.run`), and a caller that wants
the same speed as a library enters it too (:func:`enter`, or :func:`using` for a block).

Each step of :data:`COMMAND_LINE` pays for itself on the figure it targets:
``benchmarks/bench_tuning.py`` measures every one against the same policy without it
(:meth:`ProcessPolicy.without`), and ARCHITECTURE.md ("The process policy") lists the figures
and the steps that were measured, did not pay and were removed (the engine's other thread pools,
pyarrow's conversion threads).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")

#: Every thread pool of the engine and the program, by name: what its threads do.
POOLS: Mapping[str, str] = MappingProxyType(
    {
        "ledger_pull": "the ledger's missing files downloaded from the Hub, one request each",
        "batch_upload": "a judge batch uploaded while the next chunk is built",
        "answer_writer": "gamut generate's answers appended and synced off the event loop",
    }
)

#: The steps that are not thread pools, each a switch of :class:`ProcessPolicy`.
SWITCHES: Mapping[str, str] = MappingProxyType(
    {
        "fork_compile": "gamut score compiles the checks in a forked process while it validates",
        "gc_pause": "bulk builds run with the cyclic garbage collector paused (scoring.bulk)",
        "exit_freeze": "the program exits without a last collection over what it loaded",
        "blas_one_thread": "numpy's BLAS held to one thread (unless the environment says)",
        "small_pages": "numpy's arrays not backed by transparent huge pages (unless the "
        "environment says)",
        "share_reads": "a response file the validator read cleanly is not parsed again to judge",
    }
)

#: ``nthreads`` of every pyarrow ``Table.from_pandas``: the calling thread. pyarrow's own choice (a
#: thread per core for a large frame) gained nothing on the score tables or the verdict table
#: (benchmarks/bench_tuning.py), and the engine used as a library starts no thread.
ARROW_THREADS = 1

#: Environment variables that hold numpy's BLAS (OpenBLAS) to one thread, read when numpy loads.
BLAS_ONE_THREAD: Mapping[str, str] = MappingProxyType({"OPENBLAS_NUM_THREADS": "1"})
#: The environment variable by which numpy, when it loads, leaves its large arrays on the
#: kernel's ordinary pages (numpy asks for transparent huge pages by default; each huge page is
#: zeroed whole, and backed whole by the host of a virtual machine, on first touch).
SMALL_PAGES: Mapping[str, str] = MappingProxyType({"NUMPY_MADVISE_HUGEPAGE": "0"})


@dataclass(frozen=True)
class ProcessPolicy:
    """Which threads, processes and collector settings the engine may use.

    Attributes:
        pools: pool name (one of :data:`POOLS`) -> its worker threads; 0 (or absent) runs the
            step's tasks in the calling thread.
        fork_compile: the checks may be compiled in a forked process.
        gc_pause: bulk builds pause the cyclic garbage collector.
        exit_freeze: the program freezes every object before it exits.
        blas_one_thread: :func:`enter` holds numpy's BLAS to one thread (before numpy loads).
        small_pages: :func:`enter` keeps numpy's arrays off transparent huge pages (before
            numpy loads).
        share_reads: a :class:`~scoring.submissions.responses.SharedReads` block keeps clean
            reads for the next reader of the same bytes.
    """

    pools: Mapping[str, int] = field(default_factory=dict)
    fork_compile: bool = False
    gc_pause: bool = False
    exit_freeze: bool = False
    blas_one_thread: bool = False
    small_pages: bool = False
    share_reads: bool = False

    def __post_init__(self) -> None:
        unknown = sorted(set(self.pools) - set(POOLS))
        if unknown:
            raise ValueError(f"unknown thread pool(s) {unknown} (one of {', '.join(POOLS)})")
        if any(n < 0 for n in self.pools.values()):
            raise ValueError(f"a pool's thread count is 0 or more: {dict(self.pools)}")

    def threads(self, name: str) -> int:
        """The worker threads of pool ``name`` (0: the calling thread does the work).

        Raises:
            KeyError: ``name`` is no pool of :data:`POOLS`.
        """
        if name not in POOLS:
            raise KeyError(f"no thread pool {name!r} (one of {', '.join(POOLS)})")
        return self.pools.get(name, 0)

    def without(self, step: str) -> ProcessPolicy:
        """This policy with ``step`` (a pool of :data:`POOLS` or a switch of :data:`SWITCHES`)
        switched off: what ``benchmarks/bench_tuning.py`` measures each step against.

        Raises:
            KeyError: ``step`` is neither.
        """
        if step in POOLS:
            return replace(self, pools={k: v for k, v in self.pools.items() if k != step})
        if step in SWITCHES:
            off: dict[str, Any] = {step: False}
            return replace(self, **off)
        raise KeyError(f"no step {step!r} (one of {', '.join([*POOLS, *SWITCHES])})")


#: The engine used as a library: everything in the calling thread, the collector left alone.
LIBRARY = ProcessPolicy()

#: The ``gamut`` program's policy (entered by :func:`gamut.cli.run`).
COMMAND_LINE = ProcessPolicy(
    pools={
        "ledger_pull": 8,
        "batch_upload": 1,
        "answer_writer": 1,
    },
    fork_compile=True,
    gc_pause=True,
    exit_freeze=True,
    blas_one_thread=True,
    small_pages=True,
    share_reads=True,
)

_active = LIBRARY


def current() -> ProcessPolicy:
    """The policy in force (:data:`LIBRARY` until a caller enters another)."""
    return _active


def enter(policy: ProcessPolicy) -> None:
    """Make ``policy`` the one in force for the rest of the process.

    With ``blas_one_thread``, numpy's BLAS is held to one thread, and with ``small_pages`` its
    arrays are kept off transparent huge pages, unless the environment already says otherwise;
    both take effect only when numpy has not been imported yet.
    """
    global _active
    for on, env in ((policy.blas_one_thread, BLAS_ONE_THREAD), (policy.small_pages, SMALL_PAGES)):
        for name, value in env.items() if on else ():
            os.environ.setdefault(name, value)
    _active = policy


@contextmanager
def using(policy: ProcessPolicy) -> Iterator[ProcessPolicy]:
    """``policy`` in force inside the block, the one before after it (tests, benchmarks)."""
    global _active
    before = _active
    _active = policy
    try:
        yield policy
    finally:
        _active = before


class InlineExecutor(Executor):
    """An executor that runs each task at once in the calling thread (a pool of size 0): the
    task's result or error is in its future, as a pool would hand it."""

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> Future[_T]:
        out: Future[_T] = Future()
        try:
            out.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the caller by out.result(), as a pool does
            out.set_exception(exc)
        return out


@contextmanager
def pool(name: str, limit: int | None = None) -> Iterator[Executor]:
    """An executor for pool ``name`` of the policy in force: its threads (at most ``limit``
    when given), or the calling thread when it has none. Shut down (waiting) when the block ends.
    """
    n = current().threads(name)
    if limit is not None:
        n = min(n, limit)
    if n <= 0:
        yield InlineExecutor()
        return
    with ThreadPoolExecutor(n, thread_name_prefix=f"gamut-{name}") as executor:
        yield executor


def describe(policy: ProcessPolicy) -> dict[str, Any]:
    """``policy`` as plain data (the benchmark prints it)."""
    return {
        "pools": {name: policy.threads(name) for name in POOLS},
        **{name: getattr(policy, name) for name in SWITCHES},
    }


__all__ = [
    "ARROW_THREADS",
    "BLAS_ONE_THREAD",
    "COMMAND_LINE",
    "LIBRARY",
    "POOLS",
    "SWITCHES",
    "InlineExecutor",
    "ProcessPolicy",
    "current",
    "describe",
    "enter",
    "pool",
    "using",
]
