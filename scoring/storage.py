"""Small file-writing helpers: every write is to a temporary file, then renamed into place."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it into place.

    A crash or error leaves ``path`` as it was and no temporary file behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 text atomically."""

    def write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    atomic_write(path, write)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write bytes atomically."""

    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    atomic_write(path, write)


__all__ = ["atomic_write", "atomic_write_bytes", "atomic_write_text"]
