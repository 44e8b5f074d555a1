"""Reading what the score tables are built from into integer-coded arrays: the questions'
checks, the submissions (metadata, response lengths, token counts) and the verdict table as one
dense ``int8`` matrix (:mod:`scoring.tables.matrix`). Everything after this is arithmetic.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.check_table import CheckTable
from scoring.errors import Problem, ProblemsError
from scoring.layout import SubmissionsLayout
from scoring.questions import Question
from scoring.submissions.digests import DigestCache
from scoring.submissions.formats import SubmissionMeta
from scoring.submissions.metadata import check_metadata
from scoring.submissions.report import Limits
from scoring.submissions.responses import read_responses
from scoring.tables.checks import CheckIndex, index_checks
from scoring.tables.matrix import SETTINGS, read_verdicts
from scoring.tables.stamps import read_stamps

_VALIDATE = "run `gamut submission validate` for every problem with its fix"


@dataclass(frozen=True)
class Inputs:
    """Everything the score tables are computed from (group ``g`` is ``(s * len(SETTINGS) +
    setting) * len(judges) + j``): the questions, checks, submission ids and judges (index =
    position), metadata per submission, ``has_responses`` ``[S, 2]``, ``response_chars``
    ``[S, 2, Q]`` (NaN: absent), ``verdicts`` ``[G, K]`` (:data:`MISSING`: none), the rubric
    version, ``ignored_rows`` (matching no current submission, judge, question or check), each
    question's check ids, ``model_usage`` ``[S, 2, 4]`` (responses, those recording token counts,
    input and output tokens) and what judged the verdicts (None: not recorded)."""

    questions: list[Question]
    checks: CheckIndex
    submission_ids: tuple[str, ...]
    meta: dict[str, SubmissionMeta]
    judges: tuple[str, ...]
    has_responses: npt.NDArray[np.bool_]
    response_chars: npt.NDArray[np.float64]
    verdicts: npt.NDArray[np.int8]
    rubric_version: str
    ignored_rows: int
    check_ids: list[list[str]]
    model_usage: npt.NDArray[np.int64]
    stamps: dict[str, Any] | None


def _read_meta(path: Path, digests: DigestCache) -> SubmissionMeta:
    found = digests.metadata(path)
    if found is not None:
        return found
    meta, problems = check_metadata(path, str(path))  # for the problems, with the file's name
    if meta is None:
        raise ProblemsError(
            problems or [Problem(str(path), None, "invalid submission metadata", _VALIDATE)],
            f"invalid submission metadata in {path}",
        )
    return meta


def _response_chars(
    path: Path, qindex: dict[str, int], digests: DigestCache
) -> tuple[npt.NDArray[np.float64], tuple[int, int, int, int]]:
    """Each question's response length (NaN: no response), and the file's token counts
    (responses, responses recording their tokens, input tokens, output tokens)."""
    out = np.full(len(qindex), np.nan)
    digest = digests.of(path)
    if not digest.clean:
        # the digest only says that the file is bad: the reader says what is wrong with it
        _, problems = read_responses(path, limits=digests.limits)
        raise ProblemsError(problems, f"cannot read the responses in {path} ({_VALIDATE})")
    for qid, n in digest.chars.items():
        i = qindex.get(qid)
        if i is not None:
            out[i] = n
    return out, (len(digest.chars), *digest.usage)


def load_inputs(
    questions: list[Question],
    checks: CheckTable,
    submissions: Path,
    judges: tuple[str, ...],
    verdicts: Path,
    *,
    rubrics_source: str,
    only: Collection[str] | None = None,
    digests: DigestCache | None = None,
) -> Inputs:
    """Read the submissions (``only`` those ids, if given; ``digests``: files already read) and
    the verdict table against the questions and compiled checks (from ``rubrics_source``)."""
    index, check_ids = index_checks(questions, checks, rubrics_source)
    qids = [q.question_id for q in questions]
    qindex = {q: i for i, q in enumerate(qids)}
    dirs = [
        f
        for f in SubmissionsLayout(submissions).folders()
        if f.has_metadata() and (only is None or f.id in only)
    ]
    ids = tuple(f.id for f in dirs)
    has = np.zeros((len(ids), len(SETTINGS)), np.bool_)
    chars = np.full((len(ids), len(SETTINGS), len(qids)), np.nan)
    usage = np.zeros((len(ids), len(SETTINGS), 4), np.int64)
    cache = DigestCache.open(digests, Limits())
    meta = {sub.id: _read_meta(sub.metadata, cache) for sub in dirs}
    for si, sub in enumerate(dirs):
        for k, setting in enumerate(SETTINGS):
            f = sub.responses(setting)
            if f.is_file():
                has[si, k] = True
                chars[si, k], usage[si, k] = _response_chars(f, qindex, cache)
    matrix, ignored = read_verdicts(verdicts, ids, judges, qids, check_ids)
    return Inputs(
        questions,
        index,
        ids,
        meta,
        judges,
        has,
        chars,
        matrix,
        checks.rubric_version,
        ignored,
        check_ids,
        usage,
        read_stamps(verdicts),
    )
