"""The images a run needs: found, opened and typed before any model call."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from scoring.errors import Problem
from scoring.judge.generation import ImageRef
from scoring.questions import Question

#: Media types both providers accept, keyed by Pillow's format name.
MEDIA_TYPES = {"JPEG": "image/jpeg", "PNG": "image/png", "GIF": "image/gif", "WEBP": "image/webp"}


def _is_url(ref: str) -> bool:
    return ref.startswith(("http://", "https://"))


def open_image(path: Path) -> tuple[str | None, str]:
    """Return (media type, "") for a readable image, or (None, reason) for anything else."""
    if not path.is_file():
        return None, "image file not found"
    try:
        with Image.open(path) as im:
            fmt = im.format
            im.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        return None, f"not a readable image ({type(exc).__name__}: {exc})"
    media_type = MEDIA_TYPES.get(fmt or "")
    if media_type is None:
        return None, f"image format {fmt} is not accepted by model APIs (use PNG, JPEG, GIF, WEBP)"
    return media_type, ""


def resolve_images(
    questions: Iterable[Question], questions_file: Path
) -> tuple[dict[str, ImageRef], list[Problem]]:
    """Find and check the image of every question, relative to the questions file."""
    base = questions_file.parent
    refs: dict[str, ImageRef] = {}
    problems: list[Problem] = []
    checked: dict[Path, tuple[str | None, str]] = {}
    fname = str(questions_file)
    for q in questions:
        if q.image is None:
            fix = "add the image path, or run --setting text_only only"
            problems.append(Problem(fname, None, "no image (image is null)", fix, q.question_id))
            continue
        if _is_url(q.image):
            refs[q.question_id] = ImageRef(url=q.image)
            continue
        path = Path(q.image)
        path = (path if path.is_absolute() else base / path).resolve()
        if path not in checked:
            checked[path] = open_image(path)
        media_type, reason = checked[path]
        if media_type is None:
            said = f"image {q.image!r} ({path}): {reason}"
            fix = "put a readable PNG/JPEG/GIF/WEBP image there, or fix the question's image field"
            problems.append(Problem(fname, None, said, fix, q.question_id))
            continue
        refs[q.question_id] = ImageRef(path=path, media_type=media_type)
    return refs, problems
