"""The hand-written demo benchmark: questions, rubrics and placeholder images under demo/.

These tests hold the demo to what issue 3 asks of it: it lints clean, covers every domain,
popularity bucket, item type and compile rule several times, and every multimodal question
passes the stranger test (it never names the entity it asks about).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from scoring.compiler import Check, CheckKind, compile_rubric
from scoring.questions import Popularity, Question, load_questions
from scoring.rubric import FlexibleList, MetaRubric, Process, Relationship, StrictList, Tier
from scoring.rubric_io import RubricSource, lint_warnings, read_rubrics

DEMO = Path(__file__).resolve().parents[2] / "demo"
MIN_EACH = 4  # each required feature occurs at least this many times across the set

#: Distinctive words of each entity, taken from its text-only question. None of them may appear
#: in the multimodal form, which must refer to the entity only through the image.
ENTITY_WORDS: dict[str, list[str]] = {
    "plants-0001": ["monstera"],
    "plants-0002": ["venus", "flytrap"],
    "plants-0003": ["ginkgo"],
    "plants-0004": ["welwitschia"],
    "plants-0005": ["socotra", "dragon"],
    "food-0001": ["pad thai"],
    "food-0002": ["pastéis", "nata"],
    "food-0003": ["adjarian", "khachapuri"],
    "food-0004": ["cullen", "skink"],
    "food-0005": ["kouign-amann"],
    "animals-0001": ["red panda", "panda"],
    "animals-0002": ["axolotl"],
    "animals-0003": ["shoebill"],
    "animals-0004": ["hoatzin"],
    "vehicles-0001": ["toyota", "prius"],
    "vehicles-0002": ["vespa"],
    "vehicles-0003": ["citroën", "2cv"],
    "vehicles-0004": ["messerschmitt", "kr200"],
    "landmarks-0001": ["eiffel"],
    "landmarks-0002": ["sagrada", "família"],
    "landmarks-0003": ["hallgrímskirkja", "reykjavík"],
    "landmarks-0004": ["kelpies", "falkirk"],
    "everyday_objects-0001": ["moka"],
    "everyday_objects-0002": ["swiss army"],
    "everyday_objects-0003": ["french press"],
    "everyday_objects-0004": ["spurtle"],
    "consumer_products-0001": ["nintendo", "game boy"],
    "consumer_products-0002": ["sony", "walkman"],
    "consumer_products-0003": ["polaroid", "sx-70"],
    "consumer_products-0004": ["teenage engineering", "op-1"],
    "books-0001": ["mockingbird"],
    "books-0002": ["solitude"],
    "books-0003": ["master", "margarita"],
    "books-0004": ["independent people"],
    "art-0001": ["van gogh", "starry"],
    "art-0002": ["girl with a pearl earring", "pearl"],
    "art-0003": ["velázquez", "meninas"],
    "art-0004": ["wyeth", "christina"],
    "sports-0001": ["sumo"],
    "sports-0002": ["curling"],
    "sports-0003": ["hurling"],
    "sports-0004": ["sepak", "takraw"],
}


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    return load_questions(DEMO / "questions.jsonl")


@pytest.fixture(scope="module")
def sources() -> list[RubricSource]:
    good, problems = read_rubrics([DEMO / "rubrics"])
    assert problems == [], "\n".join(str(p) for p in problems)
    return good


@pytest.fixture(scope="module")
def rubrics(sources: list[RubricSource]) -> dict[str, MetaRubric]:
    return {s.rubric.question_id: s.rubric for s in sources}


@pytest.fixture(scope="module")
def checks(rubrics: dict[str, MetaRubric]) -> dict[str, list[Check]]:
    return {qid: compile_rubric(r) for qid, r in rubrics.items()}


def _mentions(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, re.IGNORECASE) is not None


def test_rubrics_lint_without_warnings(sources: list[RubricSource]) -> None:
    warnings = [w for s in sources for w in lint_warnings(s)]
    assert warnings == [], "\n".join(str(w) for w in warnings)


def test_one_rubric_per_question_in_its_own_file(
    questions: list[Question], sources: list[RubricSource]
) -> None:
    assert sorted(q.question_id for q in questions) == sorted(s.rubric.question_id for s in sources)
    for s in sources:
        assert Path(s.file).name == f"{s.rubric.question_id}.json"


def test_question_set_shape(questions: list[Question]) -> None:
    assert len(questions) >= 40
    domains = Counter(q.domain for q in questions)
    assert len(domains) >= 10
    assert min(domains.values()) >= 4, domains
    buckets = Counter(q.popularity for q in questions)
    assert all(buckets[b] >= 12 for b in Popularity), buckets
    share = sum(q.egocentric for q in questions) / len(questions)
    assert 0.65 <= share <= 0.85, share


def test_question_fields_follow_the_naming_scheme(questions: list[Question]) -> None:
    for q in questions:
        assert re.fullmatch(rf"{re.escape(q.domain)}-\d{{4}}", q.question_id), q.question_id
        assert q.image_id == f"img-{q.question_id}"
        assert q.image == f"images/{q.image_id}.png"
        assert q.question.endswith("?") and q.text_only_question.endswith("?")
        assert q.question != q.text_only_question


def test_images_exist_and_open(questions: list[Question]) -> None:
    for q in questions:
        assert q.image is not None
        path = DEMO / q.image
        assert path.is_file(), path
        assert path.stat().st_size < 5_000, path
        with Image.open(path) as img:
            img.verify()
            assert img.format == "PNG"


def test_multimodal_questions_pass_the_stranger_test(questions: list[Question]) -> None:
    assert set(ENTITY_WORDS) == {q.question_id for q in questions}
    for q in questions:
        words = ENTITY_WORDS[q.question_id]
        assert any(_mentions(q.text_only_question, w) for w in words), q.text_only_question
        leaked = [w for w in words if _mentions(q.question, w)]
        assert leaked == [], f"{q.question_id}: {q.question!r} names {leaked}"


def test_first_item_identifies_the_entity(rubrics: dict[str, MetaRubric]) -> None:
    for qid, r in rubrics.items():
        first = r.items[0]
        assert first.type == "fact" and first.tier is Tier.ANSWER_CRITICAL, qid
        assert first.text.startswith("Identifies"), qid
        assert any(_mentions(first.text, w) for w in ENTITY_WORDS[qid]), first.text


def test_rubrics_have_realistic_size(
    rubrics: dict[str, MetaRubric], checks: dict[str, list[Check]]
) -> None:
    for qid, r in rubrics.items():
        assert 5 <= len(r.items) <= 9, qid
        assert 2 <= len(r.snippets) <= 4, qid
        assert 15 <= len(checks[qid]) <= 40, (qid, len(checks[qid]))
        assert all(s.url.startswith("https://") for s in r.snippets), qid


def _features(rubrics: dict[str, MetaRubric], checks: dict[str, list[Check]]) -> Counter[str]:
    """How often each feature the demo must exercise occurs, counted per item."""
    seen: Counter[str] = Counter()
    for qid, r in rubrics.items():
        by_item: dict[str, list[Check]] = {}
        for c in checks[qid]:
            by_item.setdefault(c.item_id, []).append(c)
        for item in r.items:
            kinds = {(c.kind, c.secondary) for c in by_item[item.id]}
            seen[f"tier {item.tier.value}"] += 1
            seen[item.type] += 1
            if isinstance(item, FlexibleList):
                if (CheckKind.MEMBER, True) in kinds:
                    seen["flexible list <= 7, per-member extra credit"] += 1
                if len(item.members) > 7 and (CheckKind.COVERAGE, True) in kinds:
                    seen["flexible list > 7, coverage thresholds"] += 1
                if item.coverage_thresholds and (CheckKind.COVERAGE, True) in kinds:
                    seen["explicit coverage thresholds"] += 1
                if sum(c.kind is CheckKind.BASELINE for c in by_item[item.id]) == 2:
                    seen["two baselines"] += 1
            if isinstance(item, StrictList | FlexibleList) and item.tier is Tier.CONTEXT:
                seen["context-tier list"] += 1
            if isinstance(item, Process):
                if (CheckKind.STEP, True) in kinds and any(not s.required for s in item.steps):
                    seen["process with an optional step"] += 1
                if any(c.check_id.endswith(".seq") for c in by_item[item.id]):
                    seen["process with >= 2 required steps"] += 1
            if isinstance(item, Relationship) and (CheckKind.RELATION_ASPECT, False) in kinds:
                seen["relationship with aspects"] += 1
            if any(c.kind is CheckKind.INSIGHT for c in by_item[item.id]):
                seen["insight"] += 1
    return seen


REQUIRED_FEATURES = [
    "fact",
    "strict_list",
    "flexible list <= 7, per-member extra credit",
    "flexible list > 7, coverage thresholds",
    "explicit coverage thresholds",
    "two baselines",
    "context-tier list",
    "process with an optional step",
    "process with >= 2 required steps",
    "relationship with aspects",
    "insight",
    "tier answer_critical",
    "tier valuable",
    "tier context",
]


@pytest.mark.parametrize("feature", REQUIRED_FEATURES)
def test_each_feature_occurs_several_times(
    feature: str, rubrics: dict[str, MetaRubric], checks: dict[str, list[Check]]
) -> None:
    seen = _features(rubrics, checks)
    assert seen[feature] >= MIN_EACH, seen


def test_insights_sit_on_lists_and_processes(rubrics: dict[str, MetaRubric]) -> None:
    for qid, r in rubrics.items():
        for item in r.items:
            if getattr(item, "insight", None) is not None:
                assert isinstance(item, StrictList | FlexibleList | Process), (qid, item.id)
