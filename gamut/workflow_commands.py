"""GitHub Actions workflow commands (``::error file=...,line=...::message``) and the step summary.

Written here rather than taken from a library: the format is two escaping rules (GitHub's
"Workflow commands for GitHub Actions"; the runner's ``ActionCommand`` unescapes exactly these),
and the jobs that hold secrets install the runtime dependencies only.

- the message: ``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A`` (``%`` first, so text that already
  looks escaped is decoded once, back to itself);
- a property value (``title``, ``file``, ``line``...): the same, and ``:`` -> ``%3A``, ``,`` ->
  ``%2C``, so a value cannot end the property list or start the message.

A runner reads these commands from the step's standard output, so a step must not send it to
``/dev/null``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

Level = Literal["error", "warning", "notice"]

#: The environment variable naming the step summary file (set by the runner).
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def escape_data(text: str) -> str:
    """A workflow command's message, escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(
    name: str, message: str, properties: Mapping[str, str | int | None] | None = None
) -> str:
    """One workflow command line (no newline); properties whose value is None are left out."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in (properties or {}).items()
        if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(
    level: Level,
    message: str,
    *,
    title: str | None = None,
    file: str | None = None,
    line: int | None = None,
) -> str:
    """An ``::error`` / ``::warning`` / ``::notice`` annotation, optionally on a file's line."""
    return command(level, message, {"title": title, "file": file, "line": line})


def append_step_summary(markdown: str) -> bool:
    """Append ``markdown`` and a newline to the step summary, if the runner names one.

    The text is encoded before the file is opened and written in one call, so a bad string
    cannot leave half of it. Returns whether a summary file was named.
    """
    name = os.environ.get(SUMMARY_ENV)
    if not name:
        return False
    data = (markdown + "\n").encode("utf-8")
    with Path(name).open("ab") as f:
        f.write(data)
    return True
