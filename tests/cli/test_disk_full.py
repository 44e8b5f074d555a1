"""A write that finds no room is one clean message, exit 1, and the same command run again with
room finishes the work.

The disks are real: a tmpfs of a few hundred KB mounted over the output folder (root only; the
test is skipped where mounting is not allowed), remounted larger for the rerun; and, without
root, a file-size limit (RLIMIT_FSIZE, so the kernel answers EFBIG).
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scoring.errors import DiskFullError, GamutError
from tests.demo_config import write_demo_config

pytestmark = pytest.mark.slow

GAMUT = str(Path(sys.executable).parent / "gamut")


@pytest.fixture
def tmpfs() -> Iterator[Callable[[Path, str], Callable[[str], None]]]:
    """``mount(folder, size)`` mounts a tmpfs of ``size`` there and returns ``resize(size)``."""
    mounted: list[Path] = []

    def mount(folder: Path, size: str) -> Callable[[str], None]:
        folder.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                              capture_output=True, text=True)  # fmt: skip
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
        mounted.append(folder)

        def resize(new: str) -> None:
            subprocess.run(["mount", "-o", f"remount,size={new}", str(folder)], check=True)

        return resize

    yield mount
    for folder in reversed(mounted):
        subprocess.run(["umount", str(folder)], check=False)


def _gamut(*args: str, cwd: Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of the signal
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([GAMUT, *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          preexec_fn=cap)  # fmt: skip


def _clean_failure(proc: subprocess.CompletedProcess[str], words: str) -> None:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error: ")]
    assert line.startswith("error: no room left on disk") and words in line, line
    assert "run the same command again" in line


def _temporary_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")]


def test_a_full_results_disk_while_scoring(
    tmp_path: Path, tmpfs: Callable[[Path, str], Callable[[str], None]]
) -> None:
    cfg = write_demo_config(tmp_path)
    results = tmp_path / "results"
    resize = tmpfs(results, "400k")  # the verdict table fits (about 160 KB); the tables do not
    judged = _gamut("judge", "--config", str(cfg), cwd=tmp_path)
    assert judged.returncode == 0, judged.stderr
    full = _gamut("score", "--config", str(cfg), cwd=tmp_path)
    _clean_failure(full, f"writing {results}/")
    assert "No space left on device" in full.stderr
    assert not _temporary_files(results)  # nothing half-written
    assert not (results / "provenance.json").exists()
    resize("16m")
    again = _gamut("score", "--config", str(cfg), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (results / "provenance.json").is_file() and (results / "leaderboard.parquet").is_file()


def test_a_full_disk_under_the_sqlite_index(
    tmp_path: Path, tmpfs: Callable[[Path, str], Callable[[str], None]]
) -> None:
    cfg = write_demo_config(tmp_path)
    text = cfg.read_text(encoding="utf-8")
    assert 'cache = ".gamut/verdicts.sqlite"' in text
    cfg.write_text(text.replace('cache = ".gamut/verdicts.sqlite"', 'cache = "sq/v.sqlite"'))
    resize = tmpfs(tmp_path / "sq", "64k")
    full = _gamut("judge", "--config", str(cfg), cwd=tmp_path)
    _clean_failure(full, "SQLite: database or disk is full")
    resize("16m")
    again = _gamut("judge", "--config", str(cfg), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "results" / "verdicts.parquet").is_file()


def test_a_file_size_limit_while_scoring_is_the_same_message(tmp_path: Path) -> None:
    """Without root: RLIMIT_FSIZE makes the kernel refuse the write with EFBIG."""
    cfg = write_demo_config(tmp_path)
    assert _gamut("judge", "--config", str(cfg), cwd=tmp_path).returncode == 0
    full = _gamut("score", "--config", str(cfg), cwd=tmp_path, limit=100_000)
    _clean_failure(full, "File too large")
    results = tmp_path / "results"
    assert not _temporary_files(results) and not (results / "provenance.json").exists()
    again = _gamut("score", "--config", str(cfg), cwd=tmp_path)
    assert again.returncode == 0, again.stderr


def test_what_counts_as_no_room() -> None:
    enospc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/data/x.parquet")
    found = DiskFullError.find(enospc)
    assert found is not None and found.where == "/data/x.parquet"
    assert "writing /data/x.parquet (No space left on device)" in str(found)
    assert DiskFullError.find(OSError(errno.EDQUOT, "Disk quota exceeded")) is not None
    assert DiskFullError.find(sqlite3.OperationalError("database or disk is full")) is not None
    arrow_like = OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")
    assert DiskFullError.find(arrow_like) is not None
    try:  # raised while handling, as a wrapper would
        try:
            raise enospc
        except OSError:
            raise RuntimeError("cannot save") from None
    except RuntimeError as wrapped:
        assert DiskFullError.find(wrapped) is None  # `from None` hides the cause: not ours to say
    chained = GamutError("cannot write the table")
    chained.__cause__ = enospc
    assert DiskFullError.find(chained) is not None
    for other in (
        OSError(errno.EACCES, "Permission denied", "/x"),
        sqlite3.OperationalError("database is locked"),
        ValueError("no space left on device"),  # only an I/O error says so
        FileNotFoundError(errno.ENOENT, "No such file or directory"),
    ):
        assert DiskFullError.find(other) is None, other
