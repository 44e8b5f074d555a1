"""Time the paper-scale synthetic writer at full size and print the measured figures."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from gamut.synthetic import write_paper_scale


def main() -> None:
    """Write the full paper-scale project into a temporary folder and report time and size."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        config = write_paper_scale(Path(tmp))
        seconds = time.perf_counter() - start
        rows = pq.read_metadata(config.parent / "results" / "verdicts.parquet").num_rows
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())
    print(
        f"paper-scale synthetic project: {seconds:.1f} s, {rows:,} verdict rows, "
        f"{size / 1e6:.1f} MB on disk"
    )


if __name__ == "__main__":
    main()
