"""Pacing a judge's requests: :class:`Pacer` asks the judge for one reply, through the judge's one
named concurrency limiter (:class:`Limiter`), retrying what is transient, and stops the judge
through its circuit breaker (:class:`Breaker`).

The limiter keeps an AIMD window of requests in flight, holds the whole judge for a
``Retry-After``, and keeps stated per-minute request and token budgets at :data:`HEADROOM` by
token buckets. The breaker stops a judge after :data:`BREAK_REJECTED` refusals or
:data:`BREAK_OTHER` other failures in a row (rate limits only pace). The SDK's own retries are
off, so every request the provider sees passed through the limiter.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from scoring.errors import BackendError, ErrorKind, Stopped
from scoring.judge.backends import Backend, Completion, JudgeRequest, Turn, estimated_tokens
from scoring.judge.outcome import held_message

#: Requests a judge may have in flight before its first success.
FIRST_WINDOW = 4
#: Share of the stated limits the budgets spend (the provider's count of a request's tokens is
#: not ours, and its clock is not ours).
HEADROOM = 0.97
#: Seconds' worth of the limits a budget may spend at once.
BURST_S = 0.5
#: Requests in a row refused the same way (4xx, or a body saying the request is invalid) that
#: stop a judge.
BREAK_REJECTED = 5
#: Requests in a row failing the same other way (unusable reply, server error) that stop it.
BREAK_OTHER = 10
#: A run of the same server error stops a judge only once it has lasted this long (a provider's
#: brief outage is waited out by the retries).
BREAK_TRANSIENT_S = 60.0
#: Rate-limited answers one request may get before it fails.
MAX_RATE_LIMITED = 10


class Outcome(Enum):
    """How a request ended, as the pacer sees it."""

    OK = "ok"
    #: rate limited or overloaded: slow down.
    SLOW_DOWN = "slow_down"
    #: any other failure: no sign of congestion.
    FAILED = "failed"


@dataclass
class _Bucket:
    """A token bucket: ``rate`` per second (at most ``stated``), at most ``size`` held; may go
    into debt by one request (a request larger than the bucket still goes, when it is full)."""

    stated: float
    size: float
    level: float
    at: float
    rate: float = 0.0

    def __post_init__(self) -> None:
        self.rate = self.stated

    def slow(self) -> None:
        """The provider refused a request: a tenth slower (down to half the stated rate)."""
        self.rate = max(self.stated / 2, self.rate * 0.9)

    def recover(self) -> None:
        """A request went through: back towards the stated rate (a 10% cut in ~50 requests)."""
        self.rate = min(self.stated, self.rate + self.stated * 0.002)

    def wait(self, now: float, cost: float) -> float:
        """Seconds until ``cost`` may be spent (0: now)."""
        self.level = min(self.size, self.level + (now - self.at) * self.rate)
        self.at = now
        need = min(cost, self.size)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def spend(self, cost: float) -> None:
        self.level -= cost


def _bucket(per_minute: int | None, now: float) -> _Bucket | None:
    if per_minute is None:
        return None
    rate = per_minute * HEADROOM / 60.0
    size = max(rate * BURST_S, 1.0)
    return _Bucket(rate, size, size, now)


class Limiter:
    """The one concurrency limiter of a judge (see the module's docstring)."""

    def __init__(
        self,
        name: str,
        max_concurrency: int,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.max = max_concurrency
        self._clock = clock
        now = clock()
        self._requests = _bucket(requests_per_minute, now)
        self._tokens = _bucket(tokens_per_minute, now)
        self.window = float(min(FIRST_WINDOW, max_concurrency))
        self._threshold = float(max_concurrency)
        self._proven = False
        self._last_cut = -1.0
        self.hold_until = 0.0
        self.in_flight = 0
        self._gate = asyncio.Lock()  # FIFO: one waiter at a time is at the head
        self._freed = asyncio.Event()
        #: rate limits and overloads met so far
        self.slowed = 0

    def _wait(self, now: float, tokens: int) -> float | None:
        """Seconds until a request of ``tokens`` may start (0: now; None: when one ends)."""
        if self.in_flight >= int(self.window):
            return None
        waits = [self.hold_until - now]
        if self._requests is not None:
            waits.append(self._requests.wait(now, 1.0))
        if self._tokens is not None:
            waits.append(self._tokens.wait(now, float(tokens)))
        return max(0.0, *waits)

    async def acquire(self, tokens: int) -> float:
        """Wait until a request of about ``tokens`` tokens may start, and count it in flight."""
        async with self._gate:
            while True:
                now = self._clock()
                wait = self._wait(now, tokens)
                if wait is None:
                    self._freed.clear()
                    await self._freed.wait()
                elif wait > 0:
                    await asyncio.sleep(wait)
                else:
                    break
            if self._requests is not None:
                self._requests.spend(1.0)
            if self._tokens is not None:
                self._tokens.spend(float(tokens))
            self.in_flight += 1
            return now

    def release(self, started: float, outcome: Outcome, retry_after: float | None = None) -> None:
        """A request that started at ``started`` ended with ``outcome``; ``retry_after`` is the
        provider's ``Retry-After`` (seconds), if it sent one."""
        self.in_flight -= 1
        now = self._clock()
        budgets = [b for b in (self._requests, self._tokens) if b is not None]
        if outcome is Outcome.OK:
            if self._proven:
                self._grow()
            for b in budgets:
                b.recover()
        elif outcome is Outcome.SLOW_DOWN:
            self.slowed += 1
            if started >= self._last_cut:  # once per round trip
                self._last_cut = now
                for b in budgets:  # the budgets pace: slow them, not the window
                    b.slow()
                if not budgets:
                    self.window = max(1.0, self.window / 2)
                    self._threshold = self.window
        else:
            self.useless()
        if retry_after is not None:
            self.hold_until = max(self.hold_until, now + min(retry_after, 600.0))
        self._freed.set()

    def cancel(self) -> None:
        """A request acquired but never sent."""
        self.in_flight -= 1
        self._freed.set()

    def useful(self) -> None:
        """A reply was usable: the first one opens the window (to ``max_concurrency`` when the
        budgets pace the judge; else it keeps growing from here)."""
        if not self._proven:
            self._proven = True
            if self._requests is not None or self._tokens is not None:
                self.window = float(self.max)
            self._freed.set()

    def useless(self) -> None:
        """A reply was unusable: before the first usable one, one request at a time."""
        if not self._proven:
            self.window = 1.0

    def _grow(self) -> None:
        if self.window < self._threshold:
            self.window += 1.0
        else:
            self.window += 1.0 / self.window
        self.window = min(self.window, float(self.max))


class Breaker:
    """Stops a judge whose requests fail the same way again and again (see the module's
    docstring). ``stopped`` is the one message that says why, once it has tripped."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._same = ""
        self._count = 0
        self._since = 0.0
        self.stopped = ""

    def ok(self) -> None:
        """A request gave a usable reply."""
        self._same, self._count = "", 0

    def failed(
        self, same: str, rejected: bool, transient: bool, message: Callable[[], str]
    ) -> None:
        """A request failed; ``same`` names the failure (two failures are the same when their
        ``same`` is); ``message()`` says what to change, and is called only on tripping."""
        now = self._clock()
        if same != self._same:
            self._same, self._count, self._since = same, 0, now
        self._count += 1
        if rejected:
            trip = self._count >= BREAK_REJECTED
        else:
            lasted = not transient or now - self._since >= BREAK_TRANSIENT_S
            trip = self._count >= BREAK_OTHER and lasted
        if trip and not self.stopped:
            self.stopped = message()


def _backoff(n: int) -> float:
    """Seconds before the ``n``-th retry (1, 2, ...): 0.5 s doubling to 8 s, with jitter."""
    return min(8.0, 0.5 * 2.0 ** (n - 1)) * (0.75 + 0.25 * random.random())


class Pacer:
    """One judge's requests: through its :class:`Limiter`, retried when transient, stopped by its
    :class:`Breaker`."""

    def __init__(
        self, backend: Backend, held: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        j = backend.judge
        self.backend = backend
        self.held = held
        self.limiter = Limiter(
            backend.name,
            j.max_concurrency if backend.calls_out else 1,
            j.requests_per_minute,
            j.tokens_per_minute,
            clock,
        )
        self.breaker = Breaker(clock)
        self._clock = clock

    async def ask(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """One reply to ``request`` (after ``turns``)."""
        b = self.backend
        tokens = estimated_tokens(request, turns, b.judge.max_tokens)
        errors = limited = 0
        while True:
            started = await self.limiter.acquire(tokens)
            if self.breaker.stopped:  # tripped while this request waited
                self.limiter.cancel()
                raise Stopped(self.breaker.stopped)
            try:
                comp = await b.complete(request, turns)
            except BackendError as exc:
                slow = exc.slow_down
                if slow:
                    limited += exc.status == 429
                    errors += exc.status != 429
                    hold = exc.retry_after if exc.retry_after is not None else _backoff(limited)
                    self.limiter.release(started, Outcome.SLOW_DOWN, hold)
                else:
                    self.limiter.release(started, Outcome.FAILED)
                if not (slow and exc.status == 429):  # rate limits pace, never break
                    self.failed(exc)
                if exc.kind is not ErrorKind.API_ERROR:
                    raise
                errors += not slow
                if limited > MAX_RATE_LIMITED or errors > b.judge.max_retries:
                    raise
                if not slow:
                    wait = exc.retry_after if exc.retry_after is not None else _backoff(errors)
                    await asyncio.sleep(wait)
                continue
            except BaseException:
                self.limiter.release(started, Outcome.FAILED)
                raise
            self.limiter.release(started, Outcome.OK)
            return comp

    def ok(self) -> None:
        """A request gave a usable reply."""
        self.breaker.ok()
        self.limiter.useful()

    def failed(self, exc: BackendError | None, said: str = "") -> None:
        """A request failed with ``exc``, or (None) gave an unusable reply (``said`` says how;
        not shown with held rubrics)."""
        if exc is None:
            same, rejected, transient = "unusable reply", False, False
            self.limiter.useless()
        else:
            same = f"{exc.kind.value} {exc.status} {exc.error_class} {exc.detail}"
            rejected = exc.kind is ErrorKind.REJECTED
            transient = exc.kind is ErrorKind.API_ERROR
        self.breaker.failed(same, rejected, transient, lambda: self._stop_message(exc, said))

    def _stop_message(self, exc: BackendError | None, said: str) -> str:
        """Why the judge stopped and what to change, naming the judge and the error kind."""
        name = self.backend.name
        if exc is None:
            what = "unusable replies" + ("" if self.held else f" (last: {said[:300]})")
            fix = (
                f"the model's replies are not verdicts: set judges.{name}.structured_output = "
                "true where the server supports it, raise its max_tokens, or choose another model"
            )
            n = BREAK_OTHER
        else:
            brief = exc.brief() + (f" {exc.detail}" if exc.detail else "")
            # held: the error body's words only from the closed list (it may echo the prompt)
            what = f"{exc.kind.value}: " + (
                held_message(exc.kind.value, brief) if self.held else str(exc)[:300]
            )
            fix = _fix(name, getattr(self.backend.judge, "api_key_env", None), exc, self.held)
            n = BREAK_REJECTED if exc.kind is ErrorKind.REJECTED else BREAK_OTHER
        return (
            f"judge {name!r} stopped: {n} requests in a row failed the same way ({what}). "
            f"{fix}. Verdicts already stored are kept; the next run asks for the rest"
        )


#: The request body keys a judge sends: the only parameter names a held judge's message repeats
#: from an error body (any other word there could be the prompt's).
_PARAMS = frozenset(
    {
        "model", "messages", "temperature", "seed", "max_tokens", "max_completion_tokens",
        "response_format", "system", "output_config", "stream", "n",
    }
)  # fmt: skip


def _fix(name: str, key_env: str | None, exc: BackendError, held: bool = False) -> str:
    """What to change for the error ``exc`` of judge ``name``."""
    words = set(exc.detail.split())
    if exc.status in (401, 403) or words & {"authentication_error", "invalid_api_key"}:
        where = f"${key_env} (judges.{name}.api_key_env)" if key_env else "the judge's key"
        return f"The provider refuses the key: check {where}"
    if "insufficient_quota" in words:
        return "The account's quota is spent: raise it with the provider, then run again"
    if exc.status == 404 or words & {"model_not_found", "not_found_error"}:
        return f"No such model or endpoint: check judges.{name}.model and judges.{name}.base_url"
    if exc.kind in (ErrorKind.BAD_BODY, ErrorKind.TOO_LARGE):
        return (
            f"The server's reply bodies cannot be read: check that judges.{name}.base_url is "
            f"an API of judges.{name}.provider's kind, and its max_tokens"
        )
    if exc.kind is ErrorKind.REJECTED:
        param = next((w[6:] for w in words if w.startswith("param=")), "")
        param = "" if held and param not in _PARAMS else param
        about = f" (it names the parameter {param!r})" if param else ""
        return (
            f"The server refuses the request itself{about}: check the request settings of "
            f"judges.{name} (structured_output, max_tokens_param, max_tokens, temperature, seed)"
        )
    return (
        f"The server kept failing for over {BREAK_TRANSIENT_S:.0f} s: check judges.{name}.base_url "
        "and that the server is up, then run again"
    )
