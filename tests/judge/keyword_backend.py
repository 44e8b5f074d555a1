"""A judge backend that lives outside the engine, registered by name in a test.

It answers ``meets`` when the check's last word appears in the response and ``missing`` otherwise,
so its verdicts follow from the texts and a test can predict them.
"""

from __future__ import annotations

import json

from scoring.judge import Backend, Completion, JudgeRequest, Turn


class KeywordBackend(Backend):
    """Verdicts from word overlap; never calls out."""

    calls_out = False

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """``meets`` if the check's last word is in the response, else ``missing``."""
        word = request.check.rstrip(".").split()[-1].lower()
        verdict = "meets" if word in request.response.lower() else "missing"
        return Completion(text=json.dumps({"verdict": verdict, "rationale": f"looked for {word}"}))
