"""The demo's offline matcher: a deterministic verdict from the compiled check's words."""

from __future__ import annotations

import pytest

from scoring import MetaRubric, compile_rubric
from scoring.compiler import Check, CheckKind
from scoring.judge.offline_match import MATCHER_VERSION, content_words, match_verdict
from scoring.verdicts import Verdict

RUBRIC = {
    "question_id": "food-0007",
    "snippets": [{"id": "S1", "url": "https://example.org/", "title": "t", "text": "x"}],
    "items": [
        {"id": "I1", "type": "fact", "tier": "answer_critical",
         "text": "Identifies the dish as pad thai."},
        {"id": "I2", "type": "strict_list", "tier": "answer_critical", "topic": "core ingredients",
         "members": ["rice noodles", "tamarind paste", "fish sauce"]},
        {"id": "I3", "type": "flexible_list", "tier": "answer_critical",
         "topic": "proteins commonly added",
         "members": ["shrimp", "chicken", "tofu", "egg", "pork", "squid", "crab"],
         "baselines": [2]},
        {"id": "I4", "type": "process", "tier": "valuable", "topic": "how it is cooked",
         "steps": [{"text": "Soak the dried noodles", "required": True},
                   {"text": "Fry garlic and shallots", "required": False},
                   {"text": "Stir-fry the noodles with the sauce", "required": True}]},
        {"id": "I5", "type": "relationship", "tier": "context", "entity": "pad see ew",
         "relation": "a related Thai stir-fried noodle dish",
         "aspects": ["uses wide flat noodles"]},
    ],
}  # fmt: skip

GOOD = (
    "This is pad thai: rice noodles with tamarind paste and fish sauce, often with shrimp or "
    "tofu. Soak the dried noodles, fry garlic and shallots, then stir-fry the noodles with the "
    "sauce. Pad see ew is its cousin and uses wide flat noodles."
)


@pytest.fixture(scope="module")
def checks() -> dict[str, Check]:
    return {c.check_id: c for c in compile_rubric(MetaRubric.model_validate(RUBRIC))}


def _verdict(c: Check, response: str) -> Verdict:
    return match_verdict(c.kind, c.text, response).verdict


def test_a_complete_answer_meets_every_primary_check(checks: dict[str, Check]) -> None:
    verdicts = {cid: _verdict(c, GOOD) for cid, c in checks.items()}
    assert {cid for cid, v in verdicts.items() if v is not Verdict.MEETS} <= {
        "I3.m2", "I3.m4", "I3.m5", "I3.m6", "I3.m7",  # chicken, egg, pork, squid, crab: unnamed
    }  # fmt: skip
    assert verdicts["I3.b1"] is Verdict.MEETS and verdicts["I4.seq_all"] is Verdict.MEETS


def test_an_unrelated_answer_is_missing_everywhere_and_never_contradicts(
    checks: dict[str, Check],
) -> None:
    for c in checks.values():
        assert _verdict(c, "A red panda sits in a tree.") is Verdict.MISSING, c.check_id
        assert _verdict(c, "") is Verdict.MISSING


def test_thresholds_count_the_options_stated(checks: dict[str, Check]) -> None:
    b = checks["I3.b1"]
    assert b.kind is CheckKind.BASELINE
    assert _verdict(b, "Pad thai, usually with shrimp.") is Verdict.PARTIALLY_MEETS
    assert _verdict(b, "Pad thai with shrimp and squid.") is Verdict.MEETS
    m = match_verdict(b.kind, b.text, "Pad thai with shrimp and squid.")
    assert (
        m.rationale
        == f"{MATCHER_VERSION}: the response states 2 of the 7 options (at least 2 needed)."
    )


def test_a_sequence_out_of_order_is_partial(checks: dict[str, Check]) -> None:
    seq = checks["I4.seq"]
    assert seq.kind is CheckKind.SEQUENCE
    right = "Soak the dried noodles, then stir-fry the noodles with the sauce."
    wrong = "Stir-fry with the sauce, and before that soak the dried noodles."
    assert _verdict(seq, right) is Verdict.MEETS
    assert _verdict(seq, wrong) is Verdict.PARTIALLY_MEETS


def test_half_a_member_is_partial_and_the_verdict_is_deterministic(
    checks: dict[str, Check],
) -> None:
    member = checks["I2.m2"]  # tamarind paste
    assert _verdict(member, "It has tamarind in it.") is Verdict.PARTIALLY_MEETS
    assert match_verdict(member.kind, member.text, GOOD) == match_verdict(
        member.kind, member.text, GOOD
    )


def test_content_words_drop_template_words_and_plurals() -> None:
    assert content_words("Regarding core ingredients, the response mentions Rice Noodles.") == [
        "core", "ingredient", "rice", "noodle",
    ]  # fmt: skip
