"""The home page's rows carry the modality table's text-only score and gap, whatever the
leaderboard table carries under the same names (the engine's leaderboard has its own columns)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from generator.pages import leaderboard
from generator.tables import load_tables
from tests.generator.fixture_tables import write_fixture_results


def test_text_only_and_gap_cells_are_the_modality_tables(tmp_path: Path) -> None:
    tables = load_tables(write_fixture_results(tmp_path / "results"))
    lb = tables.frames["leaderboard"]
    # the engine's leaderboard carries these columns too, empty in rows it does not fill
    lb["text_only"], lb["gap"], lb["gap_lo"], lb["gap_hi"] = np.nan, np.nan, np.nan, np.nan
    mod = tables.frames["modality"]
    primary = mod[mod["judge"] == tables.primary_judge].set_index("submission_id")
    rows = leaderboard(tables)["table"].rows
    assert rows
    for row in rows:
        want = primary.loc[row.attrs["sid"]]
        assert row.cells["text_only"].value == want["text_only"]
        gap = row.cells["gap"]
        assert (gap.value, gap.lo, gap.hi) == (want["gap"], want["gap_lo"], want["gap_hi"])
