"""A tiny project for ``gamut generate`` tests: questions, real images and a config."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from gamut.config import GamutConfig, load_config
from gamut.project import Project as Deployment
from tests.fakes.llm_server import FakeLLMServer, prompt_text

#: Image files of the tiny project: (name on disk, Pillow format, media type the bytes have).
IMAGES = [
    ("a.png", "PNG", "image/png"),
    ("b.jpg", "JPEG", "image/jpeg"),
    ("c.webp", "WEBP", "image/webp"),
    ("d.gif", "GIF", "image/gif"),
    ("e-really-jpeg.png", "JPEG", "image/jpeg"),  # the name lies; the bytes decide
]


#: A config for a folder holding ``questions.jsonl`` (the judge is never used by generate).
CONFIG = (
    '[benchmark]\nquestions = "questions.jsonl"\nrubrics = "rubrics"\n'
    'submissions = "submissions"\n\n'
    '[judges.replay]\nprovider = "replay"\nmodel = "m"\nfamily = "f"\nprimary = true\n'
    'replay = "verdicts.parquet"\n'
)


def answer_responder(body: dict[str, Any]) -> str:
    """A free-text model: repeats the question it was asked."""
    return "An answer to: " + prompt_text(body).splitlines()[-1]


def write_image(path: Path, fmt: str, seed: int) -> None:
    """A small real image in the given format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    img = Image.new("RGB", (24, 16), (40 * seed % 256, 90, 200 - seed))
    img.save(path, format=fmt)


@dataclass
class Project:
    """A temporary deployment: config, questions and images."""

    root: Path
    n_questions: int

    @property
    def config_path(self) -> Path:
        """The project's gamut.toml."""
        return self.root / "gamut.toml"

    @property
    def cfg(self) -> GamutConfig:
        """The loaded config."""
        return load_config(self.config_path)

    @property
    def deployment(self) -> Deployment:
        """The project of the config, as ``gamut generate`` takes it."""
        return Deployment(self.cfg)

    @property
    def questions(self) -> list[dict[str, Any]]:
        """The question objects, in file order."""
        lines = (self.root / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def folder(self, sid: str) -> Path:
        """A submission's folder."""
        return self.root / "submissions" / sid

    def lines(self, sid: str, setting: str) -> list[dict[str, Any]]:
        """Every line of a response file, parsed."""
        path = self.folder(sid) / f"{setting}.jsonl"
        if not path.exists():
            return []
        text = path.read_text(encoding="utf-8")
        assert text == "" or text.endswith("\n")
        return [json.loads(line) for line in text.splitlines()]


def make_project(root: Path, n: int = 10) -> Project:
    """Write ``n`` questions cycling through the images of :data:`IMAGES`."""
    for i, (name, fmt, _) in enumerate(IMAGES):
        write_image(root / "images" / name, fmt, i)
    with (root / "questions.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n):
            name = IMAGES[i % len(IMAGES)][0]
            q = {
                "question_id": f"q-{i:04d}",
                "image_id": f"img-{i % len(IMAGES)}",
                "image": f"images/{name}",
                "domain": ["food", "plants"][i % 2],
                "popularity": ["head", "torso", "tail"][i % 3],
                "egocentric": i % 4 == 0,
                "question": f"What is this thing number {i}?",
                "text_only_question": f"What is the thing called item-{i}?",
            }
            f.write(json.dumps(q) + "\n")
    (root / "gamut.toml").write_text(CONFIG, encoding="utf-8")
    return Project(root, n)


def base_url(srv: FakeLLMServer, provider: str) -> str:
    """The fake server's base URL for a provider's SDK."""
    return srv.anthropic_base_url if provider == "anthropic" else srv.openai_base_url
