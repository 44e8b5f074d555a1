"""The site's files made from every response and verdict: the explorer's data and the response
and verdict downloads. ``gamut score`` writes them once per set of inputs into
``<results>/published/site.<key>/``, laid out as in the docs folder (``key``: a digest of what
they are made from), and a site build hard-links them in; a build that finds no folder with its
inputs' key makes them itself. A folder is filled before it is renamed into place, and never
changed after, so a build never mixes the files of two scores.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq

from generator.downloads import stable_provenance, write_responses, write_verdict_files
from generator.explorer import write_explorer_data
from generator.inputs import SETTINGS, SiteInputs, load_site_inputs
from generator.pages import shown_names
from generator.tables import ScoreTables, content_digest, load_tables
from scoring import __version__
from scoring.layout import SubmissionsLayout
from scoring.storage import atomic_write_bytes, make_staging_folder, remove_stale_staging
from scoring.tables import ResultsLayout

#: The score step's folder (under the results) of the files it publishes for the site.
PUBLISHED = "published"
#: The file of a published folder holding the explorer page's figures, written last.
PAGE_FILE = "page.json"


def site_data_key(results: Path, questions: Path, submissions: Path, public: bool) -> str:
    """A digest of everything :func:`write_site_data` reads: the verdict table, the leaderboard
    (model names and ranks), the question scores and the provenance (by content, less when they
    were written), the questions file, the scored submissions' response files, whether rubric
    text is shown, this package's code and the engine's version."""
    layout = ResultsLayout(results)
    board = pq.read_table(layout.table("leaderboard"), columns=["submission_id"])
    scored = sorted({str(sid) for sid in board.column(0).to_pylist()})
    files = [layout.verdicts, layout.table("leaderboard"), layout.table("question_scores")]
    files += [layout.provenance, questions]
    files += [SubmissionsLayout(submissions).responses(sid, setting)
              for sid in scored for setting in SETTINGS]  # fmt: skip
    files += sorted(Path(__file__).parent.glob("*.py"))
    h = hashlib.sha256(orjson.dumps([__version__, public]))
    for path in files:
        h.update(f"\0{path}\0{content_digest(path) if path.is_file() else '-'}".encode())
    return h.hexdigest()


def write_site_data(
    tables: ScoreTables, inputs: SiteInputs, docs: Path, public: bool
) -> dict[str, Any]:
    """Write the explorer's data and the response and verdict downloads into ``docs``; returns
    the explorer page's figures.

    Raises:
        GamutError: the verdict table is unreadable, or names a judge or question with no entry.
    """
    page = write_explorer_data(tables, inputs, docs, public, shown_names(tables))
    ids = [q.question_id for q in inputs.questions]
    write_responses(inputs.responses, ids, docs, stable_provenance(tables.provenance))
    domains = {q.question_id: q.domain for q in inputs.questions}
    write_verdict_files(tables, docs, public, domains)
    return page


def publish_site_data(results: Path, questions: Path, submissions: Path, public: bool) -> None:
    """Write the site data of the score tables in ``results`` into
    ``<results>/published/site.<key>`` unless it is there, and remove everything else there but
    the staging folders of running scores (the score step does this)."""
    parent, key = results / PUBLISHED, site_data_key(results, questions, submissions, public)
    final = parent / f"site.{key}"
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(parent, (".site.",))  # a score killed while writing them
    if not (final / PAGE_FILE).is_file():
        staging = make_staging_folder(parent, ".site.")
        try:
            tables = load_tables(results)
            inputs = load_site_inputs(questions, submissions, tables)
            page = write_site_data(tables, inputs, staging, public)
            atomic_write_bytes(staging / PAGE_FILE, orjson.dumps(page))
            shutil.rmtree(final, ignore_errors=True)  # one a killed score left unfinished
            try:
                os.replace(staging, final)
            except OSError:  # another score of the same inputs finished first
                if not (final / PAGE_FILE).is_file():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    for other in parent.iterdir():  # other keys' folders, and files of older versions
        if other == final or other.name.startswith(".site."):
            continue
        if other.is_dir():  # another score may be removing it too
            shutil.rmtree(other, ignore_errors=True)
        else:
            other.unlink(missing_ok=True)


def link_site_data(
    tables: ScoreTables,
    questions: Path,
    submissions: Path,
    public: bool,
    docs: Path,
    parts: tuple[str, ...] = ("explorer", "downloads"),
) -> dict[str, Any] | None:
    """Hard-link (or copy, across file systems) the score step's site data into ``docs`` when it
    was made from the same inputs; returns the explorer page's figures, or None when there is
    none or ``docs`` already has one of ``parts`` (then :func:`write_site_data`)."""
    key = site_data_key(tables.results, questions, submissions, public)
    folder = tables.results / PUBLISHED / f"site.{key}"
    if any((docs / part).exists() for part in parts):
        return None
    try:
        page: dict[str, Any] = orjson.loads((folder / PAGE_FILE).read_bytes())
        for part in parts:
            if (folder / part).is_dir():
                shutil.copytree(folder / part, docs / part, copy_function=_link)
    except (OSError, shutil.Error, orjson.JSONDecodeError):  # none, or a newer score removed it
        for part in parts:  # a link is never written through: the files are made anew
            shutil.rmtree(docs / part, ignore_errors=True)
        return None
    return page


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


__all__ = ["link_site_data", "publish_site_data", "write_site_data"]
