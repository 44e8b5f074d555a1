"""The demo's offline matcher: a deterministic verdict for a response no recording holds.

A stand-in, not a judge: it reads which of a check's content words a response contains, never
whether it contradicts the check, and the site's demo notice names it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from scoring.compiler import CheckKind
from scoring.verdicts import Verdict

#: Names the rule in the judge's identity and in every rationale: a change of rule is a new judge.
MATCHER_VERSION = "offline-match-v1"

#: Share of a phrase's content words the response must contain for the phrase to count as stated.
STATED = 0.6
#: Share at or above which a phrase counts as partly stated (``partially_meets``).
PARTLY = 0.3

_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    (
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "these",
        "those",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "than",
        "then",
        "them",
        "they",
        "their",
        "its",
        "it's",
        "are",
        "was",
        "were",
        "been",
        "being",
        "has",
        "have",
        "had",
        "not",
        "but",
        "nor",
        "also",
        "such",
        "very",
        "more",
        "most",
        "some",
        "any",
        "each",
        "other",
        "which",
        "what",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "how",
        "why",
        "all",
        "both",
        "either",
        "one",
        "two",
        "can",
        "may",
        "might",
        "must",
        "should",
        "would",
        "could",
        "will",
        "about",
        "above",
        "after",
        "again",
        "against",
        "before",
        "below",
        "between",
        "during",
        "through",
        "until",
        "upon",
        "via",
        "per",
        "response",
        "mentions",
        "mention",
        "mentioned",
        "states",
        "stated",
        "state",
        "identifies",
        "identify",
        "identified",
        "includes",
        "include",
        "including",
        "describing",
        "describes",
        "regarding",
        "relating",
        "following",
        "options",
        "option",
        "steps",
        "step",
        "order",
        "presents",
        "least",
        "come",
        "them",
        "often",
        "usually",
        "commonly",
        "typically",
    )
)


def _stem(word: str) -> str:
    """A crude singular: enough that "noodles" matches "noodle"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content: lower case, NFKC, no stop words, stemmed."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    return [_stem(w) for w in _WORD.findall(norm) if len(w) >= 3 and w not in _STOP]


def _share(phrase: str, words: frozenset[str]) -> float:
    want = set(content_words(phrase))
    if not want:
        return 0.0
    return len(want & words) / len(want)


def _after(text: str, marker: str) -> str:
    """The part of a compiled check's text after ``marker`` (all of it when absent)."""
    at = text.find(marker)
    return text[at + len(marker) :] if at >= 0 else text


_AT_LEAST = re.compile(r"at least (\d+) of the following")
_NUMBERED = re.compile(r"\(\d+\)\s*")


def _in_order(steps: list[str], response: str) -> bool:
    """Whether each step's mark (its first word no other step has, else its first word) occurs
    in the response after the previous step's."""
    said = content_words(response)
    words = [content_words(s) for s in steps]
    cursor = 0
    for i, own in enumerate(words):
        others = {w for j, ws in enumerate(words) if j != i for w in ws}
        mark = next((w for w in own if w not in others), own[0] if own else "")
        try:
            cursor = said.index(mark, cursor) + 1
        except ValueError:
            return False
    return True


@dataclass(frozen=True, slots=True)
class Match:
    """A matcher verdict and the one-sentence rationale that says how it was reached."""

    verdict: Verdict
    rationale: str


def _by_share(share: float, what: str) -> Match:
    if share >= STATED:
        verdict = Verdict.MEETS
    elif share >= PARTLY:
        verdict = Verdict.PARTIALLY_MEETS
    else:
        verdict = Verdict.MISSING
    return Match(
        verdict,
        f"{MATCHER_VERSION}: the response contains {share:.0%} of the content words of {what}.",
    )


def match_verdict(kind: CheckKind, check: str, response: str) -> Match:
    """The offline matcher's verdict of one compiled check against one response."""
    words = frozenset(content_words(response))
    if not words:
        return Match(Verdict.MISSING, f"{MATCHER_VERSION}: the response states nothing.")
    if kind in (CheckKind.BASELINE, CheckKind.COVERAGE):
        m = _AT_LEAST.search(check)
        need = int(m.group(1)) if m else 1
        options = [o for o in _after(check, "options:").rstrip(". ").split(";") if o.strip()]
        stated = sum(_share(o, words) >= STATED for o in options)
        if stated >= need:
            verdict = Verdict.MEETS
        elif stated:
            verdict = Verdict.PARTIALLY_MEETS
        else:
            verdict = Verdict.MISSING
        return Match(
            verdict,
            f"{MATCHER_VERSION}: the response states {stated} of the {len(options)} options "
            f"(at least {need} needed).",
        )
    if kind is CheckKind.SEQUENCE:
        steps = [s.strip() for s in _NUMBERED.split(_after(check, "between them):")) if s.strip()]
        steps = [s.rstrip("; .") for s in steps]
        said = [s for s in steps if _share(s, words) >= STATED]
        in_order = bool(steps) and len(said) == len(steps) and _in_order(steps, response)
        if in_order:
            verdict = Verdict.MEETS
        elif said:
            verdict = Verdict.PARTIALLY_MEETS
        else:
            verdict = Verdict.MISSING
        return Match(
            verdict,
            f"{MATCHER_VERSION}: the response states {len(said)} of the {len(steps)} steps"
            f"{' in order' if in_order else ''}.",
        )
    if kind is CheckKind.MEMBER:
        return _by_share(_share(_after(check, "the response mentions "), words), "the member")
    if kind is CheckKind.STEP:
        return _by_share(_share(_after(check, "includes the step:"), words), "the step")
    if kind is CheckKind.RELATION_ASPECT:
        return _by_share(_share(_after(check, "states that:"), words), "the aspect")
    if kind is CheckKind.RELATION_ENTITY:
        entity = _after(check, "identifies ").split(" as ", 1)[0]
        return _by_share(_share(entity, words), "the related entity's name")
    return _by_share(_share(check, words), "the check")
