"""The audit label format, its reader and validator, and the final human verdict rule."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.audit import NO_VERDICT, AuditLabels, read_audit
from scoring.errors import ProblemsError

SUBS = ("alpha", "beta")
QIDS = ("q-1", "q-2")
CHECKS = (("I1", "I2"), ("I1", "I2.m1", "I2.m2"))
HAS = np.array([[True, True], [False, True]])  # beta has text-only responses only


def line(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "submission_id": "alpha",
        "setting": "multimodal",
        "question_id": "q-1",
        "check_id": "I1",
        "annotator": "ann-1",
        "verdict": "meets",
        "role": "label",
    }
    base.update(over)
    return base


def write(folder: Path, name: str, lines: list[dict[str, object] | str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    (folder / name).write_text(text)
    return folder


def read(folder: Path, **kw: object) -> AuditLabels:
    return read_audit(
        folder,
        submission_ids=SUBS,
        has_responses=HAS,
        question_ids=QIDS,
        check_ids=CHECKS,
        **kw,  # type: ignore[arg-type]
    )


def test_labels_are_read_into_responses_and_check_columns(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "audit",
        "ann-1.jsonl",
        [
            line(),
            line(question_id="q-2", check_id="I2.m2", verdict="contradicts", note="wrong year"),
            line(submission_id="beta", setting="text_only", question_id="q-2", check_id="I1"),
        ],
    )
    labels = read(folder)
    assert labels.size == 3
    assert labels.annotators == ("ann-1",)
    # responses: alpha multimodal 0, beta text_only 3; checks: q-1 I1 0, q-2 I1 2, q-2 I2.m2 4
    assert labels.response.tolist() == [0, 0, 3]
    assert labels.check.tolist() == [0, 4, 2]
    assert labels.verdict.tolist() == [0, 3, 0]
    final = labels.final()
    assert final.shape == (4, 5)
    assert final[0, 0] == 0 and final[0, 4] == 3 and final[3, 2] == 0
    assert (final == NO_VERDICT).sum() == 20 - 3


def test_every_problem_is_reported_at_once_with_file_and_line(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "audit",
        "a.jsonl",
        [
            line(),  # 1: fine
            line(submission_id="gamma"),  # 2: unknown submission
            line(submission_id="beta"),  # 3: beta has no multimodal responses
            line(question_id="q-9"),  # 4: unknown question
            line(check_id="I7"),  # 5: unknown check of q-1
            line(verdict="sort_of"),  # 6: bad verdict
            line(verdict="missing"),  # 7: the same annotator twice
            line(role="adjudication", annotator="adj"),  # 8: fine
            line(role="adjudication", annotator="adj-2"),  # 9: a second adjudication
            line(check_text="Names the dish."),  # 10: no other field (no check text)
            "{not json",  # 11
        ],
    )
    with pytest.raises(ProblemsError) as err:
        read(folder)
    where = {p.line: p.message for p in err.value.problems}
    assert sorted(where) == [2, 3, 4, 5, 6, 7, 9, 10, 11]
    assert all(p.file == str(folder / "a.jsonl") and p.fix for p in err.value.problems)
    assert "gamma" in where[2]
    assert "no multimodal responses" in where[3]
    assert "q-9" in where[4]
    assert "I7" in where[5]
    assert "verdict" in where[6]
    assert "already gave a label" in where[7] and "a.jsonl:1" in where[7]
    assert "second adjudication" in where[9] and "a.jsonl:8" in where[9]
    assert "check_text" in where[10]


def test_labels_of_a_submission_not_scored_in_this_run_are_counted_not_refused(
    tmp_path: Path,
) -> None:
    folder = write(tmp_path / "audit", "a.jsonl", [line(), line(submission_id="left-out")])
    labels = read(folder, known_submissions={"left-out"})
    assert labels.size == 1 and labels.ignored == 1


def test_a_missing_audit_folder_is_a_problem_naming_the_config_key(tmp_path: Path) -> None:
    with pytest.raises(ProblemsError, match="audit folder not found") as err:
        read(tmp_path / "nowhere")
    assert "[benchmark] audit" in err.value.problems[0].fix


def test_final_verdict_adjudication_then_strict_majority_then_none(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "audit",
        "a.jsonl",
        [
            # q-1 I1: two annotators disagree, no adjudication -> none
            line(annotator="a"),
            line(annotator="b", verdict="missing"),
            # q-1 I2: disagree, adjudicated -> the adjudication, even against the majority
            line(check_id="I2", annotator="a"),
            line(check_id="I2", annotator="b"),
            line(check_id="I2", annotator="c", role="adjudication", verdict="partially_meets"),
            # q-2 I1: 2 of 3 -> the majority
            line(question_id="q-2", annotator="a", verdict="contradicts"),
            line(question_id="q-2", annotator="b", verdict="contradicts"),
            line(question_id="q-2", annotator="c", verdict="meets"),
        ],
    )
    final = read(folder).final()
    assert final[0, 0] == NO_VERDICT
    assert final[0, 1] == 1
    assert final[0, 2] == 3


def test_annotator_pairs_are_every_unordered_pair_of_labels_of_one_check(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "audit",
        "a.jsonl",
        [
            line(annotator="b", verdict="missing"),
            line(annotator="a"),
            line(annotator="c", verdict="contradicts"),
            line(annotator="z", role="adjudication"),  # adjudications are not pairs
            line(check_id="I2", annotator="a"),  # one annotator: no pair
        ],
    )
    cell, a, b = read(folder).annotator_pairs()
    assert cell.tolist() == [0, 0, 0]
    # sorted by annotator: a (meets 0), b (missing 2), c (contradicts 3)
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [(0, 2), (0, 3), (2, 3)]


VERDICTS = ("meets", "partially_meets", "missing", "contradicts")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 1),  # check of q-1
            st.sampled_from(("a", "b", "c", "d")),
            st.integers(0, 3),
            st.booleans(),
        ),
        max_size=20,
    )
)
def test_final_verdict_matches_the_rule_written_out(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[tuple[int, str, int, bool]]
) -> None:
    # one line per (check, annotator, role), at most one adjudication per check
    kept: dict[tuple[int, str, bool], int] = {}
    adjudicated: set[int] = set()
    for c, who, v, adj in drawn:
        if (c, who, adj) in kept or (adj and c in adjudicated):
            continue
        kept[(c, who, adj)] = v
        if adj:
            adjudicated.add(c)
    lines = [
        line(
            check_id=CHECKS[0][c],
            annotator=who,
            verdict=VERDICTS[v],
            role="adjudication" if adj else "label",
        )
        for (c, who, adj), v in kept.items()
    ]
    final = read(write(tmp_path_factory.mktemp("audit"), "a.jsonl", lines)).final()
    for c in range(2):
        adjs = [v for (cc, _, adj), v in kept.items() if cc == c and adj]
        votes = Counter(v for (cc, _, adj), v in kept.items() if cc == c and not adj)
        if adjs:
            expected = adjs[0]
        elif votes and max(votes.values()) * 2 > sum(votes.values()):
            expected = votes.most_common(1)[0][0]
        else:
            expected = NO_VERDICT
        assert final[0, c] == expected
