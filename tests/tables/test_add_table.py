"""docs/adding-a-score-table.md followed once, step by step: a new table is registered, then
computed, written, required by the site, documented and downloadable (site and Hub dataset); the
registration is undone at the end, and nothing of it is left."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from gamut.publish import publish_files
from generator.downloads import write_downloads
from generator.published import link_site_data
from generator.tables import load_tables
from scoring.errors import ProblemsError
from scoring.tables import registry
from scoring.tables.columns import TABLES
from scoring.tables.matrix import SETTINGS
from scoring.tables.registry import ScoreTable, score_tables
from scoring.tables.scores import Scores
from tests.tables.conftest import main_project

ROOT = Path(__file__).resolve().parents[2]
NAME = "longest_response"
LABEL = "Longest response per model"
REPO = "gamut-bench/results"


# Step 1: the builder, a function of the scores (no I/O, no rubric text).
def longest_response(sc: Scores) -> pd.DataFrame:
    """One row per submission and setting with responses: its longest response in characters."""
    inputs = sc.inputs
    rows = [
        {
            "submission_id": sid,
            "setting": setting.value,
            "longest_chars": int(np.nanmax(inputs.response_chars[s, k])),
        }
        for s, sid in enumerate(inputs.submission_ids)
        for k, setting in enumerate(SETTINGS)
        if inputs.has_responses[s, k]
    ]
    return pd.DataFrame(rows, columns=["submission_id", "setting", "longest_chars"])


# Step 2: every column it writes, with its Arrow type and meaning.
COLUMNS = {
    "submission_id": ("string", "the submission (its folder name under submissions/)"),
    "setting": ("string", "multimodal or text_only"),
    "longest_chars": ("int64", "the submission's longest response, in characters"),
}
# Step 3: its registry entry (the site reads all three columns).
ENTRY = ScoreTable(
    NAME,
    LABEL,
    lambda b: longest_response(b.scores),
    site=("submission_id", "setting", "longest_chars"),
)


def _guide() -> str:
    text = (ROOT / "docs" / "adding-a-score-table.md").read_text(encoding="utf-8")
    assert text.startswith("# How to add a score table\n"), "docs/adding-a-score-table.md"
    return text


def test_the_guide_names_the_steps_this_test_takes() -> None:
    guide = _guide()
    for step in ("scoring/tables/registry.py", "SCORE_TABLES", "scoring/tables/columns.py",
                 "`TABLES`", "ScoreTable(name, label, build)", "site=", "b.scores",
                 "tests/tables/test_add_table.py"):  # fmt: skip
        assert step in guide, step


def test_a_registered_table_is_computed_written_documented_and_downloadable(
    tmp_path: Path,
) -> None:
    project = main_project(responses={("alpha", "multimodal", "food-1"): "y" * 40})
    cfg = load_config(project.write(tmp_path / "project"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(TABLES, NAME, COLUMNS)  # step 2
        mp.setattr(registry, "SCORE_TABLES", (*registry.SCORE_TABLES, ENTRY))  # step 3

        # computed: alpha's longest multimodal response is the 40-character one
        written = pipeline.score(Project(cfg))
        expected = pd.DataFrame(
            {
                "submission_id": ["alpha", "alpha", "beta", "beta"],
                "setting": ["multimodal", "text_only"] * 2,
                "longest_chars": [40, 10, 10, 10],
            }
        )
        pd.testing.assert_frame_equal(written[NAME], expected)
        # written, in the three formats of a table that is not large
        results = written.out_dir
        for fmt in ("parquet", "csv", "json"):
            assert (results / f"{NAME}.{fmt}").is_file(), fmt
        back = pd.read_parquet(results / f"{NAME}.parquet")
        assert back.to_dict("records") == expected.to_dict("records")

        # required by the site: read with the other tables, refused when missing
        tables = load_tables(results)
        assert list(tables.frames[NAME].columns) == list(COLUMNS)

        # documented and downloadable on the site: its files, label and column dictionary
        docs, spec = tmp_path / "docs", Project(cfg).site_spec()
        assert spec.questions is not None and spec.submissions is not None
        # the score step's verdict and response files, linked in as a build does
        assert link_site_data(tables, spec.questions, spec.submissions, False, docs) is not None
        dl = write_downloads(tables, docs, public=False)
        downloads = dl["main"]
        assert isinstance(downloads, list)
        main = {d.name: d for d in downloads}
        assert main[NAME].label == LABEL
        assert main[NAME].columns == {c: meaning for c, (_, meaning) in COLUMNS.items()}
        assert main[NAME].rows == 4
        assert {f[1] for f in main[NAME].files} >= {
            f"downloads/{NAME}.csv",
            f"downloads/{NAME}.parquet",
        }
        assert pd.read_csv(docs / "downloads" / f"{NAME}.csv")["longest_chars"].tolist() == [
            40,
            10,
            10,
            10,
        ]

        # downloadable from the Hub dataset, documented on its card
        files = {f.path_in_repo: f.data for f in publish_files(Project(cfg), REPO)}
        assert f"{NAME}.parquet" in files
        card = html.unescape(files["README.md"].decode("utf-8"))
        assert COLUMNS["longest_chars"][1] in card

        (results / f"{NAME}.parquet").unlink()
        with pytest.raises(ProblemsError) as err:
            load_tables(results)
        assert any(p.file.endswith(f"{NAME}.parquet") for p in err.value.problems)

    # undone: no entry, no columns, and the next run writes no such table
    assert NAME not in TABLES
    assert NAME not in {t.name for t in score_tables()}
    again = pipeline.score(Project(cfg))
    assert NAME not in again.frames
    assert not [f for f in again.files if f.stem == NAME]
