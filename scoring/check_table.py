"""The compiled checks of a rubric set as arrays (ids and codes, never any text), and their cache.

Compiling a large rubric set takes longer than scoring it, so the compiled ids and attributes are
kept in the private cache, keyed by the bytes of the rubric files and of the compiler: any change to
either compiles afresh. An entry is a numpy ``.npz`` file (the ids as line-joined UTF-8).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from scoring import compiler, rubric
from scoring.compiler import CheckKind
from scoring.parameters import TIER_ORDER
from scoring.rubric import MetaRubric
from scoring.rubric_io import compile_all, load_rubrics, rubric_files, rubric_set_version
from scoring.storage import UNREADABLE_NPZ, atomic_write, open_regular

KIND_ORDER: tuple[CheckKind, ...] = tuple(CheckKind)
#: Joins the ids of an entry: never in one (an id is letters, digits, ``.``, ``_`` and ``-``).
_SEP = "\n"


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
    def of(cls, compiled: dict[str, list[compiler.Check]], rubric_version: str) -> CheckTable:
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

    def save(self, path: Path) -> None:
        """Write the table as an ``.npz`` file at ``path`` (not atomic: pass a temporary)."""
        with path.open("wb") as f:
            np.savez(
                f,
                question_id=_joined(self.question_id),
                check_id=_joined(self.check_id),
                tier=self.tier,
                kind=self.kind,
                secondary=self.secondary,
                rubric_version=np.array(self.rubric_version),
            )

    @classmethod
    def load(cls, path: Path) -> CheckTable:
        """Inverse of :meth:`save`.

        Raises:
            Any of :data:`~scoring.storage.UNREADABLE_NPZ`: the file is not such a table
                (damaged, truncated, or of another layout).
        """
        with np.load(path, allow_pickle=False) as f:
            tier, kind, secondary = f["tier"], f["kind"], f["secondary"]
            n = tier.size
            if (tier.dtype, kind.dtype, secondary.dtype) != (np.int8, np.int8, np.bool_) or not (
                tier.shape == kind.shape == secondary.shape == (n,)
            ):
                raise ValueError(f"{path}: not a table of compiled checks")
            return cls(
                _split(f["question_id"], n),
                _split(f["check_id"], n),
                tier,
                kind,
                secondary,
                str(f["rubric_version"][()]),
            )


def _joined(ids: list[str]) -> npt.NDArray[np.uint8]:
    text = _SEP.join(ids)
    if text.count(_SEP) != max(len(ids) - 1, 0):
        raise ValueError("a check or question id holds a line break")
    return np.frombuffer(text.encode("utf-8"), np.uint8)


def _split(joined: npt.NDArray[np.uint8], n: int) -> list[str]:
    ids = joined.tobytes().decode("utf-8").split(_SEP) if n else []
    if joined.dtype != np.uint8 or len(ids) != n:
        raise ValueError("the ids do not match the codes")
    return ids


def cache_key(path: Path) -> str:
    """Content hash of the rubric files at ``path`` and of the compiler that reads them."""
    h = hashlib.sha256()
    for module in (compiler, rubric):
        h.update(Path(module.__file__ or "").read_bytes())
    for f in rubric_files(path):
        h.update(str(f.relative_to(path) if path.is_dir() else f.name).encode() + b"\0")
        try:
            with open_regular(f, links=True) as fh:
                h.update(hashlib.file_digest(fh, "sha256").digest())
        except OSError:  # the compiler names it
            h.update(b"unreadable")
        h.update(b"\0")
    return h.hexdigest()[:24]


def cached_checks_path(path: Path, cache_dir: Path) -> Path:
    """Where :func:`load_check_table` keeps the compiled checks of the rubrics at ``path``."""
    return cache_dir / f"checks-{cache_key(path)}.npz"


def load_check_table(path: Path, cache_dir: Path | None, held: bool = False) -> CheckTable:
    """The compiled checks of the rubrics at ``path``, from ``cache_dir`` when they are there.

    ``held``: the rubrics are held, so problems quote no rubric text.

    Raises:
        RubricError: a rubric is invalid (every problem listed).
    """
    cached = cached_checks_path(path, cache_dir) if cache_dir else None
    if cached is not None and cached.is_file():
        try:
            return CheckTable.load(cached)
        except UNREADABLE_NPZ:
            pass  # a damaged cache entry is rebuilt below
    rubrics = load_rubrics([path], held=held)
    table = checks_of(rubrics)
    if cached is not None:
        atomic_write(cached, table.save)
        for old in cached.parent.glob("checks-*"):  # one entry: the current rubric set
            if old != cached:
                old.unlink(missing_ok=True)
    return table


def checks_of(rubrics: dict[str, MetaRubric]) -> CheckTable:
    """Compile ``rubrics`` into a :class:`CheckTable`."""
    return CheckTable.of(compile_all(rubrics), rubric_set_version(rubrics))


__all__ = [
    "KIND_ORDER",
    "CheckTable",
    "cache_key",
    "cached_checks_path",
    "checks_of",
    "load_check_table",
]
