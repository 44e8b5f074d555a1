"""Composing a readable response from a meta-rubric, with the verdict of every check known: each
independently drawn part is stated, stated vaguely, left out or replaced by a specific wrong
statement, and threshold and sequence checks are labelled from what the text then contains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scoring.compiler import SHORT_LIST_MAX, compile_rubric, default_coverage_thresholds
from scoring.errors import GamutError
from scoring.questions import Setting
from scoring.rubric import (
    Fact,
    FlexibleList,
    MetaRubric,
    Process,
    Relationship,
    StrictList,
    Tier,
)
from scoring.verdicts import VERDICT_ORDER, Verdict
from workbench.synthetic.profiles import MISIDENTIFIED, UNIDENTIFIED, Behaviour, Probs
from workbench.synthetic.text import (
    aspect_sentence,
    capfirst,
    contradict_statement,
    ident_partial,
    identified_entity,
    is_identification,
    join_and,
    lcfirst,
    statement,
    vague,
    vague_member,
    vague_statement,
)

M, P, S, C = VERDICT_ORDER


@dataclass
class Composed:
    """One response and the known verdict of each of its question's checks."""

    text: str
    labels: dict[str, Verdict] = field(default_factory=dict)


def threshold_label(stated: int, vague_count: int, wrong: int, k: int) -> Verdict:
    """Verdict of "mentions at least k of ...": some but fewer than k is a partial answer."""
    if stated >= k:
        return M
    if stated + vague_count > 0:
        return P
    return C if wrong else S


def sequence_label(presented: list[int], subset: list[int]) -> Verdict:
    """Verdict of "these steps in this order" from the order the response presents them: under
    two present, missing; in order and all, meets; some left out or one swap, partial; else
    contradicts."""
    shown = [i for i in presented if i in subset]
    if len(shown) < 2:
        return S
    inversions = sum(a > b for n, a in enumerate(shown) for b in shown[n + 1 :])
    if inversions == 0:
        return M if len(shown) == len(subset) else P
    return P if inversions == 1 else C


class _Writer:
    def __init__(self, rng: np.random.Generator, probs: Probs, behaviour: Behaviour) -> None:
        self.rng = rng
        self.probs = probs
        self.behaviour = behaviour
        self.labels: dict[str, Verdict] = {}

    def draw(self) -> Verdict:
        return VERDICT_ORDER[int(self.rng.choice(4, p=self.probs))]

    def fact(self, check_id: str, text: str) -> str:
        v = self.labels[check_id] = self.draw()
        if v is M:
            return statement(text)
        if v is P:
            return vague_statement(text)
        if v is C:
            return contradict_statement(text, self.rng)
        return ""

    def members(self, topic: str, members: list[str]) -> tuple[list[Verdict], str]:
        outcomes = [self.draw() for _ in members]
        said = list(
            dict.fromkeys(
                m if v is M else vague_member(m)
                for m, v in zip(members, outcomes, strict=True)
                if v in (M, P)
            )
        )
        wrong = [m for m, v in zip(members, outcomes, strict=True) if v is C]
        if said:
            template = ("Regarding {t}: {x}", "As for {t}, I would name {x}", "On {t}: {x}")
            text = template[int(self.rng.integers(3))].format(t=topic, x=join_and(said))
            text += f", but not {join_and(wrong)}." if wrong else "."
        elif wrong:
            text = f"Regarding {topic}, it is wrong to list {join_and(wrong)}."
        else:
            text = ""
        return outcomes, text

    def process(self, item: Process) -> str:
        iid = item.id
        outcomes = [self.draw() for _ in item.steps]
        for j, v in enumerate(outcomes, 1):
            self.labels[f"{iid}.s{j}"] = v
        order = [j for j, v in enumerate(outcomes) if v in (M, P)]
        if len(order) >= 3 and self.rng.random() < self.behaviour.reverse:
            order.reverse()
        elif len(order) >= 2 and self.rng.random() < self.behaviour.swap:
            k = int(self.rng.integers(len(order) - 1))
            order[k], order[k + 1] = order[k + 1], order[k]
        required = [j for j, s in enumerate(item.steps) if s.required]
        if len(required) >= 2:
            self.labels[f"{iid}.seq"] = sequence_label(order, required)
        if len(required) < len(item.steps) and len(item.steps) >= 2:
            self.labels[f"{iid}.seq_all"] = sequence_label(order, list(range(len(item.steps))))
        texts = [
            capfirst(item.steps[j].text.strip().rstrip("."))
            if outcomes[j] is M
            else capfirst(vague(item.steps[j].text, ", more or less"))
            for j in order
        ]
        parts = []
        if len(texts) == 1:
            parts.append(f"As for {item.topic}, one step: {texts[0]}.")
        elif texts:
            middle = "".join(f" Then: {t}." for t in texts[1:-1])
            parts.append(
                f"As for {item.topic}, in order. First: {texts[0]}.{middle} Finally: {texts[-1]}."
            )
        for j, v in enumerate(outcomes):
            if v is C:
                parts.append(
                    f"Contrary to some accounts, this is not part of {item.topic}: "
                    f"{lcfirst(item.steps[j].text.rstrip('.'))}."
                )
        return " ".join(parts)

    def relationship(self, item: Relationship) -> str:
        v = self.labels[f"{item.id}.e"] = self.draw()
        if v not in (M, P):
            for j in range(1, len(item.aspects) + 1):
                self.labels[f"{item.id}.a{j}"] = S
            return f"It has nothing to do with {item.entity}." if v is C else ""
        parts = [
            f"It is worth comparing it with {item.entity}, {item.relation.rstrip('.')}."
            if v is M
            else f"It has something in common with {item.entity}."
        ]
        for j, aspect in enumerate(item.aspects, 1):
            a = self.labels[f"{item.id}.a{j}"] = self.draw()
            sentence = aspect_sentence(item.entity, aspect)
            if a is M:
                parts.append(sentence)
            elif a is P:
                parts.append(vague_statement(sentence))
            elif a is C:
                parts.append(f"It is a myth that {lcfirst(sentence.rstrip('.'))}.")
        return " ".join(parts)


def _identification(rubric: MetaRubric) -> Fact | None:
    """The rubric's identification fact (``This is X.``), if it has one."""
    return next(
        (i for i in rubric.items if isinstance(i, Fact) and is_identification(i.text)), None
    )


def _identify(
    ident: Fact,
    domain: str,
    setting: Setting,
    behaviour: Behaviour,
    rng: np.random.Generator,
    wrong_entities: list[str],
) -> tuple[str, Verdict, Probs]:
    """The sentence that identifies the entity, its known verdict, and the probabilities for the
    rest of the response (a misidentified or unidentified entity changes what follows)."""
    multimodal = setting is Setting.MULTIMODAL
    r = rng.random()
    if multimodal and r < behaviour.misidentify and wrong_entities:
        wrong = wrong_entities[int(rng.integers(len(wrong_entities)))]
        return f"This is {wrong}.", C, MISIDENTIFIED
    if multimodal and r < behaviour.misidentify + behaviour.unsure_identity:
        return "I cannot tell exactly what this is from the photo.", S, UNIDENTIFIED
    if multimodal and rng.random() < behaviour.probs[1]:
        return ident_partial(ident.text, domain), P, behaviour.probs
    return statement(ident.text), M, behaviour.probs


def _flexible_list(w: _Writer, item: FlexibleList) -> str:
    """A flexible list's members; its baseline and coverage (or per-member) checks labelled."""
    outcomes, text = w.members(item.topic, item.members)
    n_met, n_vague, n_wrong = (outcomes.count(v) for v in (M, P, C))
    for j, b in enumerate(item.baselines, 1):
        w.labels[f"{item.id}.b{j}"] = threshold_label(n_met, n_vague, n_wrong, b)
    n = len(item.members)
    if n <= SHORT_LIST_MAX and item.tier is not Tier.CONTEXT:
        w.labels.update({f"{item.id}.m{j}": v for j, v in enumerate(outcomes, 1)})
    else:
        ks = item.coverage_thresholds or default_coverage_thresholds(n, item.baselines)
        for j, k in enumerate(ks, 1):
            w.labels[f"{item.id}.c{j}"] = threshold_label(n_met, n_vague, n_wrong, k)
    return text


def _block(w: _Writer, item: StrictList | FlexibleList | Process | Relationship) -> list[str]:
    """The paragraph of one structured item, with its insight."""
    block: list[str] = []
    if isinstance(item, StrictList):
        outcomes, text = w.members(item.topic, item.members)
        w.labels.update({f"{item.id}.m{j}": v for j, v in enumerate(outcomes, 1)})
        block.append(text)
    elif isinstance(item, FlexibleList):
        block.append(_flexible_list(w, item))
    elif isinstance(item, Process):
        block.append(w.process(item))
    else:
        block.append(w.relationship(item))
    if not isinstance(item, Relationship) and item.insight is not None:
        block.append(w.fact(f"{item.id}.i", item.insight.text))
    return block


def compose_response(
    rubric: MetaRubric,
    *,
    domain: str,
    setting: Setting,
    behaviour: Behaviour,
    rng: np.random.Generator,
    wrong_entities: list[str],
    opener: str = "",
) -> Composed:
    """One response to one question with the known verdict of each check (``wrong_entities``:
    other questions' entities, to misidentify in the multimodal setting; ``opener``: the model's
    first sentence). GamutError when the labels miss a compiled check (a generator bug)."""
    probs = behaviour.probs
    intro: list[str] = [opener] if opener else []
    ident = _identification(rubric)
    labels: dict[str, Verdict] = {}
    if ident is not None:
        sentence, labels[ident.id], probs = _identify(
            ident, domain, setting, behaviour, rng, wrong_entities
        )
        intro.append(sentence)
    w = _Writer(rng, probs, behaviour)
    w.labels.update(labels)
    paragraphs: list[list[str]] = [intro]
    for item in rubric.items:
        if item is ident:
            continue
        if isinstance(item, Fact):
            paragraphs[-1].append(w.fact(item.id, item.text))
            continue
        paragraphs.append(_block(w, item))
        paragraphs.append([])
    text = "\n\n".join(" ".join(s for s in p if s) for p in paragraphs if any(p)).strip()
    if not text:
        text = "I am not able to say much about this with confidence."
    expected = {c.check_id for c in compile_rubric(rubric)}
    if set(w.labels) != expected:
        raise GamutError(
            f"question {rubric.question_id}: composed labels do not match the compiled checks "
            f"(extra {sorted(set(w.labels) - expected)}, "
            f"missing {sorted(expected - set(w.labels))})"
        )
    return Composed(capfirst(text), w.labels)


def entity_of(rubric: MetaRubric) -> str | None:
    """The entity a rubric's identification fact names, if it has one."""
    ident = _identification(rubric)
    return None if ident is None else identified_entity(ident.text)
