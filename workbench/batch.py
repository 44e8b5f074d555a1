"""Batch mode for the workbench's LLM steps: a judge with ``mode = "batch"`` answers through its
provider's batch API, the judge's own (:mod:`scoring.judge.batch.api`: OpenAI Files and Batches,
Anthropic Message Batches), recorded in the workbench's ``batches.json``.

A step run in batch mode first collects every finished batch (replies kept by request), then
asks as in direct mode: a request already answered gets its reply, one in flight or new is
:class:`Deferred` (the step goes on with its other items), and the new ones are submitted when
the step ends, in chunks within the provider's limits. Running the step again collects what
finished and goes on from there: resumable, as the judge's batch mode. A batch is recorded
(``submitting``, with its requests) before it is created, so one created by a run killed in
between is found again by its tag (OpenAI metadata) or its size and time (Anthropic), as the
judge's runner does; one the provider does not have is ``lost`` and its requests are asked
again. A request the provider refused fails its step once (the message names its class and
status, never the provider's text: the prompts are held text) and is asked anew next time;
expired, cancelled and transient results are asked again without failing.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scoring.judge.batch.api import (
    RESUBMIT_KINDS,
    BatchAPI,
    BatchLine,
    Limits,
    batch_backend,
    split,
)
from scoring.judge.batch.book import FINAL_STATES, PENDING
from scoring.judge.batch.runner import chunk_tag
from workbench.llm import Deferred, LLMError, LLMRequest, ProviderLLM, json_reply
from workbench.store import Workbench

if TYPE_CHECKING:
    from scoring.judge.spec import JudgeConfig

BATCHES = "batches.json"


def request_id(judge: str, model: str, request: LLMRequest) -> str:
    """A request's custom id: 64 hex digits of (judge, model, template, key)."""
    text = "\0".join((judge, model, request.template, request.key))
    return hashlib.sha256(text.encode()).hexdigest()


class BatchLLM(ProviderLLM):
    """A batch-mode judge's model for one step run (use as a context manager: collects on
    entry, submits on exit).

    Args:
        wb: the workbench whose ``batches.json`` records the batches.
        judge, name, environ, max_tokens, step: as :class:`ProviderLLM` (a reply's usage is
            counted under the step that asked, whichever step's run collects it).

    Attributes:
        deferred: requests of this run waiting for a batch (submitted now or earlier).
        submitted: requests submitted by this run, and ``batches`` the batches created.
        collected: replies collected by this run.
    """

    def __init__(
        self,
        wb: Workbench,
        judge: JudgeConfig,
        name: str,
        environ: Mapping[str, str] | None = None,
        max_tokens: int | None = None,
        step: str = "",
    ) -> None:
        super().__init__(judge, name, environ, max_tokens, step)
        from scoring.judge.providers import REGISTRY

        backend = REGISTRY.backend_class(judge.provider)(name, judge, self._api_key, wb.root)
        self.wb = wb
        self.api: BatchAPI = batch_backend(backend).batch_api(held=True)
        self.state: dict[str, dict[str, Any]] = wb.read(BATCHES, {"requests": {}, "batches": {}})
        self._queue: list[BatchLine] = []
        self.deferred = self.submitted = self.batches = self.collected = 0

    def __enter__(self) -> BatchLLM:
        self.collect()
        return self

    def _save(self) -> None:
        self.wb.write(BATCHES, self.state)

    def collect(self) -> None:
        """Collect every finished batch: replies kept, failures noted, the rest asked again."""
        requests, batches = self.state["requests"], self.state["batches"]
        known = frozenset(batches)
        for bid, b in list(batches.items()):
            if b["state"] in FINAL_STATES:
                continue
            if b["state"] == "submitting":
                found = self.api.find(b["tag"], b["created"], frozenset(b["ids"]), known)
                if found.waiting:
                    continue  # one that may be it is still running: shown when it ends
                if not found.batch_ids:
                    b["state"] = "lost"
                    for cid in b["ids"]:
                        requests.pop(cid, None)
                    continue
                bid = found.batch_ids[0]
                batches[bid] = {**b, "state": "submitted"}
                b["state"] = "created"
                b = batches[bid]
                for cid in b["ids"]:
                    if cid in requests:
                        requests[cid].update(state="submitted", batch=bid)
            st = self.api.status(bid)
            if not st.finished:
                b["state"] = st.state
                continue
            ids = set(b["ids"])
            if st.failed:
                for cid in ids:
                    self._fail(cid, f"batch {bid} failed: {st.message}")
            else:
                for res in self.api.results(bid):
                    cid = res.custom_id
                    if cid not in ids or requests.get(cid, {}).get("batch") != bid:
                        continue
                    ids.discard(cid)
                    comp = res.completion
                    if comp is not None:
                        rec = requests[cid]
                        rec.update(state="done", text=comp.text)
                        step = str(rec.get("step", self.step))
                        self.usage[step].add(comp.tokens_in, comp.tokens_cached, comp.tokens_out)
                        self.collected += 1
                    elif res.error_kind in RESUBMIT_KINDS:
                        del requests[cid]
                    else:
                        self._fail(cid, res.message or res.error_kind)
                for cid in ids:  # no result: asked again
                    if requests.get(cid, {}).get("batch") == bid:
                        del requests[cid]
            b["state"] = "collected"
        for cid in [c for c, r in requests.items() if r["state"] == "queued"]:
            del requests[cid]  # queued by a run that ended before submitting: asked again
        self._save()

    def _fail(self, cid: str, message: str) -> None:
        rec = self.state["requests"].get(cid)
        if rec is not None:
            rec.update(state="failed", error=message)

    def complete(self, request: LLMRequest) -> Any:
        """The collected reply to ``request``; else it is queued (or already in flight).

        Raises:
            Deferred: the request waits for its batch.
            LLMError: its batch request failed (asked anew when the step runs again), or the
                reply is not JSON.
        """
        cid = request_id(self.name, self.judge.model, request)
        rec = self.state["requests"].get(cid)
        if rec is not None and rec["state"] == "done":
            return json_reply(request, rec["text"])
        if rec is not None and rec["state"] == "failed":
            del self.state["requests"][cid]
            raise LLMError(
                f"{request.template} request for {request.key}: the judge {self.name} batch "
                f"request failed ({rec['error']}); run the step again (it asks again)"
            )
        self.deferred += 1
        if rec is None:
            body = self._generator(request.system).body(self.call(request))
            self._queue.append(self.api.line(cid, body))
            self.state["requests"][cid] = {
                "template": request.template,
                "key": request.key,
                "step": self.step,
                "state": "queued",
            }
        raise Deferred(f"{request.template} request for {request.key} waits for its batch")

    def submit(self) -> None:
        """Submit the queued requests in batches within the provider's limits, each recorded
        before it is created and again with the provider's id."""
        lim = self.api.limits
        if self.judge.batch_max_requests is not None:
            lim = Limits(min(lim.max_requests, self.judge.batch_max_requests), lim.max_bytes)
        run = secrets.token_hex(8)
        requests, batches = self.state["requests"], self.state["batches"]
        queue, self._queue = self._queue, []
        for chunk in split(queue, lim):
            tag = chunk_tag(chunk, run)
            ids = [ln.custom_id for ln in chunk]
            batches[PENDING + tag] = {
                "tag": tag,
                "state": "submitting",
                "created": time.time(),
                "ids": ids,
            }
            self._save()
            bid = self.api.submit(chunk, tag)
            batches[bid] = {**batches[PENDING + tag], "state": "submitted"}
            batches[PENDING + tag]["state"] = "created"
            for cid in ids:
                requests[cid].update(state="submitted", batch=bid)
            self._save()
            self.submitted += len(ids)
            self.batches += 1

    def in_flight(self) -> int:
        """Requests submitted and not collected yet (every step's)."""
        return sum(1 for r in self.state["requests"].values() if r["state"] == "submitted")

    def close(self) -> None:
        """Submit what this run queued (also after a failed step), then close the clients."""
        try:
            self.submit()
            self._save()  # also what this run consumed (a failure is asked anew next time)
        finally:
            try:
                self.api.close()
            finally:
                super().close()


def in_flight(wb: Workbench) -> int:
    """Batch requests of the workbench submitted and not collected yet (for ``status``)."""
    state: dict[str, dict[str, Any]] = wb.read(BATCHES, {"requests": {}})
    return sum(1 for r in state["requests"].values() if r["state"] in ("queued", "submitted"))
