"""A tiny but complete project written as real files, for the score-table tests.

Three questions (two domains, one with no Context tier), any number of models and judges, both
settings, and a verdict for every (submission, setting, judge, check) given by a function, so each
test states exactly the verdicts it reasons about.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from scoring.compiler import compile_rubric
from scoring.rubric import MetaRubric
from scoring.verdicts import VERDICT_COLUMNS

# food-1: AC, AC, V, C facts. food-2: AC and V facts only (no Context tier: renormalised).
# plant-3: an AC fact and a Valuable flexible list of 3 (baseline 1 + 3 secondary Context members).
RUBRICS = [
    {
        "question_id": "food-1",
        "snippets": [],
        "items": [
            {"id": "I1", "type": "fact", "tier": "answer_critical", "text": "Names the dish."},
            {"id": "I2", "type": "fact", "tier": "answer_critical", "text": "Names its origin."},
            {"id": "I3", "type": "fact", "tier": "valuable", "text": "Names the main starch."},
            {"id": "I4", "type": "fact", "tier": "context", "text": "Mentions a festival."},
        ],
    },
    {
        "question_id": "food-2",
        "snippets": [],
        "items": [
            {"id": "I1", "type": "fact", "tier": "answer_critical", "text": "Names the fruit."},
            {"id": "I2", "type": "fact", "tier": "valuable", "text": "Names its season."},
        ],
    },
    {
        "question_id": "plant-3",
        "snippets": [],
        "items": [
            {"id": "I1", "type": "fact", "tier": "answer_critical", "text": "Names the tree."},
            {
                "id": "I2",
                "type": "flexible_list",
                "tier": "valuable",
                "topic": "uses",
                "members": ["timber", "shade", "fruit"],
                "baselines": [1],
            },
        ],
    },
]
QUESTIONS = [
    {"question_id": "food-1", "domain": "food", "popularity": "head", "egocentric": True},
    {"question_id": "food-2", "domain": "food", "popularity": "tail", "egocentric": False},
    {"question_id": "plant-3", "domain": "plants", "popularity": "head", "egocentric": True},
]
CHECKS = {
    r["question_id"]: [c.check_id for c in compile_rubric(MetaRubric.model_validate(r))]
    for r in RUBRICS
}
SETTINGS = ("multimodal", "text_only")

VerdictFn = Callable[[str, str, str, str, str], str | None]


@dataclass
class Project:
    """What to write. ``verdict(sub, setting, judge, question, check)`` returns a verdict, or None
    for "no verdict row"."""

    models: dict[str, str]  # submission id -> model family
    judges: dict[str, str]  # judge name -> family; the first is primary
    verdict: VerdictFn
    settings: dict[str, tuple[str, ...]] = field(default_factory=dict)  # default: both
    resamples: int = 200
    seed: int = 7
    responses: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def write(self, root: Path) -> Path:
        """Write every file under ``root``; return the config path."""
        root.mkdir(parents=True, exist_ok=True)
        qlines = [
            {
                **q,
                "image_id": f"img-{q['question_id']}",
                "image": None,
                "question": "What is this?",
                "text_only_question": f"What is {q['question_id']}?",
            }
            for q in QUESTIONS
        ]
        (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qlines))
        (root / "rubrics").mkdir(exist_ok=True)
        for r in RUBRICS:
            (root / "rubrics" / f"{r['question_id']}.json").write_text(json.dumps(r))
        rows: dict[str, list[object]] = {c: [] for c in VERDICT_COLUMNS}
        kinds = {
            (r["question_id"], c.check_id): c
            for r in RUBRICS
            for c in compile_rubric(MetaRubric.model_validate(r))
        }
        for sub, family in self.models.items():
            d = root / "submissions" / sub
            d.mkdir(parents=True, exist_ok=True)
            meta = {
                "model_name": sub.title(),
                "organisation": "Org",
                "model_family": family,
                "link": "https://example.org/m",
                "open_weights": False,
                "parameters": None,
                "date": "2026-01-01",
                "contact": "a@example.org",
                "demo": False,
                "production": {"decoding": "greedy", "tools": False, "web_access": False},
            }
            (d / "submission.yaml").write_text(yaml.safe_dump(meta))
            for setting in self.settings.get(sub, SETTINGS):
                lines = [
                    {
                        "question_id": q["question_id"],
                        "response": self.responses.get((sub, setting, q["question_id"]), "x" * 10),
                    }
                    for q in QUESTIONS
                ]
                (d / f"{setting}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
                for judge in self.judges:
                    for qid, cids in CHECKS.items():
                        for cid in cids:
                            v = self.verdict(sub, setting, judge, qid, cid)
                            if v is None:
                                continue
                            c = kinds[(qid, cid)]
                            for col, val in zip(
                                VERDICT_COLUMNS,
                                (
                                    sub,
                                    setting,
                                    judge,
                                    qid,
                                    cid,
                                    c.kind.value,
                                    c.tier.value,
                                    c.secondary,
                                    v,
                                ),
                                strict=True,
                            ):
                                rows[col].append(val)
        (root / "results").mkdir(exist_ok=True)
        pq.write_table(pa.table(rows), root / "results" / "verdicts.parquet")
        judges = []
        for i, (name, family) in enumerate(self.judges.items()):
            judges += [
                f"[judges.{name}]",
                'provider = "replay"',
                f'replay = "replay/{name}.parquet"',
                f'model = "{name}-model"',
                f'family = "{family}"',
                f"primary = {'true' if i == 0 else 'false'}",
                "",
            ]
        cfg = "\n".join(
            [
                "[benchmark]",
                'questions = "questions.jsonl"',
                'rubrics = "rubrics"',
                'submissions = "submissions"',
                "",
                "[scoring]",
                f"bootstrap_resamples = {self.resamples}",
                f"seed = {self.seed}",
                "",
                *judges,
            ]
        )
        (root / "gamut.toml").write_text(cfg)
        return root / "gamut.toml"


def table(rows: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
    """``(question, check, verdict)`` triples as a lookup."""
    return {(q, c): v for q, c, v in rows}
