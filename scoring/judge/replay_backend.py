"""The ``replay`` judge backend: stored verdicts from a Parquet file; it never calls out.

The file has the columns ``submission_id, setting, question_id, check_id, verdict, rationale``
(``verdict`` as a word, or as its integer code). A request with no stored row is a failure.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from scoring.errors import GamutError
from scoring.judge.backends import Backend, BackendError, Completion, JudgeRequest, Turn
from scoring.judge.spec import JudgeConfig
from scoring.verdicts import VERDICT_ORDER

REPLAY_COLUMNS = ("submission_id", "setting", "question_id", "check_id", "verdict")

_Key = tuple[str, str, str, str]


class ReplayBackend(Backend):
    """Replays a verdict file keyed by (submission_id, setting, question_id, check_id)."""

    keyed_by_ids = True
    calls_out = False

    def __init__(self, name: str, judge: JudgeConfig, api_key: str | None, root: Path) -> None:
        super().__init__(name, judge, api_key, root)
        if judge.replay is None:
            raise GamutError(f"judge {name!r}: provider 'replay' needs a 'replay' file path")
        path = judge.replay if judge.replay.is_absolute() else root / judge.replay
        try:
            data = path.read_bytes()
            df = pd.read_parquet(path)
        except (OSError, ValueError) as exc:
            raise GamutError(
                f"judge {name!r}: cannot read replay file {path}: {exc} "
                "(regenerate it, or fix the judge's replay path in the config)"
            ) from None
        missing = [c for c in REPLAY_COLUMNS if c not in df.columns]
        if missing:
            raise GamutError(
                f"judge {name!r}: replay file {path} lacks column(s) {', '.join(missing)}"
            )
        self._digest = hashlib.sha256(data).hexdigest()[:16]
        verdicts = df["verdict"]
        if pd.api.types.is_integer_dtype(verdicts):
            words = [VERDICT_ORDER[int(v)].value for v in verdicts]
        else:
            words = [str(v) for v in verdicts]
        rationales = (
            df["rationale"].astype(str).tolist()
            if "rationale" in df.columns
            else ["replayed"] * len(df)
        )
        cols = [df[c].astype(str).tolist() for c in REPLAY_COLUMNS[:4]]
        self._rows: dict[_Key, str] = {
            (s, st, q, c): json.dumps({"verdict": w, "rationale": r or "replayed"})
            for s, st, q, c, w, r in zip(*cols, words, rationales, strict=True)
        }

    def identity_extra(self) -> str:
        """The replay file's content digest: a regenerated file is a different judge."""
        return self._digest

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """The stored reply for the request's ids."""
        key = (request.submission_id, request.setting.value, request.question_id, request.check_id)
        text = self._rows.get(key)
        if text is None:
            raise BackendError(
                "rejected",
                f"no stored verdict for {'/'.join(key)} in the replay file of judge {self.name!r}",
            )
        return Completion(text=text)
