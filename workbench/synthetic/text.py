"""Turning rubric phrases ("Notes that it was promoted in the 1930s.") into response sentences
("It was promoted in the 1930s."): stated, vaguer, or specifically wrong, by a few patterns.
"""

from __future__ import annotations

import math
import re

import numpy as np


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_LEAD = re.compile(
    r"^(?:notes|states|explains|mentions|warns|says|adds|observes|points out|clarifies|"
    r"confirms|recognises|recognizes|indicates)\s+that\s+",
    re.IGNORECASE,
)
_MENTION = re.compile(r"^(?:notes|mentions|describes|names|gives|lists)\s+", re.IGNORECASE)
_IDENT = re.compile(
    r"^identifies\s+(?P<obj>(?:the|this|these)\s+[\w-]+\s+|them\s+|it\s+)?as\s+(?P<what>.+?)\.?$",
    re.IGNORECASE,
)
_PAREN = re.compile(r"\s*\([^)]*\)")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-2][0-9])(s?)\b")
_NUMBER = re.compile(r"\b\d+\b")
_CUTS = (
    ", ", " in ", " with ", " until ", " into ", " from ", " for ", " to ", " at ", " so ",
    " because ", " on ", " of ", " such as ", " that ", " which ", " and ", " or ",
)  # fmt: skip
_STOP = _set(
    "the a an of with and or in to for on at by until into from its their as that which so "
    "is are was were be only mainly just also often usually instead rather against over under "
    "through between towards toward across after before about around near within without"
)
_STARTERS = _set(
    "it its they their them the these this those a an both some most many small large "
    "individual male female each every all one he she there ripe in on at for from with during "
    "after before unlike like when while although because since"
)
_VERBS = _set(
    "is are was were has have had uses use used grows grew lives lived comes came differs "
    "contains tastes looks runs belongs bears produces lacks can does did shares share gives "
    "makes made"
)


def capfirst(s: str) -> str:
    """``s`` with its first character upper-cased."""
    return s[:1].upper() + s[1:]


def lcfirst(s: str) -> str:
    """``s`` with its first word lower-cased when that word is a common sentence starter."""
    first = s.split(" ", 1)[0]
    return s[:1].lower() + s[1:] if first.lower() in _STARTERS or first.islower() else s


def _sentence(s: str) -> str:
    s = s.strip()
    return capfirst(s if s.endswith((".", "!", "?")) else s + ".")


def is_identification(text: str) -> bool:
    """Whether a fact is the identification of the entity ("Identifies the dish as ...")."""
    return _IDENT.match(text.strip()) is not None


def identified_entity(text: str) -> str | None:
    """The short name an identification fact gives ("pad thai"), without apposition."""
    m = _IDENT.match(text.strip())
    if m is None:
        return None
    return _PAREN.sub("", m["what"]).split(",")[0].strip().rstrip(".") or None


def _body(text: str) -> str:
    """What a rubric fact asserts, as a clause in the rubric's own case, without a final stop."""
    text = text.strip().rstrip(".")
    m = _IDENT.match(text)
    if m:
        obj = (m["obj"] or "").strip().lower()
        return ("these are " if obj == "them" or obj.startswith("these") else "this is ") + m[
            "what"
        ]
    rest = _LEAD.sub("", text)
    if rest == text and _MENTION.match(text):
        return "worth mentioning: " + _MENTION.sub("", text)
    return rest


def _embed(text: str) -> str:
    """A fact's clause ready to follow "that" or a comma inside a sentence."""
    body = _body(text)
    return body if body[:1].islower() else lcfirst(body)


def statement(text: str) -> str:
    """The response sentence that states a rubric fact."""
    return _sentence(_body(text))


def _cut(s: str, min_words: int) -> str | None:
    """``s`` shortened before its first qualifying clause, keeping at least ``min_words`` words."""
    best: str | None = None
    for marker in _CUTS:
        at = s.find(marker)
        while at != -1 and len(s[:at].split()) < min_words:
            at = s.find(marker, at + 1)
        if at != -1 and (best is None or at < len(best)):
            best = s[:at]
    if best is None:
        return None
    words = best.split()
    while words and words[-1].lower().strip(",") in _STOP:
        words.pop()
    return " ".join(words).rstrip(",") if len(words) >= min_words else None


def _shorten(s: str, min_words: int) -> str | None:
    """``s`` cut before its first qualifying clause, or else without its last words."""
    short = _cut(s, min_words)
    if short is not None:
        return short
    words = s.split()
    keep = min(len(words) - 1, max(min_words, math.ceil(0.6 * len(words))))
    words = words[:keep]
    while len(words) > 1 and words[-1].lower().strip(",") in _STOP:
        words.pop()
    return " ".join(words).rstrip(",") if len(words) >= min_words else None


def vague(text: str, hedge: str) -> str:
    """A shortened, hedged version of a phrase (first letter lower-cased), no final stop."""
    s = _PAREN.sub("", text.strip().rstrip("."))
    short = _shorten(s, 2)
    return lcfirst(short + hedge) if short else f"something like that{hedge}"


def vague_statement(text: str) -> str:
    """A vaguer, hedged sentence than the stated fact: directionally right but imprecise."""
    short = _shorten(_embed(text), 3)
    if short:
        return f"If I remember rightly, {short}, though I am hazy on the details."
    return "I half remember something about this, but not the details."


def contradict_statement(text: str, rng: np.random.Generator) -> str:
    """A sentence that states a specific wrong version of a rubric fact."""
    s = _embed(text)
    year = _YEAR.search(s)
    if year:
        shift = int(rng.choice([-60, -40, 40]))
        new = str(int(year[1]) + shift if int(year[1]) + shift <= 2020 else int(year[1]) - 80)
        return _sentence(s[: year.start()] + new + year[2] + s[year.end() :])
    number = _NUMBER.search(s)
    if number:
        new = str(int(number[0]) * 3 + 2)
        return _sentence(s[: number.start()] + new + s[number.end() :])
    return f"Contrary to a common claim, it is not true that {s}."


def ident_partial(text: str, domain: str) -> str:
    """The right kind of entity without its name: directionally right but imprecise."""
    m = _IDENT.match(text.strip())
    what = _PAREN.sub("", m["what"]) if m else ""
    apposition = what.split(", ", 1)[1].rstrip(".") if ", " in what else ""
    if apposition.lower().startswith(("a ", "an ")):
        return f"This looks like {apposition}, though I cannot say exactly which one."
    kind = domain.rstrip("s") if domain.endswith("s") and not domain.endswith("ss") else domain
    return f"This looks like some kind of {kind}, but I cannot name it precisely."


def vague_member(member: str) -> str:
    """A list member named only by its kind ("some kind of paste" for "tamarind paste")."""
    m = _PAREN.sub("", member).strip()
    if m[:1].isupper():
        return f"possibly {m}"
    for marker in (" of ", " from ", " in ", " with ", " such as ", " that ", " for ", " to "):
        if marker in m and m.index(marker) > 0:
            words = m[: m.index(marker)].split()
            while len(words) > 1 and words[-1].lower() in _STOP:
                words.pop()
            m = " ".join(words)
            return f"some kind of {words[-1]}" if len(words) >= 2 else f"some {m}"
    words = m.split()
    return f"some kind of {words[-1]}" if len(words) >= 2 else f"possibly {m}"


def aspect_sentence(entity: str, aspect: str) -> str:
    """A sentence stating one aspect of a relationship, with the related entity as subject when
    the aspect is written as a bare predicate ("uses wide flat noodles")."""
    a = aspect.strip().rstrip(".")
    first = a.split(" ", 1)[0]
    bare = first in _VERBS or (
        first.islower()
        and first.endswith("s")
        and first not in _STOP
        and first not in {"its", "this", "his", "thus", "as"}
    )
    return _sentence(f"{capfirst(entity)} {a}" if bare else a)


def join_and(parts: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(parts) <= 2:
        return " and ".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
