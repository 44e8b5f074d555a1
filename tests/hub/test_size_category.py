"""The dataset card's size category: every bucket ``datasets`` defines, each boundary."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from generator.downloads import size_category

BOUNDARIES = [
    (0, "n<1K"),
    (999, "n<1K"),
    (1_000, "1K<n<10K"),
    (9_999, "1K<n<10K"),
    (10_000, "10K<n<100K"),
    (100_000, "100K<n<1M"),
    (1_000_000, "1M<n<10M"),
    (10_000_000, "10M<n<100M"),
    (100_000_000, "100M<n<1B"),
    (999_999_999, "100M<n<1B"),
    (10**9, "1B<n<10B"),
    (10**10 - 1, "1B<n<10B"),
    (10**10, "10B<n<100B"),
    (10**11 - 1, "10B<n<100B"),
    (10**11, "100B<n<1T"),
    (10**12 - 1, "100B<n<1T"),
    (10**12, "n>1T"),
    (10**15, "n>1T"),
]


@pytest.mark.parametrize(("rows", "label"), BOUNDARIES, ids=[str(r) for r, _ in BOUNDARIES])
def test_each_boundary_falls_in_its_bucket(rows: int, label: str) -> None:
    assert size_category(rows) == label


def test_every_bucket_is_one_datasets_knows_and_each_is_reached() -> None:
    known = json.loads(
        resources.files("datasets.utils.resources").joinpath("size_categories.json").read_text()
    )
    reached = {size_category(rows) for rows, _ in BOUNDARIES}
    assert reached == set(known) - {"unknown"}
