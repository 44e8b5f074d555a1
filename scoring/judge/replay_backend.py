"""The ``replay`` judge backend: stored verdicts from a Parquet file; it never calls out."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from scoring.errors import BackendError, ErrorKind, GamutError
from scoring.judge.backends import BulkReply, Completion, JudgeRequest, Turn
from scoring.judge.pairs import BulkBackend, PairPlan
from scoring.judge.spec import JudgeConfig
from scoring.verdicts import PAIR_KEY, VERDICT_ORDER

REPLAY_COLUMNS = (*PAIR_KEY, "verdict")

_Key = tuple[str, str, str, str]


def _category(col: pd.Series) -> pd.Series:
    """An id column as a categorical of strings (as read, when Parquet gave one)."""
    if isinstance(col.dtype, pd.CategoricalDtype) and pd.api.types.is_string_dtype(
        col.cat.categories
    ):
        return col.cat.rename_categories([str(c) for c in col.cat.categories])
    return col.astype(str).astype("category")


class ReplayBackend(BulkBackend):
    """Replays a verdict file keyed by (submission_id, setting, question_id, check_id)."""

    keyed_by_ids = True
    calls_out = False

    def __init__(self, name: str, judge: JudgeConfig, api_key: str | None, root: Path) -> None:
        super().__init__(name, judge, api_key, root)
        if judge.replay is None:
            raise GamutError(f"judge {name!r}: provider 'replay' needs a 'replay' file path")
        self._path = judge.replay if judge.replay.is_absolute() else root / judge.replay
        self._unrecorded = judge.unrecorded  # what answers a request the file does not hold
        h = hashlib.sha256()
        try:
            with self._path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as exc:
            raise self._unreadable(exc) from None
        self._digest = h.hexdigest()[:16]
        self._frame: pd.DataFrame | None = None
        self._rows: dict[_Key, str] | None = None

    def _unreadable(self, exc: Exception) -> GamutError:
        return GamutError(
            f"judge {self.name!r}: cannot read replay file {self._path}: {exc} "
            "(regenerate it, or fix the judge's replay path in the config)"
        )

    def _table(self) -> pd.DataFrame:
        """The replay rows: the four ids as categories, ``code`` and ``rationale``."""
        if self._frame is not None:
            return self._frame
        try:
            names = pq.read_schema(self._path).names
            ids = [c for c in REPLAY_COLUMNS[:4] if c in names]
            # the ids read as categories straight from Parquet: no Python string per row
            df = pq.read_table(self._path, read_dictionary=ids).to_pandas()
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise self._unreadable(exc) from None
        missing = [c for c in REPLAY_COLUMNS if c not in df.columns]
        if missing:
            raise GamutError(
                f"judge {self.name!r}: replay file {self._path} lacks column(s) "
                f"{', '.join(missing)}"
            )
        verdicts = df["verdict"]
        if pd.api.types.is_integer_dtype(verdicts):
            codes = verdicts.to_numpy()
            bad = (codes < 0) | (codes >= len(VERDICT_ORDER))
        else:
            cat = pd.Categorical(verdicts.astype(str), categories=[v.value for v in VERDICT_ORDER])
            codes = cat.codes
            bad = codes < 0
        if bad.any():
            raise GamutError(
                f"judge {self.name!r}: replay file {self._path} has {int(bad.sum())} unknown "
                f"verdict(s) (use one of {', '.join(v.value for v in VERDICT_ORDER)})"
            )
        out = pd.DataFrame({c: _category(df[c]) for c in REPLAY_COLUMNS[:4]})
        out["code"] = codes.astype(np.int8)
        out["rationale"] = (
            df["rationale"].astype(str).replace("", "replayed")
            if "rationale" in df.columns
            else "replayed"
        )
        self._frame = out
        return out

    def identity_extra(self) -> str:
        """The replay file's content digest (a regenerated file is a different judge), and the
        offline matcher's version when it answers what the file does not hold."""
        if self._unrecorded == "offline-match":
            from scoring.judge.offline_match import MATCHER_VERSION

            return f"{self._digest}+{MATCHER_VERSION}"
        return self._digest

    def bulk(self, plan: PairPlan, pairs: npt.NDArray[np.int64]) -> BulkReply:
        """Every requested pair's stored verdict, by a columnar join on the four ids."""
        df = self._table()
        units, checks = plan.units, plan.table.checks
        unit, check = plan.unit[pairs], plan.check[pairs]
        cols = [
            ([u.submission_id for u in units], unit),
            ([u.setting.value for u in units], unit),
            ([u.question_id for u in units], unit),
            ([c.check_id for c in checks], check),
        ]
        stored = np.zeros(len(df), dtype=np.int64)
        asked = np.zeros(len(pairs), dtype=np.int64)
        unknown = np.zeros(len(pairs), dtype=bool)
        for name, (values, idx) in zip(REPLAY_COLUMNS[:4], cols, strict=True):
            cats = df[name].cat.categories
            width = len(cats) + 1
            codes = cats.get_indexer(pd.Index(values)).astype(np.int64)[idx]  # -1: unknown
            unknown |= codes < 0
            stored = stored * width + df[name].cat.codes.to_numpy().astype(np.int64)
            asked = asked * width + codes
        index = pd.Index(stored)
        first = ~index.duplicated(keep="first")
        index = pd.Index(stored[first])
        row = np.where(unknown, -1, index.get_indexer(pd.Index(asked)))
        found = row >= 0
        rows = np.flatnonzero(first)[np.where(found, row, 0)]
        codes = df["code"].to_numpy()[rows]
        rationales = df["rationale"].to_numpy(dtype=object)[rows]
        # a bulk request is this judge's whole plan: the rows are not needed again this run
        self._frame = None
        codes = codes.astype(np.int8)
        if self._unrecorded == "offline-match" and not found.all():
            from scoring.judge.offline_match import match_verdict

            rationales = rationales.copy()
            for at in np.flatnonzero(~found):
                u, c = units[int(unit[at])], checks[int(check[at])]
                m = match_verdict(c.kind, c.text, u.response)
                codes[at], rationales[at] = m.verdict.code, m.rationale
            found = np.ones(len(pairs), dtype=bool)
        return BulkReply(codes, found, rationales)

    async def complete(self, request: JudgeRequest, turns: tuple[Turn, ...] = ()) -> Completion:
        """The stored reply for the request's ids."""
        if self._rows is None:
            df = self._table()
            cols = [df[c].astype(str).tolist() for c in REPLAY_COLUMNS[:4]]
            words = [VERDICT_ORDER[int(c)].value for c in df["code"]]
            self._rows = {}
            for s, st, q, c, w, r in zip(*cols, words, df["rationale"].tolist(), strict=True):
                self._rows.setdefault((s, st, q, c), json.dumps({"verdict": w, "rationale": r}))
        key = (request.submission_id, request.setting.value, request.question_id, request.check_id)
        text = self._rows.get(key)
        if text is None and self._unrecorded == "offline-match":
            from scoring.judge.offline_match import match_verdict

            m = match_verdict(request.kind, request.check, request.response)
            text = json.dumps({"verdict": m.verdict.value, "rationale": m.rationale})
        if text is None:
            raise BackendError(
                ErrorKind.REJECTED,
                f"no stored verdict for {'/'.join(key)} in the replay file of judge {self.name!r}",
            )
        return Completion(text=text)
