"""Hostile ledger shards: what each costs `gamut ledger merge` to refuse (or, for keys chosen to
collide in the key index's former mix, to merge), each as a real command in its own process;
and a named pipe, socket, folder or link to ``/dev/zero`` named like a shard, each refused by
name unopened.

Prints, per case, the exit code, wall and CPU seconds and peak memory of that process beside the
target (at most 5 s and 300 MB each, the command's own start-up included), and whether the case
held (refused by name, or merged, with no traceback).

Run: ``.venv/bin/python benchmarks/bench_hostile_shards.py`` (from the repository root).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring.ledger import KeyScheme, Ledger  # noqa: E402
from tests.hub.conftest import write_config  # noqa: E402
from tests.ledger import hostile_shards as hs  # noqa: E402

TARGET_S, TARGET_MB = 5.0, 300.0
RECORD: dict[str, object] = {
    "judge_identity": "jid",
    "judge": "j1",
    "submission_id": "m-one",
    "setting": "multimodal",
    "question_id": "food-0001",
    "check_id": "I1",
    "model": "judge-2026-01-01",
    "source": "direct",
    "tokens_in": 0,
    "tokens_cached": 0,
    "tokens_out": 0,
    "calls": 1,
    "latency_s": 0.0,
    "created_at": None,
    "rationale": "",
}


def _colliding() -> bytes:
    import datetime as dt

    return hs.colliding_shard(
        hs.colliding_keys(), {**RECORD, "created_at": dt.datetime.now(dt.UTC)}
    )


def _shard(build: Callable[[], bytes]) -> Callable[[Path], int]:
    """Writes the shard ``build`` makes into a folder, named by its SHA-256; its size."""

    def make(folder: Path) -> int:
        data = build()
        (folder / (hashlib.sha256(data).hexdigest() + ".parquet")).write_bytes(data)
        return len(data)

    return make


def _special(kind: str) -> Callable[[Path], int]:
    """Plants a special file of ``kind`` named like a shard into a folder."""

    def make(folder: Path) -> int:
        hs.plant(folder / ("a" * 64 + ".parquet"), kind)
        return 0

    return make


CASES: list[tuple[str, Callable[[Path], int], str]] = [
    ("a small shard that decodes to 40 M rows", _shard(hs.many_rows), "refused"),
    ("a dictionary that decodes to 400 MB", _shard(hs.dictionary_bomb), "refused"),
    ("40,000 keys sharing the former 32-bit mix", _shard(_colliding), "merged"),
    *((f"a {kind} named like a shard", _special(kind), "refused") for kind in hs.SPECIAL),
]


def run_case(root: Path, make: Callable[[Path], int]) -> tuple[int, str, float, float, float, int]:
    """Plant a case in a ledger folder and merge it into a fresh project's ledger; the
    figures of :func:`~tests.ledger.hostile_shards.run_gamut` and the case's size."""
    cfg = write_config(root / "p", "rubrics", public=True)
    other = Ledger.open(root / "hostile", KeyScheme.public(), held=False)
    (other.root / "verdicts").mkdir(parents=True, exist_ok=True)
    size = make(other.root / "verdicts")
    return (*hs.run_gamut("ledger", "merge", str(other.root), "--config", str(cfg)), size)


def main() -> None:
    """Run every case; print the figures beside the targets."""
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    held = 0
    for what, make, want in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            code, out, wall, cpu, mb, size = run_case(Path(tmp), make)
        ok_out = "Traceback" not in out and (code == 1 if want == "refused" else code == 0)
        ok = ok_out and wall <= TARGET_S and mb <= TARGET_MB
        held += ok
        print(
            f"{what} ({size:,} bytes): {want if ok_out else 'NOT ' + want} (exit {code}) in "
            f"{wall:.2f} s wall, {cpu:.2f} s CPU, {mb:.0f} MB peak (target <= {TARGET_S:.0f} s "
            f"and {TARGET_MB:.0f} MB): {'ok' if ok else 'MISSED'}"
        )
        if not ok_out:
            print("  " + out.strip().replace("\n", "\n  "))
    print(f"cases held: {held} of {len(CASES)}")


if __name__ == "__main__":
    main()
