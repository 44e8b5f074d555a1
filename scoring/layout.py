"""Where the files of a folder are: one value per folder, so a file name is spelled once
(submission folder, submissions folder, results folder); ``gamut.project.Project`` builds them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scoring.questions import Setting
from scoring.submissions.formats import METADATA_FILE, RESPONSE_FILES
from scoring.verdicts import VERDICT_TABLE

if TYPE_CHECKING:
    import pyarrow as pa

#: The run's provenance, beside the score tables.
PROVENANCE_FILE = "provenance.json"
#: The Parquet file metadata key of the provenance, in every results and published file.
PROVENANCE_KEY = b"gamut.provenance"


def with_provenance(table: pa.Table, provenance: dict[str, Any]) -> pa.Table:
    """``table`` carrying ``provenance`` as Parquet file metadata (:data:`PROVENANCE_KEY`)."""
    meta = dict(table.schema.metadata or {})
    meta[PROVENANCE_KEY] = json.dumps(provenance, sort_keys=True).encode()
    return table.replace_schema_metadata(meta)


@dataclass(frozen=True)
class SubmissionFolder:
    """One submission's folder, ``<submissions>/<id>/``."""

    path: Path

    @property
    def id(self) -> str:
        """The submission id (the folder's name)."""
        return self.path.name

    @property
    def metadata(self) -> Path:
        """``submission.yaml``."""
        return self.path / METADATA_FILE

    def responses(self, setting: Setting | str) -> Path:
        """The response file of ``setting`` (``multimodal.jsonl`` or ``text_only.jsonl``)."""
        return self.path / RESPONSE_FILES[Setting(setting).value]

    def has_metadata(self) -> bool:
        """Whether the folder holds a metadata file (what makes it a submission to score)."""
        return self.metadata.is_file()

    def has_responses(self) -> bool:
        """Whether the folder holds a response file of any setting."""
        return any(self.responses(s).is_file() for s in Setting)


@dataclass(frozen=True)
class SubmissionsLayout:
    """The submissions folder: a :class:`SubmissionFolder` per submission id."""

    root: Path

    def folder(self, submission_id: str) -> SubmissionFolder:
        """The folder of ``submission_id`` (which may not exist)."""
        return SubmissionFolder(self.root / submission_id)

    def responses(self, submission_id: str, setting: Setting | str) -> Path:
        """The response file of one submission and setting."""
        return self.folder(submission_id).responses(setting)

    def folders(self) -> list[SubmissionFolder]:
        """Every entry of the folder, sorted by name (none when the folder is missing)."""
        if not self.root.is_dir():
            return []
        return sorted((SubmissionFolder(p) for p in self.root.iterdir()), key=lambda f: f.path)


@dataclass(frozen=True)
class ResultsLayout:
    """The results folder: the score tables by name and format, the verdicts, the provenance."""

    root: Path

    def table(self, name: str, fmt: str = "parquet") -> Path:
        """The file of table ``name`` in format ``fmt`` (``parquet``, ``csv`` or ``json``)."""
        return self.root / f"{name}.{fmt}"

    @property
    def verdicts(self) -> Path:
        """The verdict table the judge writes and the scorer reads."""
        return self.root / VERDICT_TABLE

    @property
    def provenance(self) -> Path:
        """What produced the tables (``provenance.json``)."""
        return self.root / PROVENANCE_FILE


__all__ = [
    "PROVENANCE_FILE",
    "PROVENANCE_KEY",
    "ResultsLayout",
    "SubmissionFolder",
    "SubmissionsLayout",
    "with_provenance",
]
