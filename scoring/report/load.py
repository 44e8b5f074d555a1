"""Reading what the score tables are built from, into integer-coded arrays.

Questions, compiled checks, submissions (metadata and response lengths) and the verdict table
``<results>/verdicts.parquet``. The verdicts become one dense ``int8`` matrix with a row per
(submission, setting, judge) group and a column per expected check; ``-1`` marks a check that has no
verdict. Everything after this module is arithmetic on those arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
import pyarrow.parquet as pq
import yaml
from pydantic import ValidationError

from scoring.compiler import Check, CheckKind
from scoring.config import GamutConfig
from scoring.errors import Problem, ProblemsError, ScoringError
from scoring.questions import Question, Setting, load_questions
from scoring.rubric import MetaRubric
from scoring.rubric_io import compile_all, load_rubrics, rubric_set_version
from scoring.scorer import TIER_ORDER, VERDICT_ORDER
from scoring.submission import SubmissionMeta

SETTINGS: tuple[Setting, ...] = (Setting.MULTIMODAL, Setting.TEXT_ONLY)
KIND_ORDER: tuple[CheckKind, ...] = tuple(CheckKind)
MISSING = -1

_KEY_COLUMNS = ("submission_id", "setting", "judge", "question_id", "check_id", "verdict")


@dataclass(frozen=True)
class CheckIndex:
    """Every expected check (every check of every question), as parallel arrays."""

    question: npt.NDArray[np.int64]
    tier: npt.NDArray[np.int64]
    kind: npt.NDArray[np.int64]
    secondary: npt.NDArray[np.bool_]

    @property
    def size(self) -> int:
        """Number of expected checks per (submission, setting, judge)."""
        return int(self.question.size)


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


def rubrics_path(cfg: GamutConfig) -> Path:
    """Where the rubrics are on disk (held rubrics from the Hub are fetched by the judge step)."""
    try:
        from scoring.judge.inputs import resolve_rubrics_path  # type: ignore[import-not-found]
    except ImportError:
        resolve_rubrics_path = None
    if resolve_rubrics_path is not None:
        return Path(resolve_rubrics_path(cfg))
    spec = cfg.benchmark.rubrics
    if spec.startswith("hf://"):
        raise ScoringError(
            f"rubrics at {spec} are not available locally; run `gamut judge` first to fetch them"
        )
    return cfg.path(Path(spec))


def index_checks(
    questions: list[Question], compiled: dict[str, list[Check]], where: str
) -> tuple[CheckIndex, list[list[str]]]:
    """Flatten the checks of every question; also return each question's check ids.

    Raises:
        ProblemsError: a question in the questions file has no rubric.
    """
    lacking = [q.question_id for q in questions if not compiled.get(q.question_id)]
    if lacking:
        raise ProblemsError(
            [
                Problem(where, None, "no rubric for this question", "add its meta-rubric", qid)
                for qid in lacking
            ],
            f"{len(lacking)} question(s) have no rubric",
        )
    tier_code = {t: i for i, t in enumerate(TIER_ORDER)}
    kind_code = {k: i for i, k in enumerate(KIND_ORDER)}
    q: list[int] = []
    t: list[int] = []
    k: list[int] = []
    s: list[bool] = []
    ids: list[list[str]] = []
    for qi, question in enumerate(questions):
        cs = compiled[question.question_id]
        ids.append([c.check_id for c in cs])
        q.extend([qi] * len(cs))
        t.extend(tier_code[c.tier] for c in cs)
        k.extend(kind_code[c.kind] for c in cs)
        s.extend(c.secondary for c in cs)
    index = CheckIndex(
        np.array(q, np.int64), np.array(t, np.int64), np.array(k, np.int64), np.array(s, np.bool_)
    )
    return index, ids


def _read_meta(path: Path) -> SubmissionMeta:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        return SubmissionMeta.model_validate(raw)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ProblemsError(
            [
                Problem(
                    str(path),
                    None,
                    f"invalid submission metadata: {msg}",
                    "run `gamut submission validate` for every problem with its fix",
                )
            ]
        ) from None


def _response_chars(path: Path, qindex: dict[str, int]) -> npt.NDArray[np.float64]:
    out = np.full(len(qindex), np.nan)
    if path.stat().st_size == 0:
        return out
    try:
        table = pj.read_json(path)
    except pa.ArrowInvalid as exc:
        raise ProblemsError(
            [
                Problem(
                    str(path),
                    None,
                    f"cannot read responses: {exc}",
                    "run `gamut submission validate` for every problem with its fix",
                )
            ]
        ) from None
    qids = table.column("question_id").to_pylist()
    lengths = pc.utf8_length(table.column("response")).to_numpy(zero_copy_only=False)
    for qid, n in zip(qids, lengths, strict=True):
        i = qindex.get(qid)
        if i is not None:
            out[i] = n
    return out


def read_submissions(
    folder: Path, qindex: dict[str, int]
) -> tuple[
    tuple[str, ...], dict[str, SubmissionMeta], npt.NDArray[np.bool_], npt.NDArray[np.float64]
]:
    """Submission ids, metadata, which settings have responses, and response lengths."""
    dirs = (
        sorted(p for p in folder.iterdir() if (p / "submission.yaml").is_file())
        if folder.is_dir()
        else []
    )
    ids = tuple(p.name for p in dirs)
    meta = {p.name: _read_meta(p / "submission.yaml") for p in dirs}
    has = np.zeros((len(ids), len(SETTINGS)), np.bool_)
    chars = np.full((len(ids), len(SETTINGS), len(qindex)), np.nan)
    for si, p in enumerate(dirs):
        for k, setting in enumerate(SETTINGS):
            f = p / f"{setting.value}.jsonl"
            if f.is_file():
                has[si, k] = True
                chars[si, k] = _response_chars(f, qindex)
    return ids, meta, has, chars


def _codes(column: pa.ChunkedArray, lookup: dict[str, int]) -> npt.NDArray[np.int64]:
    """Our integer code per row for a string column (``-1`` for values not in ``lookup``)."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    chunks = column.chunks
    if not chunks:
        return np.zeros(0, np.int64)
    out = []
    for chunk in chunks:
        values = chunk.dictionary.to_pylist()
        lut = np.array(
            [lookup.get(v, -1) if v is not None else -1 for v in values] + [-1], np.int64
        )
        idx = chunk.indices.fill_null(len(values)).to_numpy().astype(np.int64)
        out.append(lut[idx])
    return np.concatenate(out)


def read_verdicts(
    path: Path,
    submission_ids: tuple[str, ...],
    judges: tuple[str, ...],
    questions: list[Question],
    check_ids: list[list[str]],
) -> tuple[npt.NDArray[np.int8], int]:
    """The dense verdict matrix ``[G, K]`` and the number of ignored rows.

    Raises:
        ScoringError: the table is missing, lacks a column, holds an unknown verdict, or holds two
            verdicts for one (submission, setting, judge, check).
    """
    if not path.is_file():
        raise ScoringError(f"no verdict table at {path} (run `gamut judge` first)")
    try:
        table = pq.read_table(path, columns=list(_KEY_COLUMNS), read_dictionary=list(_KEY_COLUMNS))
    except (pa.ArrowInvalid, KeyError, OSError) as exc:
        raise ScoringError(
            f"cannot read the verdict table {path}: {exc} (rewrite it with `gamut judge`)"
        ) from None
    n_cid = {cid: i for i, cid in enumerate(sorted({c for ids in check_ids for c in ids}))}
    q_of = {q.question_id: i for i, q in enumerate(questions)}
    # (question, check id) -> position among the expected checks, through a dense lookup table.
    dense = np.full(len(questions) * len(n_cid) + 1, -1, np.int64)
    start = 0
    for q_pos, ids in enumerate(check_ids):
        for j, cid in enumerate(ids):
            dense[q_pos * len(n_cid) + n_cid[cid]] = start + j
        start += len(ids)
    n_checks = start
    sub = _codes(table.column("submission_id"), {s: i for i, s in enumerate(submission_ids)})
    setting = _codes(table.column("setting"), {s.value: i for i, s in enumerate(SETTINGS)})
    judge = _codes(table.column("judge"), {j: i for i, j in enumerate(judges)})
    qi = _codes(table.column("question_id"), q_of)
    ci = _codes(table.column("check_id"), n_cid)
    verdict = _codes(table.column("verdict"), {v.value: i for i, v in enumerate(VERDICT_ORDER)})
    if (verdict < 0).any():
        bad = sorted(
            set(pc.unique(table.column("verdict")).cast(pa.string()).to_pylist())
            - {v.value for v in VERDICT_ORDER},
            key=str,
        )
        raise ScoringError(
            f"{path}: unknown verdict value(s) {bad} "
            "(allowed: meets, partially_meets, missing, contradicts)"
        )
    key = np.where((qi >= 0) & (ci >= 0), qi * len(n_cid) + ci, len(dense) - 1)
    k = dense[key]
    ok = (sub >= 0) & (setting >= 0) & (judge >= 0) & (k >= 0)
    n_groups = len(submission_ids) * len(SETTINGS) * len(judges)
    g = ((sub * len(SETTINGS) + setting) * len(judges) + judge)[ok]
    flat = g * n_checks + k[ok]
    matrix = np.full(n_groups * n_checks, MISSING, np.int8)
    matrix[flat] = verdict[ok].astype(np.int8)
    if int((matrix != MISSING).sum()) != flat.size:
        raise ScoringError(
            f"{path}: some (submission, setting, judge, check) has more than one "
            "verdict row (rewrite the table with `gamut judge`)"
        )
    return matrix.reshape(n_groups, n_checks), int((~ok).sum())


def load_inputs(cfg: GamutConfig, rubrics: dict[str, MetaRubric] | None = None) -> Inputs:
    """Read questions, rubrics, submissions and the verdict table named by ``cfg``.

    Args:
        cfg: the project configuration.
        rubrics: already loaded rubrics (read from the configured path when omitted).

    Raises:
        ProblemsError: an input file is invalid (every problem listed).
        ScoringError: the verdict table is missing or broken.
    """
    questions = load_questions(cfg.path(cfg.benchmark.questions))
    if rubrics is None:
        rubrics = load_rubrics([rubrics_path(cfg)])
    checks, check_ids = index_checks(questions, compile_all(rubrics), cfg.benchmark.rubrics)
    qindex = {q.question_id: i for i, q in enumerate(questions)}
    ids, meta, has, chars = read_submissions(cfg.path(cfg.benchmark.submissions), qindex)
    judges = tuple(cfg.judges)
    matrix, ignored = read_verdicts(
        cfg.path(cfg.store.results) / "verdicts.parquet", ids, judges, questions, check_ids
    )
    return Inputs(
        questions,
        checks,
        ids,
        meta,
        judges,
        has,
        chars,
        matrix,
        rubric_set_version(rubrics),
        ignored,
    )
