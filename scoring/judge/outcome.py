"""What a judge run did: per-judge counts, tokens, cost and failures."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: What a failure says when rubrics are held, by its kind: a judge's reply, a provider's error
#: body and an exception's text can each quote the prompt (and so a held check), so none of
#: them is ever shown; see :func:`held_message`.
HELD_WORDING = {
    "bad_output": "no reply was a valid verdict (the replies are not shown: rubrics are held)",
    "bad_body": "the provider's reply body was unusable",
    "bad_line": "the provider's result line was unusable",
    "too_large": "the provider's reply was over the size limit",
    "api_error": "the provider failed (transient errors; asked again by the next run)",
    "rejected": "the provider refused the request",
    "expired": "the batch expired before this request was answered",
    "canceled": "the batch was cancelled before this request was answered",
    "deadline": "the run stopped (deadline or interrupt) while this call was in flight",
}
#: The words of a failure kept beside the fixed wording when rubrics are held: an HTTP status
#: and the names the SDKs and the providers give their errors (a closed list: a provider's
#: word outside it is dropped, it could be any text).
_HELD_KEEP = re.compile(
    r"\b(HTTP [1-5][0-9]{2}|(?:BadRequest|Authentication|PermissionDenied|NotFound|Conflict|"
    r"UnprocessableEntity|RateLimit|InternalServer|APIConnection|APITimeout|APIStatus|API|"
    r"APIResponseValidation)Error|invalid_request_error|authentication_error|permission_error|"
    r"not_found_error|rate_limit_error|api_error|overloaded_error|request_too_large|"
    r"billing_error|timeout_error|server_error|rate_limit_exceeded|insufficient_quota|"
    r"invalid_api_key|model_not_found|context_length_exceeded|content_filter|"
    # OpenAI's batch validation codes (a whole batch failed)
    r"invalid_file|invalid_json_line|empty_file|duplicate_custom_id|mismatched_model|"
    r"missing_required_parameter|invalid_url|max_file_size_exceeded|token_limit_exceeded|"
    r"too_many_tasks)\b"
)


def held_message(kind: str, message: str) -> str:
    """``message`` as kept when rubrics are held: the fixed wording of ``kind``, with the HTTP
    status and error names found in ``message`` (from a closed list), and nothing else of it."""
    said = HELD_WORDING.get(kind, f"the request failed ({kind})")
    kept = list(dict.fromkeys(_HELD_KEEP.findall(message)))
    return f"{said}: {', '.join(kept)}" if kept else said


@dataclass(frozen=True)
class Failure:
    """A (response, check) that got no verdict in this run; it is retried on the next."""

    judge: str
    submission_id: str
    setting: str
    question_id: str
    check_id: str
    kind: str
    message: str
    raw: str = ""

    def __str__(self) -> str:
        return (
            f"{self.judge} {self.submission_id}/{self.setting}/{self.question_id}/"
            f"{self.check_id}: {self.kind}: {self.message}"
        )


@dataclass
class JudgeStats:
    """What one judge did in a run (or, for a dry run, would do)."""

    judge: str
    label: str
    identity: str
    checks: int = 0
    cache_hits: int = 0
    empty: int = 0
    planned: int = 0
    judged: int = 0
    calls: int = 0
    reasks: int = 0
    unfinished: int = 0
    tokens_in: int = 0
    tokens_cached: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    est_tokens_in: int = 0
    est_tokens_cached: int = 0
    est_tokens_out: int = 0
    cost: float | None = None
    #: ``direct`` or ``batch``.
    mode: str = "direct"
    #: Estimated cost of the planned calls in each mode (None: no prices configured).
    est_cost: dict[str, float | None] = field(default_factory=dict)
    #: Batch mode: requests submitted in this run, in how many batches.
    submitted: int = 0
    batches_submitted: int = 0
    #: Batch mode: batches collected in this run; requests asked again without counting an
    #: attempt (expired, cancelled, transient errors, no result).
    batches_collected: int = 0
    resubmitted: int = 0
    #: Batch mode: requests still in flight at the end of the run.
    in_flight: int = 0
    #: Results that matched no open request (already judged, duplicated or foreign ids).
    ignored_results: int = 0
    #: Batch mode: results of other runs' requests (submissions this run does not plan) found
    #: in the batches it collected: stored as verdicts, or recorded as failed for that run to
    #: ask again (never listed among this run's failures).
    judged_for_others: int = 0
    failed_for_others: int = 0
    #: Batch mode: batches given up in this run (their results could not be read in
    #: ``MAX_READ_TRIES`` tries; their requests asked again).
    unreadable: list[str] = field(default_factory=list)
    #: ``--collect-only``: pairs without a verdict or a request in flight, left unasked for an
    #: approved run to submit.
    waiting: int = 0
    #: Direct mode: why the judge's breaker stopped it ("" when it did not).
    stopped: str = ""
    #: Direct mode: answers that asked the judge to slow down (429, 503, 529).
    rate_limited: int = 0
    failures: list[Failure] = field(default_factory=list)
    #: what the run had to skip (a provider's result line that names no request), for people
    notes: list[str] = field(default_factory=list)


@dataclass
class JudgeReport:
    """The outcome of :func:`judge_all`."""

    judges: dict[str, JudgeStats]
    dry_run: bool
    elapsed_s: float = 0.0
    #: what the run had to repair (a corrupt working index rebuilt, ...), for people
    notes: list[str] = field(default_factory=list)
    #: judges stopped before their first request (a failed preflight): name -> why
    stopped: dict[str, str] = field(default_factory=dict)

    @property
    def failures(self) -> list[Failure]:
        """Every failure of every judge."""
        return [f for s in self.judges.values() for f in s.failures]

    @property
    def ok(self) -> bool:
        """True when every planned call ended with a verdict."""
        return (
            not self.failures
            and not self.stopped
            and not any(s.unfinished for s in self.judges.values())
        )

    @property
    def waiting(self) -> int:
        """Pairs a ``--collect-only`` run left unasked, over every judge."""
        return sum(s.waiting for s in self.judges.values())

    @property
    def in_flight(self) -> int:
        """Batch requests still in flight, over every judge."""
        return sum(s.in_flight for s in self.judges.values())

    def summary_lines(self) -> list[str]:
        """One human-readable line per judge (never any rubric or response text)."""
        out = [f"stopped before judging: {why}" for why in self.stopped.values()]
        for s in self.judges.values():
            if self.dry_run:
                flying = f", {s.in_flight} already in flight" if s.in_flight else ""
                costs = "; ".join(
                    f"{mode} ${c:,.2f}" if c is not None else f"{mode}: no prices configured"
                    for mode, c in s.est_cost.items()
                )
                if s.mode == "offline":
                    out.append(
                        f"{s.judge} ({s.label}, offline): {s.checks} checks, {s.cache_hits} "
                        f"cached, {s.empty} empty responses; would give {s.planned} verdicts "
                        "offline (no call leaves this machine, no tokens, no cost)"
                    )
                    continue
                out.append(
                    f"{s.judge} ({s.label}, {s.mode} mode): {s.checks} checks, {s.cache_hits} "
                    f"cached, {s.empty} empty responses{flying}; would make {s.planned} calls, "
                    f"about {s.est_tokens_in:,} tokens in ({s.est_tokens_cached:,} cacheable) "
                    f"and {s.est_tokens_out:,} out; estimated cost: {costs}"
                )
                continue
            cost = f", cost ${s.cost:.4f}" if s.cost is not None else ""
            why = "stopped" if s.stopped else "deadline"
            extra = f", {s.unfinished} not attempted ({why})" if s.unfinished else ""
            if s.rate_limited:
                extra += f", {s.rate_limited} answers asked to slow down"
            if s.waiting:
                extra += f", {s.waiting} not asked (collect only: an approved run asks them)"
            if s.mode == "batch":
                extra += (
                    f"; batches: {s.batches_collected} collected, {s.batches_submitted} "
                    f"submitted ({s.submitted} requests, {s.resubmitted} asked again), "
                    f"{s.in_flight} requests in flight"
                )
                if s.judged_for_others or s.failed_for_others:
                    extra += (
                        f", {s.judged_for_others} verdicts stored for other submissions' "
                        f"requests ({s.failed_for_others} failed, left to their runs)"
                    )
                if s.unreadable:
                    extra += (
                        f", {len(s.unreadable)} batch(es) unreadable, their requests asked "
                        f"again: {', '.join(s.unreadable)}"
                    )
                if s.ignored_results:
                    extra += f", {s.ignored_results} results ignored (already judged or foreign)"
            how = (  # as the dry run says it: a replayed verdict is no call
                f"{s.judged} given offline (no call left this machine)"
                if s.mode == "offline"
                else f"{s.judged} judged with {s.calls} calls ({s.reasks} re-asks)"
            )
            out.append(
                f"{s.judge} ({s.label}): {s.checks} checks: {s.cache_hits} cache hits, "
                f"{s.empty} empty, {how}, {len(s.failures)} failed{extra}; tokens "
                f"{s.tokens_in:,} in ({s.tokens_cached:,} cached), {s.tokens_out:,} "
                f"out{cost}"
            )
            if s.stopped:
                out.append(s.stopped)
        return out
