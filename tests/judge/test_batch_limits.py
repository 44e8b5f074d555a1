"""Batch byte limits are the providers' stated decimal megabytes (200 MB, 256 MB), with a margin:
a chunk never reaches the stated figure, and fills most of it."""

from __future__ import annotations

import pytest

from scoring.judge.anthropic_backend import ANTHROPIC_LIMITS
from scoring.judge.batch.api import BatchLine, Limits, split
from scoring.judge.batch.openai_lines import OPENAI_LIMITS

MB = 1_000_000


@pytest.mark.parametrize(
    ("limits", "stated_mb"),
    [(OPENAI_LIMITS, 200), (ANTHROPIC_LIMITS, 256)],
    ids=["openai", "anthropic"],
)
def test_chunks_stay_under_the_stated_decimal_limit_and_fill_most_of_it(
    limits: Limits, stated_mb: int
) -> None:
    assert limits.max_bytes < stated_mb * MB  # 200 MiB would be 209,715,200 bytes: over
    line = 999_999  # the size only: split never reads the data
    lines = [BatchLine(f"{i:064x}", line, b"") for i in range(3 * stated_mb)]
    chunks = list(split(lines, limits))
    sizes = [sum(ln.size + 1 for ln in c) for c in chunks]
    assert sum(len(c) for c in chunks) == len(lines)
    assert max(sizes) < stated_mb * MB
    assert min(sizes[:-1]) > 0.9 * stated_mb * MB
