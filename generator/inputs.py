"""What the explorer shows beyond the score tables, read through the engine's public formats: the
questions file, each submission's response files (with the engine's response reader) and the
primary judge's rows of the published verdict table.

Verdicts arrive as dense arrays (check x model-setting) so that pages never loop over millions of
rows. Check text and rationales are read only when the rubrics are public.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from generator.tables import ScoreTables
from scoring import Tier
from scoring.errors import GamutError, Problem, ProblemsError
from scoring.layout import SubmissionsLayout
from scoring.questions import Question, Setting, load_questions
from scoring.submissions import ERROR, Limits, read_response_file
from scoring.tables import codes
from scoring.verdicts import VERDICT_COLUMNS, VERDICT_ORDER, VERDICT_TEXT_COLUMNS

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
    """Questions and responses for the explorer and the model pages.

    Attributes:
        questions: in file order.
        responses: (submission_id, setting) -> question id -> response text.
    """

    questions: list[Question]
    responses: dict[tuple[str, str], dict[str, str]]


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


def _ranks(key: Sequence[Any]) -> Ints:
    """Each item's place when ``key`` is sorted (stable)."""
    order = sorted(range(len(key)), key=key.__getitem__)
    ranks = np.empty(len(key), np.int64)
    ranks[order] = np.arange(len(key))
    return ranks


#: The verdict table's columns read by their dictionary codes.
_ENCODED = ("submission_id", "setting", "judge", "question_id", "check_id", "verdict")


def read_verdicts(table: pa.Table, judge: str, submission_ids: list[str], public: bool) -> Verdicts:
    """The judge's verdicts of ``submission_ids`` as dense arrays, from the published verdict
    table (:func:`scoring.tables.verdict_table`), column-wise on its dictionary codes.

    Raises:
        GamutError: when the table lacks its id columns.
    """
    missing = [c for c in VERDICT_COLUMNS if c not in table.column_names]
    if missing:
        raise GamutError(f"the verdict table lacks {', '.join(missing)}; run `gamut judge`")
    enc = {c: codes(table.column(c).combine_chunks()) for c in _ENCODED}
    position = {sid: i for i, sid in enumerate(submission_ids)}
    (sub, subs), (st, sts), (jd, jds) = enc["submission_id"], enc["setting"], enc["judge"]
    shown = np.array([s in position for s in subs] + [False])[sub]
    rows = np.flatnonzero(shown & np.array([j == judge for j in jds] + [False])[jd])
    sub, st = sub[rows], st[rows]
    group_key, cols_g = np.unique(sub * len(sts) + st, return_inverse=True)
    groups = [(subs[k // len(sts)], sts[k % len(sts)]) for k in group_key.tolist()]
    cols_g = _ranks([(position[s], t) for s, t in groups])[cols_g]
    groups = sorted(groups, key=lambda g: (position[g[0]], g[1]))
    (q, qs), (c, cs) = enc["question_id"], enc["check_id"]
    check_key, first, rows_k = np.unique(
        q[rows] * len(cs) + c[rows], return_index=True, return_inverse=True
    )
    q_of, c_of = check_key // len(cs), check_key % len(cs)
    sort = np.lexsort((_ranks(list(_check_order(pd.Series(cs, dtype=object))))[c_of],
                       _ranks(qs)[q_of]))  # fmt: skip
    at = np.argsort(sort)  # unique check -> its row
    codes_m = np.full((len(check_key), len(groups)), -1, np.int8)
    verdict, names = enc["verdict"]
    lut = np.array([VERDICTS.index(v) if v in VERDICTS else -1 for v in names], np.int8)
    codes_m[at[rows_k], cols_g] = lut[verdict[rows]] if len(names) else []
    firsts = pa.array(rows[first][sort])

    def column(name: str) -> npt.NDArray[Any]:
        col = table.column(name).take(firsts).combine_chunks()
        if pa.types.is_dictionary(col.type) or pa.types.is_string(col.type):
            idx, values = codes(col)
            return np.asarray(values, dtype=object)[idx]
        return np.asarray(col.to_numpy(zero_copy_only=False))

    text = rationale = None
    if public and "check_text" in table.column_names:
        text = np.asarray(table.column("check_text").take(firsts).to_pylist(), dtype=object)
    if public and "rationale" in table.column_names:
        rationale = np.full(codes_m.shape, None, object)
        values = table.column("rationale").take(pa.array(rows)).to_pylist()
        rationale[at[rows_k], cols_g] = np.asarray(values, dtype=object)
    return Verdicts(
        groups=groups,
        question=np.asarray([qs[i] for i in q_of[sort]], dtype=object),
        check_id=np.asarray([cs[i] for i in c_of[sort]], dtype=object),
        kind=column("kind"),
        tier=column("tier"),
        secondary=column("secondary").astype(bool),
        codes=codes_m,
        check_text=text,
        rationale=rationale,
    )


def load_site_inputs(
    questions: Path,
    submissions: Path,
    tables: ScoreTables,
    responses: dict[tuple[str, str], dict[str, str]] | None = None,
) -> SiteInputs:
    """Read the questions and the scored submissions' responses.

    Args:
        questions: the questions file of the deployment.
        submissions: the submissions folder.
        tables: the score tables (which submissions are scored).
        responses: the responses, when read from the score step's copy of the same files.

    Raises:
        ProblemsError: a questions or response file is invalid (every problem listed).
    """
    qs = load_questions(questions)
    if responses is None:
        responses = _responses(submissions, scored_ids(tables), [q.question_id for q in qs])
    return SiteInputs(qs, responses)


def scored_ids(tables: ScoreTables) -> list[str]:
    """The submissions of the leaderboard, sorted."""
    return sorted({str(s) for s in tables["leaderboard"]["submission_id"]})


def primary_verdicts(tables: ScoreTables, public: bool) -> Verdicts | None:
    """The primary judge's verdicts of the scored submissions (None: none), read
    from its row group alone, text columns only when the rubrics are ``public``.

    Raises:
        GamutError: the verdict table is unreadable or lacks its id columns.
    """
    path, judge = tables.verdicts_path, tables.primary_judge
    if path is None:
        return None
    try:
        names = pq.read_schema(path).names
        wanted = [*VERDICT_COLUMNS, *(VERDICT_TEXT_COLUMNS if public else ())]
        table = pq.read_table(path, columns=[c for c in wanted if c in names],
                              filters=[("judge", "==", judge)])  # fmt: skip
    except (OSError, pa.ArrowException) as exc:
        raise GamutError(f"cannot read {path}: {exc}; rewrite it with `gamut judge`") from None
    if table.num_rows == 0:
        return None
    return read_verdicts(table, judge, scored_ids(tables), public)
