"""Batch mode: a judge with ``mode = "batch"`` answers the LLM steps through its provider's
batch API, recorded in ``batches.json``. A step collects finished batches first; a request in
flight or new is :class:`Deferred` and the new ones are submitted when the step ends. A batch is
recorded (``submitting``) before it is created, so one a killed run created is found by its tag;
one the provider lacks is ``lost`` and asked again. A refused request fails its step once (never
quoting the provider's text: the prompts are held) and is asked anew next time.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import TYPE_CHECKING, Any

from scoring.judge.batch.api import (
    RESUBMIT_KINDS,
    BatchBackend,
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
    """A batch-mode judge's model for one step run (a context manager: collects on entry,
    submits on exit); a reply's usage is counted under the step that asked. ``deferred``,
    ``submitted``, ``batches`` and ``collected`` count this run's requests and batches."""

    def __init__(
        self,
        wb: Workbench,
        judge: JudgeConfig,
        name: str,
        max_tokens: int | None = None,
        step: str = "",
    ) -> None:
        super().__init__(judge, name, max_tokens, step)
        from scoring.judge import providers

        backend = providers.backend_class(judge.provider)(name, judge, self._api_key, wb.root)
        self.wb = wb
        self.api: BatchBackend = batch_backend(backend)
        self.api.held = True
        self.state: dict[str, dict[str, Any]] = wb.read(BATCHES, {"requests": {}, "batches": {}})
        self._queue: list[BatchLine] = []
        self.deferred = self.submitted = self.batches = self.collected = 0

    def __enter__(self) -> BatchLLM:
        self.collect()
        return self

    def _save(self) -> None:
        self.wb.write(BATCHES, self.state)

    def _created(self, pending: dict[str, Any], bid: str) -> dict[str, Any]:
        """Record the batch ``pending`` as created with id ``bid``, its requests in it."""
        b = self.state["batches"][bid] = {**pending, "state": "submitted"}
        pending["state"] = "created"
        for cid in b["ids"]:
            if cid in self.state["requests"]:
                self.state["requests"][cid].update(state="submitted", batch=bid)
        return b

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
                b = self._created(b, bid)
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
        """The collected reply to ``request``; else Deferred (queued or in flight), or LLMError
        when its batch request failed (asked anew next run) or the reply is not JSON."""
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
        before it is created and again with its id."""
        lim = self.api.limits
        if self.judge.batch_max_requests is not None:
            lim = Limits(min(lim.max_requests, self.judge.batch_max_requests), lim.max_bytes)
        run = secrets.token_hex(8)
        batches = self.state["batches"]
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
            self._created(batches[PENDING + tag], self.api.submit(chunk, tag))
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
                self.api.close_batches()
            finally:
                super().close()


def in_flight(wb: Workbench) -> int:
    """Batch requests of the workbench submitted and not collected yet (for ``status``)."""
    state: dict[str, dict[str, Any]] = wb.read(BATCHES, {"requests": {}})
    return sum(1 for r in state["requests"].values() if r["state"] in ("queued", "submitted"))
