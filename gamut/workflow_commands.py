"""GitHub Actions workflow commands (``::error file=...,line=...::message``) and the step summary.

The format is two escaping rules (GitHub's "Workflow commands for GitHub Actions"; the runner's
``ActionCommand`` unescapes exactly these): the message escapes ``%`` (first), CR and LF; a
property value also ``:`` and ``,``, so it cannot end the property list. The runner reads them
from the step's stdout.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

Level = Literal["error", "warning", "notice"]


def escape_data(text: str) -> str:
    """A workflow command's message, escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation(
    level: Level,
    message: str,
    *,
    title: str | None = None,
    file: str | None = None,
    line: int | None = None,
) -> str:
    """An ``::error`` / ``::warning`` / ``::notice`` annotation, optionally on a file's line."""
    props = ",".join(
        f"{key}={escape_data(str(value)).replace(':', '%3A').replace(',', '%2C')}"
        for key, value in (("title", title), ("file", file), ("line", line))
        if value is not None
    )
    return f"::{level}{' ' + props if props else ''}::{escape_data(message)}"


def append_step_summary(markdown: str) -> bool:
    """Append ``markdown`` and a newline to the step summary, if the runner names one (encoded
    first and written in one call, so a bad string cannot leave half of it)."""
    name = os.environ.get("GITHUB_STEP_SUMMARY")
    if not name:
        return False
    data = (markdown + "\n").encode("utf-8")
    with Path(name).open("ab") as f:
        f.write(data)
    return True
