"""What the explorer shows beyond the score tables, read through the engine's public formats: the
questions file, each submission's response files (with the engine's response reader) and the
primary judge's rows of ``verdicts.parquet``.

Verdicts arrive as dense arrays (check x model-setting) so that pages never loop over millions of
rows. Check text and rationales are read only when the rubrics are public.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from generator.tables import VERDICT_ID_COLUMNS, VERDICT_TEXT_COLUMNS, ScoreTables, SiteError
from scoring import Tier
from scoring.errors import Problem, ProblemsError
from scoring.layout import SubmissionsLayout
from scoring.questions import Question, Setting, load_questions
from scoring.submissions import ERROR, Limits, read_response_file
from scoring.verdicts import VERDICT_ORDER

SETTINGS = tuple(s.value for s in Setting)
#: Verdict names in code order (0 meets, 1 partially meets, 2 missing, 3 contradicts).
VERDICTS = tuple(v.value for v in VERDICT_ORDER)
TIERS = tuple(t.value for t in Tier)

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Verdicts:
    """The primary judge's verdicts of the shown models, one row per check.

    Attributes:
        groups: (submission_id, setting) of each column.
        question: ``[K]`` question id of each check, checks of one question adjacent.
        check_id, kind, tier: ``[K]`` the check's ids and labels.
        secondary: ``[K]`` whether the check is extra credit.
        codes: ``[K, G]`` verdict codes (index into :data:`VERDICTS`), -1 where none.
        check_text: ``[K]`` check text, only with public rubrics.
        rationale: ``[K, G]`` the judge's rationale, only with public rubrics.
    """

    groups: list[tuple[str, str]]
    question: npt.NDArray[np.object_]
    check_id: npt.NDArray[np.object_]
    kind: npt.NDArray[np.object_]
    tier: npt.NDArray[np.object_]
    secondary: npt.NDArray[np.bool_]
    codes: npt.NDArray[np.int8]
    check_text: npt.NDArray[np.object_] | None = None
    rationale: npt.NDArray[np.object_] | None = None

    def spans(self) -> dict[str, tuple[int, int]]:
        """Question id -> (first, end) row range of its checks."""
        if self.question.size == 0:
            return {}
        starts = np.flatnonzero(np.r_[True, self.question[1:] != self.question[:-1]])
        ends = np.r_[starts[1:], self.question.size]
        return {str(self.question[s]): (int(s), int(e)) for s, e in zip(starts, ends, strict=True)}


@dataclass(frozen=True)
class SiteInputs:
    """Questions, responses and verdicts for the explorer and the model pages.

    Attributes:
        questions: in file order.
        questions_path: the questions file (images are relative to its folder).
        responses: (submission_id, setting) -> question id -> response text.
        verdicts: the primary judge's verdicts, or None when no verdict table was published.
    """

    questions: list[Question]
    questions_path: Path
    responses: dict[tuple[str, str], dict[str, str]]
    verdicts: Verdicts | None


def _responses(
    folder: Path, submission_ids: list[str], question_ids: list[str]
) -> dict[tuple[str, str], dict[str, str]]:
    problems: list[Problem] = []
    out: dict[tuple[str, str], dict[str, str]] = {}
    for sid in submission_ids:
        for setting in SETTINGS:
            path = SubmissionsLayout(folder).responses(sid, setting)
            if not path.is_file():
                continue
            read = read_response_file(path, str(path), setting, question_ids, Limits())
            problems += [p for p in read.problems if p.severity == ERROR]
            out[(sid, setting)] = {q: r.text for q, r in read.responses.items()}
    if problems:
        raise ProblemsError(problems, "cannot show the responses of the scored submissions")
    return out


def _check_order(check_ids: pd.Series) -> pd.Series:
    """A sort key that puts I2 before I10 and I3.m2 before I3.m10."""
    parts = check_ids.str.extract(r"^[A-Za-z]*(\d*)(.*?)(\d*)$")
    num = pd.to_numeric(parts[0], errors="coerce").fillna(-1).astype(np.int64)
    sub = pd.to_numeric(parts[2], errors="coerce").fillna(-1).astype(np.int64)
    return num.map("{:09d}".format) + "|" + parts[1] + "|" + sub.map("{:09d}".format)


def read_verdicts(path: Path, judge: str, submission_ids: list[str], public: bool) -> Verdicts:
    """The judge's verdicts of ``submission_ids`` from the verdict table, as dense arrays.

    Raises:
        SiteError: when the table cannot be read or lacks its id columns.
    """
    schema = pq.read_schema(path)
    missing = [c for c in VERDICT_ID_COLUMNS if c not in schema.names]
    if missing:
        raise SiteError(f"{path}: verdict table lacks {', '.join(missing)}; run `gamut judge`")
    cols = list(VERDICT_ID_COLUMNS)
    if public:
        cols += [c for c in VERDICT_TEXT_COLUMNS if c in schema.names]
    table = pq.read_table(path, columns=cols, filters=[("judge", "=", judge)])
    wanted = pa.array(submission_ids, type=pa.string())
    table = table.filter(pc.is_in(table["submission_id"].cast(pa.string()), value_set=wanted))
    df = table.to_pandas()
    for c in df.columns:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype(object)
    key = pd.MultiIndex.from_arrays([df["submission_id"].astype(str), df["setting"].astype(str)])
    position = {sid: i for i, sid in enumerate(submission_ids)}
    groups = sorted(set(key), key=lambda g: (position[g[0]], g[1]))
    cols_g = pd.MultiIndex.from_tuples(groups, names=key.names).get_indexer(key)
    checks = df.drop_duplicates(["question_id", "check_id"]).copy()
    checks["_order"] = _check_order(checks["check_id"].astype(str))
    checks = checks.sort_values(["question_id", "_order"], kind="stable").reset_index(drop=True)
    rows = pd.MultiIndex.from_frame(checks[["question_id", "check_id"]]).get_indexer(
        pd.MultiIndex.from_frame(df[["question_id", "check_id"]])
    )
    codes = np.full((len(checks), len(groups)), -1, np.int8)
    code_of = {v: i for i, v in enumerate(VERDICTS)}
    codes[rows, cols_g] = df["verdict"].astype(str).map(code_of).fillna(-1).to_numpy(np.int8)
    text = rationale = None
    if public and "check_text" in df.columns:
        text = checks["check_text"].astype(object).to_numpy()
    if public and "rationale" in df.columns:
        rationale = np.full((len(checks), len(groups)), None, object)
        rationale[rows, cols_g] = df["rationale"].to_numpy(object)
    return Verdicts(
        groups=groups,
        question=checks["question_id"].astype(str).to_numpy(object),
        check_id=checks["check_id"].astype(str).to_numpy(object),
        kind=checks["kind"].astype(str).to_numpy(object),
        tier=checks["tier"].astype(str).to_numpy(object),
        secondary=checks["secondary"].astype(bool).to_numpy(),
        codes=codes,
        check_text=text,
        rationale=rationale,
    )


def load_site_inputs(
    questions: Path, submissions: Path, tables: ScoreTables, public: bool
) -> SiteInputs:
    """Read the questions, the shown submissions' responses and the primary judge's verdicts.

    Args:
        questions: the questions file of the deployment.
        submissions: the submissions folder.
        tables: the score tables (which submissions are shown, the primary judge).
        public: whether the rubrics are public (check text and rationales are read only then).

    Raises:
        ProblemsError: a questions or response file is invalid (every problem listed).
        SiteError: the verdict table is unreadable.
    """
    qs = load_questions(questions)
    sids = sorted({str(s) for s in tables["leaderboard"]["submission_id"]})
    responses = _responses(submissions, sids, [q.question_id for q in qs])
    verdicts = None
    if tables.verdicts_path is not None:
        try:
            verdicts = read_verdicts(tables.verdicts_path, tables.primary_judge, sids, public)
        except (OSError, ValueError) as exc:
            raise SiteError(
                f"cannot read {tables.verdicts_path}: {exc}; rebuild it with `gamut judge`"
            ) from None
    return SiteInputs(qs, questions, responses, verdicts)


__all__ = [
    "SETTINGS",
    "TIERS",
    "VERDICTS",
    "SiteInputs",
    "Verdicts",
    "load_site_inputs",
    "read_verdicts",
]
