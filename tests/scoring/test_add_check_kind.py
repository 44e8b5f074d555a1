"""docs/adding-a-check-kind.md followed for every kind ``CheckKind`` has: each is compiled from a
rubric item, keeps its code, is named in the judge's prompt, matched offline, split out by the
per-kind tables and described in their column meanings. A kind added by the guide's first step
fails here until an item of ``RUBRIC`` compiles to it; then each later step is checked for it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scoring.check_table import KIND_ORDER, CheckTable
from scoring.compiler import Check, CheckKind, compile_rubric
from scoring.judge.offline_match import match_verdict
from scoring.judge.prompt import load_template
from scoring.rubric import MetaRubric
from scoring.tables.checks import kind_of
from scoring.tables.columns import TABLES
from scoring.verdicts import Verdict

ROOT = Path(__file__).resolve().parents[2]
#: The kinds in code order when the guide was written: a new kind goes after them.
CODED = ("fact", "member", "baseline", "coverage", "step", "sequence", "relation_entity",
         "relation_aspect", "insight")  # fmt: skip
#: One item of each type; step 2 adds the item that emits a new kind.
RUBRIC = {
    "question_id": "q-1",
    "items": [
        {"id": "F", "type": "fact", "tier": "answer_critical", "text": "Names the bridge."},
        {"id": "S", "type": "strict_list", "tier": "valuable", "topic": "its materials",
         "members": ["granite", "iron"]},
        {"id": "L", "type": "flexible_list", "tier": "valuable", "topic": "its towers",
         "members": [f"tower {n}" for n in "abcdefghi"], "baselines": [2],
         "insight": {"text": "Notes that the towers were added later.", "tier": "context"}},
        {"id": "P", "type": "process", "tier": "context", "topic": "how it opens",
         "steps": [{"text": "stop the traffic", "required": True},
                   {"text": "raise the bascules", "required": True}]},
        {"id": "R", "type": "relationship", "tier": "context", "entity": "London Bridge",
         "relation": "the bridge upstream", "aspects": ["is older"]},
    ],
}  # fmt: skip


def _checks() -> list[Check]:
    return compile_rubric(MetaRubric.model_validate(RUBRIC))


def _one_of_each() -> dict[CheckKind, Check]:
    out: dict[CheckKind, Check] = {}
    for c in _checks():
        out.setdefault(c.kind, c)
    return out


def test_the_guide_names_the_steps_this_test_takes() -> None:
    guide = (ROOT / "docs" / "adding-a-check-kind.md").read_text(encoding="utf-8")
    for step in ("`CheckKind`", "scoring/compiler.py", "`KIND_ORDER`", "`compile_rubric`",
                 "`RUBRIC`", "_KIND_LABEL", "scoring/judge/prompt.py", "`match_verdict`",
                 "scoring/judge/offline_match.py", "`by_kind`",
                 "tests/scoring/test_add_check_kind.py"):  # fmt: skip
        assert step in guide, step


def test_step_1_a_new_kind_goes_after_the_coded_ones() -> None:
    assert tuple(CheckKind) == KIND_ORDER
    assert tuple(k.value for k in KIND_ORDER[: len(CODED)]) == CODED


def test_step_2_every_kind_is_compiled_from_an_item() -> None:
    missing = set(CheckKind) - set(_one_of_each())
    assert not missing, f"no item of RUBRIC compiles to {sorted(missing)}"


@pytest.mark.parametrize("kind", list(CheckKind))
def test_steps_3_to_5_each_kind_reaches_the_judge_the_matcher_and_the_tables(
    kind: CheckKind,
) -> None:
    check = _one_of_each()[kind]
    # step 3: the judge reads the check under its kind's label
    tail = load_template("v1").render_check(check.text, kind)
    label = re.search(r"kind: ([a-z_]+)", tail)
    assert label is not None and check.text in tail
    assert label.group(1) in (kind.value, "threshold")
    # step 4: the offline matcher meets a response that states the check, misses an empty one
    assert match_verdict(kind, check.text, f"In short: {check.text}").verdict is Verdict.MEETS
    assert match_verdict(kind, check.text, "").verdict is Verdict.MISSING
    # step 5: its code splits the per-kind tables back into it, whose meanings name it
    table = CheckTable.of({"q-1": _checks()}, "v")
    code = int(table.kind[table.check_id.index(check.check_id)])
    assert kind_of(code * 2 + int(check.secondary)) == (kind, check.secondary)
    for name in ("by_kind", "judge_kappa_by_kind", "judge_human", "verdicts"):
        assert kind.value in TABLES[name]["kind"][1], name
