"""Images are found, opened and typed from their bytes, with every problem listed at once."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from gamut.model_runner.images import resolve_images
from scoring.questions import load_questions
from tests.model_runner.project import IMAGES, Project


def test_media_type_comes_from_the_bytes_not_the_name(project: Project) -> None:
    questions = load_questions(project.root / "questions.jsonl")
    refs, problems = resolve_images(questions, project.root / "questions.jsonl")
    assert problems == []
    for i, q in enumerate(questions):
        name, _, media_type = IMAGES[i % len(IMAGES)]
        ref = refs[q.question_id]
        assert ref.media_type == media_type
        assert ref.path == (project.root / "images" / name).resolve()
        assert base64.b64decode(ref.base64_data()) == ref.path.read_bytes()
        assert ref.data_url().startswith(f"data:{media_type};base64,")


def _rewrite(project: Project, changes: dict[int, str | None]) -> Path:
    qs = project.questions
    for i, image in changes.items():
        qs[i]["image"] = image
    path = project.root / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
    return path


def test_every_image_problem_is_listed_at_once(project: Project) -> None:
    (project.root / "images" / "corrupt.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    (project.root / "images" / "notes.txt").write_text("hello", encoding="utf-8")
    path = _rewrite(
        project,
        {
            0: "images/missing.png",
            1: "images/corrupt.png",
            2: "images/notes.txt",
            3: None,
            4: "https://example.org/photo.jpg",
        },
    )
    refs, problems = resolve_images(load_questions(path), path)
    by_q = {p.question_id: p for p in problems}
    assert sorted(by_q) == ["q-0000", "q-0001", "q-0002", "q-0003"]
    assert "not found" in by_q["q-0000"].message
    assert "not a readable image" in by_q["q-0001"].message
    assert "not a readable image" in by_q["q-0002"].message
    assert "null" in by_q["q-0003"].message
    assert all(p.fix for p in problems)
    # A URL is passed through as a URL, unchecked (no network before the run).
    assert refs["q-0004"].url == "https://example.org/photo.jpg"
    assert refs["q-0004"].data_url() == "https://example.org/photo.jpg"
    assert set(refs) == {f"q-{i:04d}" for i in range(4, 10)}


def test_a_truncated_png_is_rejected(project: Project) -> None:
    good = (project.root / "images" / "a.png").read_bytes()
    (project.root / "images" / "cut.png").write_bytes(good[: len(good) // 2])
    path = _rewrite(project, {0: "images/cut.png"})
    _, problems = resolve_images(load_questions(path)[:1], path)
    assert len(problems) == 1 and problems[0].question_id == "q-0000"


def test_an_unsupported_format_is_a_problem(project: Project) -> None:
    from PIL import Image

    Image.new("RGB", (4, 4)).save(project.root / "images" / "x.bmp", format="BMP")
    path = _rewrite(project, {0: "images/x.bmp"})
    _, problems = resolve_images(load_questions(path)[:1], path)
    assert len(problems) == 1 and "BMP" in problems[0].message
