"""``gamut-workbench build images``: the image manifest, imported from CSV or JSON Lines and
checksummed."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool

from scoring.errors import Problem, ProblemsError
from scoring.jsonl import read_jsonl, validated
from scoring.questions import Popularity
from scoring.rubric import Identifier, NonEmpty
from scoring.storage import open_regular
from workbench.store import Workbench

FIELDS = ("image_id", "file", "entity", "domain", "popularity", "egocentric")
_FILE = "give the path of a regular image file, relative to the manifest"
IMAGES = "images.json"


class ManifestRow(BaseModel):
    """One image: its id, file (relative to the manifest), ground-truth entity and metadata."""

    model_config = ConfigDict(extra="forbid")

    image_id: Identifier
    file: NonEmpty
    entity: NonEmpty
    domain: Identifier
    popularity: Popularity
    egocentric: StrictBool
    question_id: Identifier | None = None


def _csv_rows(path: Path, problems: list[Problem]) -> list[tuple[int | None, Any]]:
    rows: list[tuple[int | None, Any]] = []
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in FIELDS if c not in (reader.fieldnames or [])]
        if missing:
            problems.append(
                Problem(str(path), 1, f"header lacks {', '.join(missing)}", f"columns: {FIELDS}")
            )
            return rows
        for row in reader:
            value: dict[str, Any] = dict(row)
            ego = str(value.get("egocentric", "")).strip().lower()
            value["egocentric"] = {"true": True, "false": False}.get(ego, value["egocentric"])
            rows.append((reader.line_num, value))
    return rows


def read_manifest(path: Path) -> dict[str, dict[str, Any]]:
    """The manifest's images by id, each with its file's SHA-256; every problem at once."""
    problems: list[Problem] = []
    if not path.is_file():
        raise ProblemsError([Problem(str(path), None, "no such file", "give the manifest path")])
    if path.suffix.lower() == ".csv":
        rows = _csv_rows(path, problems)
    else:
        data = read_jsonl(path, str(path), f"each line: a JSON object with {', '.join(FIELDS)}")
        problems.extend(data.problems)
        rows = [(ln.line, ln.value) for ln in data.lines]
    images: dict[str, dict[str, Any]] = {}
    fix = "fix the value in this row"
    for line, row in validated(rows, ManifestRow.model_validate, str(path), fix, problems):
        if row.image_id in images:
            problems.append(
                Problem(str(path), line, f"duplicate image_id {row.image_id}", "give each a new id")
            )
            continue
        file = path.parent / row.file
        try:
            with open_regular(file) as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
        except OSError as exc:
            problems.append(
                Problem(str(path), line, f"image file {row.file}: {exc.strerror}", _FILE)
            )
            continue
        file = file.resolve()
        images[row.image_id] = {
            **row.model_dump(mode="json"),
            "question_id": row.question_id or row.image_id,
            "path": str(file),
            "sha256": digest,
        }
    if problems:
        raise ProblemsError(problems, f"invalid image manifest {path}")
    return images


def import_images(wb: Workbench, manifest: Path) -> tuple[int, int]:
    """Merge the manifest into the workbench: (added, changed) images. An image whose file's
    checksum changed is re-imported; its questions are kept."""
    new = read_manifest(manifest)
    old: dict[str, dict[str, Any]] = wb.read(IMAGES, {})
    added = sum(1 for i in new if i not in old)
    changed = sum(1 for i in new if i in old and old[i] != new[i])
    wb.write(IMAGES, {**old, **new})
    return added, changed
