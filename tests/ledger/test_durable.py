"""The ledger's files reach the disk before they are named: each write syncs the file, renames
it, then syncs its folder; a site page is written without a sync."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from scoring.ledger import KeyScheme, Ledger, VerdictRecord
from scoring.storage import atomic_write_text
from scoring.verdicts import Verdict


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``os.fsync`` is called on, in order (the real call still runs)."""
    seen: list[str] = []
    real = os.fsync

    def spy(fd: int) -> None:
        seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return seen


def test_a_durable_write_syncs_the_file_then_its_folder(tmp_path: Path, synced: list[str]) -> None:
    target = tmp_path / "f.json"
    atomic_write_text(target, "{}", durable=True)
    assert len(synced) == 2
    assert Path(synced[0]).parent == tmp_path and Path(synced[0]).name.endswith(".tmp")
    assert Path(synced[1]) == tmp_path  # the rename, after it happened
    assert target.read_text() == "{}"
    atomic_write_text(tmp_path / "page.html", "<p>")
    assert len(synced) == 2  # not durable: no sync


def test_every_ledger_shard_and_the_manifest_are_written_durably(
    tmp_path: Path, synced: list[str]
) -> None:
    led = Ledger.open(tmp_path / "ledger", KeyScheme.public(), held=False)
    assert any(p.endswith(".tmp") for p in synced)  # the manifest
    synced.clear()
    scheme = KeyScheme.public()
    key = scheme.digest("fact", "c")
    records = [
        VerdictRecord(scheme.digest("r", str(n)) + key, "J", "j1", "m", "multimodal", "q", "I1",
                      Verdict.MEETS, "model")
        for n in range(3)
    ]  # fmt: skip
    name = led.append_verdicts(records)
    assert name is not None
    folders = {Path(p) for p in synced if not p.endswith(".tmp")}
    assert any(p.endswith(".tmp") for p in synced)
    assert (tmp_path / "ledger" / "verdicts") in folders
    assert isinstance(led.read_shard("verdicts", name), pa.Table)
