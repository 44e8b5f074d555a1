"""The expected checks: every check of every question, as integer-coded arrays.

Compiling a large rubric set takes longer than scoring it, so the compiled ids and attributes (never
any text) are kept in the private cache, keyed by the bytes of the rubric files and of the compiler:
any change to either compiles afresh.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from scoring import compiler, rubric
from scoring.compiler import Check, CheckKind
from scoring.errors import Problem, ProblemsError
from scoring.questions import Question
from scoring.rubric import MetaRubric
from scoring.rubric_io import compile_all, load_rubrics, rubric_files, rubric_set_version
from scoring.scorer import TIER_ORDER
from scoring.storage import atomic_write

KIND_ORDER: tuple[CheckKind, ...] = tuple(CheckKind)
#: Number of (kind, secondary) codes of :attr:`CheckIndex.kind_key`.
N_KIND_KEYS = len(KIND_ORDER) * 2
_VERSION_KEY = b"gamut.rubric_version"


@dataclass(frozen=True)
class CheckTable:
    """The compiled checks of a rubric set, in rubric order: ids and codes, no text."""

    question_id: list[str]
    check_id: list[str]
    tier: npt.NDArray[np.int8]
    kind: npt.NDArray[np.int8]
    secondary: npt.NDArray[np.bool_]
    rubric_version: str

    @classmethod
    def of(cls, compiled: dict[str, list[Check]], rubric_version: str) -> CheckTable:
        """From compiled checks keyed by question id."""
        checks = [c for cs in compiled.values() for c in cs]
        tier = {t: i for i, t in enumerate(TIER_ORDER)}
        kind = {k: i for i, k in enumerate(KIND_ORDER)}
        return cls(
            [c.question_id for c in checks],
            [c.check_id for c in checks],
            np.array([tier[c.tier] for c in checks], np.int8),
            np.array([kind[c.kind] for c in checks], np.int8),
            np.array([c.secondary for c in checks], np.bool_),
            rubric_version,
        )

    def to_arrow(self) -> pa.Table:
        """As an Arrow table carrying the rubric version in its metadata."""
        table = pa.table(
            {
                "question_id": self.question_id,
                "check_id": self.check_id,
                "tier": self.tier,
                "kind": self.kind,
                "secondary": self.secondary,
            }
        )
        return table.replace_schema_metadata({_VERSION_KEY: self.rubric_version.encode()})

    @classmethod
    def from_arrow(cls, table: pa.Table) -> CheckTable:
        """Inverse of :meth:`to_arrow`."""
        meta = table.schema.metadata or {}
        return cls(
            table.column("question_id").to_pylist(),
            table.column("check_id").to_pylist(),
            table.column("tier").to_numpy().astype(np.int8),
            table.column("kind").to_numpy().astype(np.int8),
            table.column("secondary").to_numpy().astype(np.bool_),
            meta.get(_VERSION_KEY, b"").decode(),
        )


def cache_key(path: Path) -> str:
    """Content hash of the rubric files at ``path`` and of the compiler that reads them."""
    h = hashlib.sha256()
    for module in (compiler, rubric):
        h.update(Path(module.__file__ or "").read_bytes())
    for f in [f for f in rubric_files(path) if f.is_file()]:
        h.update(str(f.relative_to(path) if path.is_dir() else f.name).encode() + b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:24]


def cached_checks_path(path: Path, cache_dir: Path) -> Path:
    """Where :func:`load_check_table` keeps the compiled checks of the rubrics at ``path``."""
    return cache_dir / f"checks-{cache_key(path)}.parquet"


def load_check_table(path: Path, cache_dir: Path | None, held: bool = False) -> CheckTable:
    """The compiled checks of the rubrics at ``path``, from ``cache_dir`` when they are there.

    ``held``: the rubrics are held, so problems quote no rubric text.

    Raises:
        RubricError: a rubric is invalid (every problem listed).
    """
    cached = cached_checks_path(path, cache_dir) if cache_dir else None
    if cached is not None and cached.is_file():
        try:
            return CheckTable.from_arrow(pq.read_table(cached))
        except (pa.ArrowInvalid, OSError, KeyError):
            pass  # a damaged cache entry is rebuilt below
    rubrics = load_rubrics([path], held=held)
    table = checks_of(rubrics)
    if cached is not None:
        atomic_write(cached, lambda tmp: pq.write_table(table.to_arrow(), tmp))
        for old in cached.parent.glob("checks-*.parquet"):  # one entry: the current rubric set
            if old != cached:
                old.unlink(missing_ok=True)
    return table


def checks_of(rubrics: dict[str, MetaRubric]) -> CheckTable:
    """Compile ``rubrics`` into a :class:`CheckTable`."""
    return CheckTable.of(compile_all(rubrics), rubric_set_version(rubrics))


@dataclass(frozen=True)
class CheckIndex:
    """Every expected check (every check of every question, by question then tier), as arrays."""

    question: npt.NDArray[np.int64]
    tier: npt.NDArray[np.int64]
    kind: npt.NDArray[np.int64]
    secondary: npt.NDArray[np.bool_]

    @property
    def size(self) -> int:
        """Number of expected checks per (submission, setting, judge)."""
        return int(self.question.size)

    @property
    def kind_key(self) -> npt.NDArray[np.int64]:
        """``[K]`` each check's (kind, secondary) code, ``kind * 2 + secondary``, in
        ``range(N_KIND_KEYS)``: the split of the per-kind tables (decoded by :func:`kind_of`)."""
        return np.asarray(self.kind * 2 + self.secondary.astype(np.int64), np.int64)


def kind_of(key: int) -> tuple[CheckKind, bool]:
    """The (kind, secondary) of a :attr:`CheckIndex.kind_key` code."""
    return KIND_ORDER[key // 2], bool(key % 2)


def index_checks(
    questions: list[Question], table: CheckTable, where: str
) -> tuple[CheckIndex, list[list[str]]]:
    """The expected checks of ``questions`` and each question's check ids.

    Raises:
        ProblemsError: a question in the questions file has no rubric.
    """
    qindex = {q.question_id: i for i, q in enumerate(questions)}
    qpos = np.fromiter(
        (qindex.get(q, -1) for q in table.question_id), np.int64, len(table.question_id)
    )
    per_question = np.bincount(qpos[qpos >= 0], minlength=len(questions))
    lacking = [q.question_id for q, n in zip(questions, per_question, strict=True) if n == 0]
    if lacking:
        raise ProblemsError(
            [
                Problem(where, None, "no rubric for this question", "add its meta-rubric", qid)
                for qid in lacking
            ],
            f"{len(lacking)} question(s) have no rubric",
        )
    keep = np.flatnonzero(qpos >= 0)
    # question order, then tier order within a question, so per-(question, tier) sums are segments
    order = keep[np.lexsort((table.tier[keep], qpos[keep]))]
    ids = [table.check_id[i] for i in order]
    bounds = np.concatenate([[0], np.cumsum(per_question)])
    check_ids = [ids[bounds[i] : bounds[i + 1]] for i in range(len(questions))]
    index = CheckIndex(
        qpos[order],
        table.tier[order].astype(np.int64),
        table.kind[order].astype(np.int64),
        table.secondary[order],
    )
    return index, check_ids
