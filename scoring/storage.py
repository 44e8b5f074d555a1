"""Small file helpers: every write goes to a temporary file renamed into place; every file read
from a folder anyone can fill is opened with :func:`open_regular`. New files get ordinary modes
(0o666/0o777 less the umask), not the private ones of temporary files: web servers running as
other users serve them."""

from __future__ import annotations

import errno
import io
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from scoring.errors import DiskFullError, NotRegularFileError


def _read_umask() -> int:
    try:  # Linux names the umask without changing it
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: A staging folder's name after its prefix: the id of the process that made it, then mkdtemp's
#: random part.
_STAGING = re.compile(r"(?P<pid>\d+)\.[a-z0-9_]{8}")


def make_staging_folder(parent: Path, prefix: str) -> Path:
    """A new folder ``<prefix><pid>.<random>`` in ``parent`` with an ordinary folder's mode, for
    a build renamed into place when complete (the pid tells a killed build's folder apart)."""
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}.", dir=parent))
    path.chmod(0o777 & ~_read_umask())
    return path


def swap_folder(new: Path, target: Path) -> None:
    """Replace ``target`` by ``new`` (both folders on one filesystem)."""
    old = None
    if target.exists():
        old = make_staging_folder(target.parent, f".{target.name}.old.")
        os.replace(target, old / target.name)
    os.replace(new, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or a number no process can have
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale_staging(parent: Path, prefixes: tuple[str, ...]) -> list[Path]:
    """Delete the staging folders (real folders named ``<prefix><pid>.<random>``) in ``parent``
    whose process is gone (a SIGKILL skips every ``finally``); returns those removed."""
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        for prefix in prefixes:
            found = _STAGING.fullmatch(entry.name[len(prefix) :])
            if not entry.name.startswith(prefix) or not found or _alive(int(found["pid"])):
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
            break
    return removed


def _mode_for(path: Path) -> int:
    """The mode ``path`` already has (as rewriting it with ``open()`` keeps), else a new file's."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_read_umask()


def _sync(path: Path, flags: int = os.O_RDONLY) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(
    path: Path, write: Callable[[Path], object], mode: int | None = None, *, durable: bool = False
) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it into place.

    A crash or error leaves ``path`` as it was and no temporary file. An existing file keeps its
    mode, a new one an ordinary file's, unless ``mode`` is given. ``durable`` fsyncs the file
    and then its folder (about 5 ms), so a power cut cannot leave an empty file under the name: for
    the ledger (paid verdicts), never a site page.

    Raises:
        DiskFullError: the write found no room (naming ``path``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        tmp.chmod(_mode_for(path) if mode is None else mode)
        if durable:
            _sync(tmp)
        os.replace(tmp, path)
        if durable:
            _sync(path.parent)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        full = DiskFullError.find(exc) if isinstance(exc, Exception) else None
        if full is not None and full.where is None:
            raise DiskFullError(full.detail, str(path)) from exc
        raise


def atomic_write_text(path: Path, text: str, *, durable: bool = False) -> None:
    """Write UTF-8 text atomically (``durable`` as :func:`atomic_write`)."""
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), durable=durable)


def atomic_write_bytes(
    path: Path, data: bytes, mode: int | None = None, *, durable: bool = False
) -> None:
    """Write bytes atomically (``mode`` and ``durable`` as :func:`atomic_write`)."""
    atomic_write(path, lambda tmp: tmp.write_bytes(data), mode, durable=durable)


#: What a name holds when it is not a regular file, by its file type.
_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFDIR: "a folder",
    stat.S_IFLNK: "a symbolic link",
}
#: What opening without following a link or waiting says of a name swapped since its lstat.
_SWAPPED = {errno.ELOOP: "a symbolic link", errno.ENXIO: "a socket or device"}


def _regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(str(path), _KINDS.get(stat.S_IFMT(mode), "not a file"))


def open_regular(path: Path, *, links: bool = False) -> io.BufferedReader:
    """Open ``path`` to read its bytes, when its name holds a regular file.

    For every reader of a folder someone else can fill: a pipe, socket, device, folder or link
    (a link can point anywhere) is refused by name before opening (``lstat``), so no reader waits
    on a pipe or reads a device forever; the file is then opened without following links or
    waiting and checked again (``fstat``), refusing a swap in between. Only the last part of the
    path is checked. ``links`` follows a link to a regular file (the project's own inputs, which a
    Hub snapshot keeps as links into its cache).

    Raises:
        NotRegularFileError: the name holds something else (an ``OSError`` too).
        OSError: the file cannot be opened.
    """
    _regular(path, (os.stat if links else os.lstat)(path).st_mode)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in _SWAPPED:
            raise NotRegularFileError(str(path), _SWAPPED[exc.errno]) from None
        raise
    try:
        _regular(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
        return io.BufferedReader(io.FileIO(fd, "rb"))
    except BaseException:
        os.close(fd)
        raise


__all__ = [  # the names the site may use
    "atomic_write_bytes",
    "atomic_write_text",
    "make_staging_folder",
    "remove_stale_staging",
    "swap_folder",
]
