"""The demo's fictional models (a behaviour per setting and popularity bucket) and the
documented rates at which the two simulated judges depart from the known labels, as data."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from scoring.questions import Popularity, Setting

Probs = tuple[float, float, float, float]  # meets, partially_meets, missing, contradicts


@dataclass(frozen=True)
class Behaviour:
    """How a model answers one question in one setting: the probabilities of each verdict for
    every independently drawn check; in the multimodal setting, of naming the wrong entity or
    declining to name it; of one local swap, or a reversal, of a process's steps."""

    probs: Probs
    misidentify: float = 0.0
    unsure_identity: float = 0.0
    swap: float = 0.05
    reverse: float = 0.0


@dataclass(frozen=True)
class DemoModel:
    """A fictional demo model: its metadata and its behaviour."""

    submission_id: str
    model_name: str
    family: str
    profile: str
    text_only: Behaviour
    multimodal: Behaviour
    by_popularity: dict[Popularity, tuple[Behaviour, Behaviour]] = field(default_factory=dict)
    opener: str = ""

    def behaviour(self, setting: Setting, popularity: Popularity) -> Behaviour:
        """The behaviour for one question in one setting."""
        text, multi = self.by_popularity.get(popularity, (self.text_only, self.multimodal))
        return multi if setting is Setting.MULTIMODAL else text

    def metadata(self) -> dict[str, Any]:
        """The model's ``submission.yaml`` content (valid per ``SubmissionMeta``)."""
        meta = synthetic_meta(self.model_name, self.family, "demo", open_weights=False)
        meta["organisation"] = "GAMUT demo (fictional)"
        meta["link"] = "https://example.org/gamut-demo"
        meta["production"]["decoding"] = "synthetic: composed by gamut-workbench demo write"
        meta["production"]["notes"] = f"Synthetic demo model ({self.profile}); no model was run."
        return meta


def synthetic_meta(name: str, family: str, contact: str, *, open_weights: bool) -> dict[str, Any]:
    """A synthetic model's ``submission.yaml`` content (valid per ``SubmissionMeta``)."""
    return {
        "model_name": name,
        "organisation": "Synthetic Lab (fictional)",
        "model_family": family,
        "link": "https://example.org/synthetic",
        "open_weights": open_weights,
        "parameters": None,
        "date": dt.date(2026, 1, 1),
        "contact": f"{contact}@example.org",
        "production": {
            "decoding": "synthetic, no model was run",
            "tools": False,
            "web_access": False,
        },
        "demo": True,
    }


#: The six demo models, in submission-id order.
DEMO_MODELS: tuple[DemoModel, ...] = (
    DemoModel(
        "brassbell-bold", "Brassbell Bold", "brassbell", "confident but often wrong",
        text_only=Behaviour((0.56, 0.08, 0.06, 0.30), swap=0.3, reverse=0.25),
        multimodal=Behaviour((0.48, 0.08, 0.10, 0.34), misidentify=0.12, swap=0.3, reverse=0.25),
        opener="Easy one.",
    ),
    DemoModel(
        "hushmoth-careful", "Hushmoth Careful", "hushmoth", "cautious: many omissions, few errors",
        text_only=Behaviour((0.46, 0.07, 0.45, 0.02)),
        multimodal=Behaviour((0.40, 0.07, 0.51, 0.02), unsure_identity=0.15),
        opener="I will stick to what I am reasonably sure of.",
    ),
    DemoModel(
        "lanternfish-text", "Lanternfish Text", "lanternfish",
        "good at text, weak at recognising the image",
        text_only=Behaviour((0.74, 0.11, 0.11, 0.04)),
        multimodal=Behaviour((0.72, 0.11, 0.12, 0.05), misidentify=0.55),
    ),
    DemoModel(
        "marigold-mainstream", "Marigold Mainstream", "aurora",
        "strong on well-known entities, weak on rare ones",
        text_only=Behaviour((0.58, 0.12, 0.22, 0.08)),
        multimodal=Behaviour((0.52, 0.12, 0.27, 0.09), misidentify=0.1),
        by_popularity={
            Popularity.HEAD: (
                Behaviour((0.84, 0.07, 0.07, 0.02)),
                Behaviour((0.78, 0.08, 0.12, 0.02), misidentify=0.02),
            ),
            Popularity.TAIL: (
                Behaviour((0.22, 0.12, 0.46, 0.20), swap=0.3),
                Behaviour((0.20, 0.12, 0.48, 0.20), misidentify=0.35, swap=0.3),
            ),
        },
    ),
    DemoModel(
        "pebblewick-mini", "Pebblewick Mini", "aurora", "weak overall",
        text_only=Behaviour((0.30, 0.20, 0.36, 0.14), swap=0.25),
        multimodal=Behaviour((0.28, 0.20, 0.38, 0.14), misidentify=0.2, swap=0.25),
    ),
    DemoModel(
        "quillfeather-ultra", "Quillfeather Ultra", "quillfeather", "strong",
        text_only=Behaviour((0.85, 0.08, 0.05, 0.02)),
        multimodal=Behaviour((0.79, 0.10, 0.09, 0.02), misidentify=0.03),
    ),
)  # fmt: skip

#: Outcome probabilities for the other checks of a question whose entity was misidentified
#: (the response describes the wrong entity) or not named at all (a cautious non-answer).
MISIDENTIFIED: Probs = (0.06, 0.08, 0.62, 0.24)
UNIDENTIFIED: Probs = (0.08, 0.05, 0.87, 0.0)

#: Rates at which the lenient judge upgrades a known label (documented in demo/README.md).
LENIENT_MISSING_TO_PARTIAL = 0.25
LENIENT_PARTIAL_TO_MEETS = 0.35
#: Rate at which the partisan judge upgrades, by one level, a verdict of a model of its own family.
PARTISAN_OWN_FAMILY_UPGRADE = 0.40
