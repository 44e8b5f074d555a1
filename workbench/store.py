"""The workbench folder (``[workbench] dir``): every build step's state as JSON files, the folder
0700 and each file 0600, written atomically (a stopped step leaves the previous state whole). It
holds held text (candidates, snippets, meta-rubrics): never published; commands print ids only.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scoring.errors import GamutError
from scoring.storage import atomic_write_bytes, open_regular

FOLDER_MODE = 0o700
FILE_MODE = 0o600
#: The rubric steps' state per question (written by ``rubrics``, read by ``revision`` too).
RUBRIC_STATUS = "rubric_status.json"


class WorkbenchError(GamutError):
    """A workbench step cannot run; the message says what to do."""


class Workbench:
    """The state files of one workbench folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def open(cls, root: Path) -> Workbench:
        """The workbench at ``root``, created 0700 if absent (an existing one is made 0700)."""
        root.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
        os.chmod(root, FOLDER_MODE)
        return cls(root)

    def path(self, name: str) -> Path:
        """The path of the state file ``name`` (a relative path inside the folder)."""
        return self.root / name

    def read(self, name: str, default: Any = None) -> Any:
        """The JSON value of ``name``, or ``default`` when the step has not written it yet."""
        try:
            with open_regular(self.path(name)) as f:
                return json.loads(f.read())
        except FileNotFoundError:
            return default
        except json.JSONDecodeError as exc:
            raise WorkbenchError(
                f"{self.path(name)}: not valid JSON ({exc}); restore it from a backup or remove "
                "it and run the step that writes it again"
            ) from None

    def write(self, name: str, value: Any) -> Path:
        """Write ``value`` as JSON to ``name``, atomically and private (0600)."""
        path = self.path(name)
        for parent in reversed(path.relative_to(self.root).parents[:-1]):
            (self.root / parent).mkdir(exist_ok=True, mode=FOLDER_MODE)
        # no indent: the C encoder (an indented dump is encoded in Python, 5x slower)
        data = json.dumps(value, ensure_ascii=False, sort_keys=True) + "\n"
        atomic_write_bytes(path, data.encode(), mode=FILE_MODE)
        return path


class Checkpoint:
    """Saves a step's state at most every ``every_s`` seconds and at the end: a stopped step
    redoes at most that much, and a paper-scale state file is not rewritten per request."""

    def __init__(self, save: Callable[[], object], every_s: float = 2.0) -> None:
        self.save = save
        self.every_s = every_s
        self.last = time.monotonic()

    def touch(self) -> None:
        """Save if the last save is older than ``every_s``."""
        if time.monotonic() - self.last >= self.every_s:
            self.flush()

    def flush(self) -> None:
        """Save now."""
        self.save()
        self.last = time.monotonic()
