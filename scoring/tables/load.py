"""Reading what the score tables are built from, into integer-coded arrays.

Questions, compiled checks, submissions (metadata and response lengths) and the verdict table
``<results>/verdicts.parquet``. The verdicts become one dense ``int8`` matrix with a row per
(submission, setting, judge) group and a column per expected check; ``-1`` marks a check that has no
verdict. Everything after this module is arithmetic on those arrays.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
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
    """Everything the score tables are computed from.

    Group ``g`` is ``(s * len(SETTINGS) + setting) * len(judges) + j``.

    Attributes:
        questions: the public questions, in file order (question index = position).
        checks: the expected checks.
        submission_ids: sorted submission ids (submission index = position).
        meta: metadata per submission id.
        judges: configured judge names, in config order.
        has_responses: ``[S, 2]`` whether a submission has a response file for a setting.
        response_chars: ``[S, 2, Q]`` response length in characters (NaN when absent).
        verdicts: ``[G, K]`` verdict codes (:data:`MISSING` where no verdict).
        rubric_version: content hash of the rubric set.
        ignored_rows: verdict rows that match no current submission, judge, question or check.
        check_ids: each question's check ids, in the order of the expected checks (what the
            audit labels are matched against).
        model_usage: ``[S, 2, 4]`` per response file: its responses, those that record the
            provider's token counts, their input and their output tokens (zeros when absent).
        stamps: what judged the verdicts, as the verdict table records it
            (:func:`scoring.tables.stamps.read_stamps`; None: not recorded).
    """

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
    check_ids: list[list[str]] = field(default_factory=list)
    model_usage: npt.NDArray[np.int64] | None = None
    stamps: dict[str, Any] | None = None


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


def read_submissions(
    folder: Path,
    qindex: dict[str, int],
    only: Collection[str] | None = None,
    digests: DigestCache | None = None,
) -> tuple[
    tuple[str, ...],
    dict[str, SubmissionMeta],
    npt.NDArray[np.bool_],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
]:
    """Submission ids, metadata, which settings have responses, response lengths, and each
    response file's token counts (:attr:`Inputs.model_usage`).

    ``only``: the submission ids to read (default: every folder with a metadata file).
    ``digests``: the files this process read already (:mod:`scoring.submissions.digests`).
    """
    dirs = [
        f
        for f in SubmissionsLayout(folder).folders()
        if f.has_metadata() and (only is None or f.id in only)
    ]
    ids = tuple(f.id for f in dirs)
    has = np.zeros((len(ids), len(SETTINGS)), np.bool_)
    chars = np.full((len(ids), len(SETTINGS), len(qindex)), np.nan)
    usage = np.zeros((len(ids), len(SETTINGS), 4), np.int64)
    cache = DigestCache.open(digests, Limits())
    meta = {sub.id: _read_meta(sub.metadata, cache) for sub in dirs}
    for si, sub in enumerate(dirs):
        for k, setting in enumerate(SETTINGS):
            f = sub.responses(setting)
            if f.is_file():
                has[si, k] = True
                chars[si, k], usage[si, k] = _response_chars(f, qindex, cache)
    return ids, meta, has, chars, usage


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
    """Read the submissions and the verdict table, and index them against questions and checks.

    Args:
        questions: the public questions, in file order.
        checks: the compiled checks of the rubric set.
        submissions: the submissions folder.
        judges: the configured judge names, in config order.
        verdicts: the verdict table (``verdicts.parquet``).
        rubrics_source: where the rubrics came from, for messages.
        only: the submission ids to score (default: every submission in the folder); a
            pipeline leaves out those that fail validation.
        digests: the files this process read already (validation and scoring share them).

    Raises:
        ProblemsError: an input file is invalid (every problem listed).
        GamutError: the verdict table is missing or broken.
    """
    table = checks
    index, check_ids = index_checks(questions, table, rubrics_source)
    qids = [q.question_id for q in questions]
    ids, meta, has, chars, usage = read_submissions(
        submissions, {q: i for i, q in enumerate(qids)}, only, digests
    )
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
        table.rubric_version,
        ignored,
        check_ids,
        usage,
        read_stamps(verdicts),
    )
