"""Composed responses: the text says what each known label claims it says."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scoring.questions import Setting
from scoring.rubric import FlexibleList, MetaRubric, Process
from scoring.rubric_io import load_rubrics
from scoring.verdicts import Verdict
from workbench.synthetic.compose import compose_response, sequence_label, threshold_label
from workbench.synthetic.profiles import DEMO_MODELS
from workbench.synthetic.text import (
    contradict_statement,
    identified_entity,
    statement,
    vague_member,
    vague_statement,
)

FIXTURES = Path(__file__).parent / "fixtures"
M, P, S, C = Verdict.MEETS, Verdict.PARTIALLY_MEETS, Verdict.MISSING, Verdict.CONTRADICTS


def test_threshold_label() -> None:
    assert threshold_label(2, 0, 0, 2) is M
    assert threshold_label(1, 0, 3, 2) is P
    assert threshold_label(0, 1, 0, 1) is P
    assert threshold_label(0, 0, 1, 1) is C
    assert threshold_label(0, 0, 0, 1) is S


def test_sequence_label() -> None:
    assert sequence_label([0, 1, 2], [0, 1, 2]) is M
    assert sequence_label([0, 3, 1, 2], [0, 1, 2]) is M  # other steps may come between
    assert sequence_label([0, 2], [0, 1, 2]) is P  # a step left out
    assert sequence_label([1, 0, 2], [0, 1, 2]) is P  # one local swap
    assert sequence_label([2, 1, 0], [0, 1, 2]) is C  # reversed
    assert sequence_label([1], [0, 1, 2]) is S


def test_text_rewrites() -> None:
    assert statement("Identifies the dish as pad thai, a Thai noodle dish.") == (
        "This is pad thai, a Thai noodle dish."
    )
    assert statement("Identifies them as pastéis de nata.") == "These are pastéis de nata."
    assert statement("Notes that it was first made in 1860.") == "It was first made in 1860."
    assert identified_entity(
        "Identifies the plant as Monstera deliciosa (Swiss cheese plant)."
    ) == ("Monstera deliciosa")
    wrong = contradict_statement("States that it opened in 1889.", np.random.default_rng(0))
    assert "1889" not in wrong and wrong.startswith("It opened in ")
    assert "not true that needing" in contradict_statement(
        "Notes that needing two touches saves energy.", np.random.default_rng(0)
    )
    assert vague_member("tamarind paste") == "some kind of paste"
    assert vague_member("a custard of egg yolks") == "some kind of custard"
    hedged = vague_statement("Notes that it was promoted as a national dish in the late 1930s.")
    assert "promoted as a national dish" in hedged and "1930s" not in hedged


def _responses() -> list[tuple[MetaRubric, str, dict[str, Verdict]]]:
    rubrics = load_rubrics([FIXTURES / "rubrics"])
    questions = [
        json.loads(line) for line in (FIXTURES / "questions.jsonl").read_text().splitlines()
    ]
    out = []
    for seed in range(8):
        for model in DEMO_MODELS:
            for setting in Setting:
                for q in questions:
                    composed = compose_response(
                        rubrics[q["question_id"]], domain=q["domain"], setting=setting,
                        behaviour=model.behaviour(setting, q["popularity"]),
                        rng=np.random.default_rng(seed), wrong_entities=["a red herring"],
                        opener=model.opener,
                    )  # fmt: skip
                    out.append((rubrics[q["question_id"]], composed.text, composed.labels))
    return out


@pytest.fixture(scope="module")
def responses() -> list[tuple[MetaRubric, str, dict[str, Verdict]]]:
    return _responses()


def test_step_and_sequence_labels_match_the_text(
    responses: list[tuple[MetaRubric, str, dict[str, Verdict]]],
) -> None:
    seen = set()
    for rubric, text, labels in responses:
        for item in rubric.items:
            if not isinstance(item, Process):
                continue
            where = {}
            for j, step in enumerate(item.steps, 1):
                label = labels[f"{item.id}.s{j}"]
                seen.add(label)
                found = step.text.lower() in text.lower()
                assert found == (label in (M, C)), (label, step.text, text)
                if label is M:
                    where[j] = text.index(step.text)
            required = [j for j, s in enumerate(item.steps, 1) if s.required]
            if labels.get(f"{item.id}.seq") is M and all(j in where for j in required):
                positions = [where[j] for j in required]
                assert positions == sorted(positions), text
    assert seen == {M, P, S, C}


def test_threshold_labels_match_the_members_stated(
    responses: list[tuple[MetaRubric, str, dict[str, Verdict]]],
) -> None:
    for rubric, text, labels in responses:
        for item in rubric.items:
            if not isinstance(item, FlexibleList):
                continue
            for j, k in enumerate(item.baselines, 1):
                label = labels[f"{item.id}.b{j}"]
                stated = sum(m in text for m in item.members)
                if label is M:
                    assert stated >= k
                if label is S:
                    assert stated == 0


def test_misidentified_multimodal_answer_names_the_wrong_entity(
    responses: list[tuple[MetaRubric, str, dict[str, Verdict]]],
) -> None:
    wrong = [(t, lab) for r, t, lab in responses if lab["I1"] is C]
    assert wrong
    assert all("This is a red herring." in t for t, _ in wrong)
    assert all(t.strip() for _, t, _ in responses)
