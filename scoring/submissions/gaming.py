"""Warnings about likely gaming or accidents in a submission's responses (pure functions)."""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import math
import re
import statistics
import string
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from scoring.errors import Problem
from scoring.submissions.report import WARNING
from scoring.submissions.responses import Response

if TYPE_CHECKING:
    from scoring.questions import Question

#: A group of identical or templated responses is reported from this share of responses on.
TEMPLATE_SHARE = 0.05
#: ... and from this many responses on.
TEMPLATE_MIN = 3
#: A response is "far longer than the rest" from this multiple of the median length on ...
LONG_FACTOR = 10.0
#: ... and when it is at least this many characters long.
LONG_MIN_CHARS = 2000
#: Another submission is "copied" from this share of identical responses on.
COPY_SHARE = 0.5
#: A judge-addressed phrase is reported at most this many times per file.
MAX_JUDGE_WARNINGS = 20

_ROLES = ("grader", "judge", "evaluator", "assessor", "rater")
_ROLE = r"(?:grader|judge|evaluator|assessor|rater|llm judge)s?"
# Each phrase addressed to the judge, with the lower-case words one of which it must contain: a
# plain substring test skips the regular expression for almost every honest response.
_JUDGE_PHRASES: list[tuple[tuple[str, ...], str]] = [
    (
        ("ignore", "disregard"),
        r"(?:ignore|disregard) (?:all |any )?(?:the )?(?:previous|prior|above|earlier|preceding) "
        r"(?:instructions|directions|prompts?|rules)",
    ),
    (
        ("mark",),
        r"\bmark (?:this|it|the (?:response|answer)|every check) as "
        r"(?:meets|met|correct|complete|passing|partially)",
    ),
    (_ROLES, r"\bas (?:the|an|a) (?:grader|evaluator|assessor|rater)\b"),
    (_ROLES, rf"\b(?:dear|note to the|note for the|attention|hello|hi) {_ROLE}\b"),
    (_ROLES, rf"\b{_ROLE}\s*[:,]\s*(?:please|you must|you should)"),
    (_ROLES, rf"\byou are (?:the|an|a) {_ROLE}\b"),
    (("verdict",), r"\bverdict\W{0,3}\s*(?:is\s*)?\W{0,3}(?:meets|partially_meets)\b"),
    (("partially_meets",), r"\bpartially_meets\b"),
    (
        ("credit", "points", "marks", "score"),
        r"\b(?:award|give|assign) (?:this |the )?(?:response |answer )?"
        r"(?:full|maximum|max|all) (?:credit|points|marks|score)",
    ),
    (("meets",), r"\bmeets (?:every|all) (?:check|criteri|rubric)"),
    (("system prompt",), r"\bsystem prompt\b"),
    (("<",), r"</?(?:system|instructions?|judge)>"),
    # reworded
    (
        ("forget", "override", "disregard", "ignore", "skip"),
        r"\b(?:forget|override|disregard|ignore|skip) (?:all |any |the |your |these |those )*"
        r"(?:previous |prior |above |earlier |original |grading |scoring )*"
        r"(?:instructions|directions|rules|guidelines|rubric|criteria|checks?)\b",
    ),
    (("new instructions",), r"\bnew instructions\s*:"),
    (
        ("output", "return", "respond", "answer", "reply", "say"),
        r"\b(?:output|return|respond with|answer with|reply with|say) "
        r"\W{0,2}(?:meets|partially_meets)\b",
    ),
    (
        ("rate", "grade", "score", "evaluate", "judge", "treat", "consider"),
        r"\b(?:rate|grade|score|evaluate|judge|treat|consider) (?:this|the|my) "
        r"(?:response|answer|reply) (?:as )?(?:correct|complete|perfect|meets|full marks|10/10)",
    ),
    (("meets",), r"\b(?:this|the|my) (?:response|answer) (?:fully )?meets (?:the |every |all )"),
    # French, Spanish, German
    (
        ("ignore", "oublie"),
        r"\b(?:ignore[rz]?|oublie[rz]?) (?:toutes |tous )?(?:les |vos |tes )?"
        r"(?:instructions|consignes|regles)(?: precedentes| ci-dessus| anterieures)?",
    ),
    (
        ("note", "evalue", "juge"),
        r"\b(?:note[rz]?|evalue[rz]?|juge[rz]?) (?:cette|la) reponse comme "
        r"(?:correcte|complete|parfaite)",
    ),
    (
        ("juge", "evaluateur", "correcteur"),
        r"\b(?:cher|chere|note au|note pour le|attention|bonjour) "
        r"(?:juge|evaluateur|correcteur)\b",
    ),
    (
        ("ignora", "olvida"),
        r"\b(?:ignora|olvida) (?:todas )?(?:las )?instrucciones(?: anteriores| previas)?",
    ),
    (
        ("ignorier", "vergiss"),
        r"\b(?:ignoriere|ignorieren sie|vergiss) (?:alle )?(?:vorherigen |bisherigen )?"
        r"(?:anweisungen|regeln)",
    ),
]
_JUDGE = [(trig, re.compile(rx, re.IGNORECASE)) for trig, rx in _JUDGE_PHRASES]
# every trigger word at once: one search rejects an honest response (as fast as testing a few
# of them one by one, and a regex alternation of literals finds one exactly when one occurs)
_TRIGGERS = tuple(sorted({t for triggers, _ in _JUDGE_PHRASES for t in triggers}))
_ANY_TRIGGER = re.compile("|".join(re.escape(t) for t in _TRIGGERS))

# Characters that render as nothing (zero-width, joiners, bidirectional controls, variation
# selectors, tags, soft hyphen, Hangul fillers): removed before matching.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]"
)
# Look-alike letters (Unicode confusables) from the Cyrillic and Greek blocks, as Latin.
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁɡһӏԛԝАВЕКМНОРСТХІЈЅѴοαειкνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdghlqwABEKMHOPCTXIJSVoaeikvptuxABEZHIKMNOPTYX",
)
# Words spelled out letter by letter ("i g n o r e", "i.g.n.o.r.e")
_SPACED = re.compile(r"\b(?:\w[ .\-_*]){3,}\w\b")
# What every match of _SPACED holds (its last three letters, each after a separator): a search
# that starts with a character class is several times faster, and rules out most texts
_SPACED_HINT = re.compile(r"[ .\-_*]\w[ .\-_*]\w[ .\-_*]\w")
_BASE64_MIN = 16
_BASE64 = re.compile(rf"[A-Za-z0-9+/]{{{_BASE64_MIN},}}={{0,2}}")


@functools.cache
def combining_marks() -> dict[int, None]:
    """A ``str.translate`` table deleting every character with a non-zero canonical combining
    class (accents and other marks), built on first use (about 10 ms). Unicode assigns such
    characters in planes 0 and 1 only (a test checks every code point); plane 14 is scanned too."""
    ranges = (range(0x20000), range(0xE0000, 0xE1000))
    return dict.fromkeys(c for r in ranges for c in r if unicodedata.combining(chr(c)))


def fold(text: str) -> str:
    """``text`` as a reader sees it: NFKC, invisible characters removed, look-alike letters and
    accents mapped to plain Latin, letter-spaced words joined, spacing collapsed, lower case."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text).translate(_CONFUSABLES)
    text = unicodedata.normalize("NFKD", text).translate(combining_marks())
    if _SPACED_HINT.search(text):
        text = _SPACED.sub(lambda m: re.sub(r"[ .\-_*]", "", m[0]), text)
    return " ".join(text.split()).casefold()


def _decoded_base64(text: str) -> list[str]:
    """Readable text hidden in base64 runs of ``text``."""
    out = []
    for m in _BASE64.finditer(text):
        token = m[0]
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if (
            decoded.isprintable()
            and sum(c.isalpha() or c == " " for c in decoded) > len(decoded) * 0.8
        ):
            out.append(decoded)
    return out


def _match(flat: str) -> str | None:
    lowered = flat.lower()
    if not _ANY_TRIGGER.search(lowered):
        return None
    for triggers, rx in _JUDGE:
        if any(t in lowered for t in triggers):
            m = rx.search(flat)
            if m is not None:
                return m.group()
    return None


def judge_phrase(text: str) -> str | None:
    """The first phrase of ``text`` that seems addressed to the judge, or None: matched as written,
    then folded (:func:`fold`), then in any base64 it holds (marked ``(base64)``)."""
    tokens = text.split()
    found = _match(" ".join(tokens))
    if found is None and (
        not text.isascii() or (_SPACED_HINT.search(text) and _SPACED.search(text))
    ):
        found = _match(fold(text))
    # a base64 run holds no space: only a text with a token of its length can hold one
    if found is None and max(map(len, tokens), default=0) >= _BASE64_MIN:
        for decoded in _decoded_base64(text):
            hidden = _match(fold(decoded))
            if hidden is not None:
                return f"{hidden} (base64)"
    return found


#: ASCII, Latin-1 and general punctuation, each mapped to a space.
_PUNCTUATION = dict.fromkeys(
    [*map(ord, string.punctuation), *range(0xA1, 0xC0), *range(0x2000, 0x2070), 0x3001, 0x3002],
    " ",
)
#: The same map for ASCII bytes, as a byte table (``bytes.translate`` reads it without a lookup
#: per character).
_ASCII_PUNCTUATION = bytes(32 if chr(b) in string.punctuation else b for b in range(256))


def normalise(text: str) -> str:
    """Text with case, punctuation and spacing differences removed (NFKC for non-ASCII)."""
    if text.isascii():  # the same result, from byte tables (most responses are ASCII)
        plain = text.lower().encode("ascii").translate(_ASCII_PUNCTUATION).decode("ascii")
        return " ".join(plain.split())
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.casefold().translate(_PUNCTUATION).split())


def digest(normalised: str) -> int:
    """A 64-bit fingerprint of already normalised text, the same in every process (unlike
    ``hash``), so that other submissions' fingerprints can be cached between runs."""
    return int.from_bytes(
        hashlib.blake2b(normalised.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big"
    )


def fingerprint(text: str) -> int:
    """The fingerprint the copy check compares: :func:`digest` of :func:`normalise`."""
    return digest(normalise(text))


def words(text: str) -> list[str]:
    """The words of the normalised text (see :func:`normalise`)."""
    return normalise(text).split()


def _lines(rs: list[Response], limit: int = 8) -> str:
    shown = ", ".join(str(r.line) for r in rs[:limit])
    return shown + (f" and {len(rs) - limit} more" if len(rs) > limit else "")


def template_groups(
    texts: Mapping[str, str], question_words: Mapping[str, set[str]]
) -> list[list[str]]:
    """The groups of two or more question ids whose responses are identical, or the same once case,
    punctuation and their own questions' words are removed (skeletons under three words say too
    little), largest first."""
    parent = {q: q for q, t in texts.items() if t}

    def root(q: str) -> str:
        while parent[q] != q:
            q = parent[q] = parent[parent[q]]
        return q

    first: dict[str, str] = {}
    for qid in parent:
        own = question_words.get(qid, set())
        skeleton = [w for w in texts[qid].split() if w not in own]
        keys = ["\0" + texts[qid]] + ([" ".join(skeleton)] if len(skeleton) >= 3 else [])
        for key in keys:  # one group for both relations (union of the pairs)
            parent[root(qid)] = root(first.setdefault(key, qid))
    groups: dict[str, list[str]] = defaultdict(list)
    for qid in parent:
        groups[root(qid)].append(qid)
    return sorted((g for g in groups.values() if len(g) > 1), key=len, reverse=True)


def question_words(questions: Iterable[Question]) -> dict[str, set[str]]:
    """Each question's own words (both forms), which a templated answer fills in."""
    return {
        q.question_id: set(words(q.question)) | set(words(q.text_only_question)) for q in questions
    }


def _warn(
    display: str, line: int | None, message: str, fix: str, qid: str | None = None
) -> Problem:
    return Problem(display, line, message, fix, question_id=qid, severity=WARNING)


def _template_warnings(
    display: str,
    responses: Mapping[str, Response],
    question_words: Mapping[str, set[str]],
    texts: Mapping[str, str],
) -> list[Problem]:
    """Warn about groups of identical or templated responses (:func:`template_groups`)."""
    n = len(responses)
    threshold = max(TEMPLATE_MIN, math.ceil(TEMPLATE_SHARE * n))
    big = [g for g in template_groups(texts, question_words) if len(g) >= threshold]
    out = []
    for qids in big[:3]:
        g = sorted((responses[q] for q in qids), key=lambda r: r.line)
        message = (
            f"{len(g)} responses ({100 * len(g) / n:.0f}%) are identical or templated (same text "
            f"apart from case, punctuation and the question's words): lines {_lines(g)}"
        )
        fix = "make sure every question got its own answer from the model"
        out.append(_warn(display, g[0].line, message, fix))
    return out


def _long_warnings(display: str, responses: Mapping[str, Response]) -> list[Problem]:
    """Warn about responses far longer than the median response."""
    lengths = [len(r.text) for r in responses.values() if r.text.strip()]
    if len(lengths) < 3:
        return []
    median = statistics.median(lengths)
    fix = "check that the model did not loop or that no extra text was pasted in"
    return [
        _warn(
            display,
            r.line,
            f"response is {len(r.text) / max(median, 1):.0f}x the median length "
            f"({len(r.text)} characters; median {median:.0f})",
            fix,
            qid,
        )
        for qid, r in responses.items()
        if len(r.text) >= LONG_MIN_CHARS and len(r.text) > LONG_FACTOR * max(median, 1)
    ]


def _judge_warnings(display: str, responses: Mapping[str, Response]) -> list[Problem]:
    """Warn about text that seems addressed to the judge rather than to the user."""
    fix = "remove text aimed at the grader"
    hits = [
        (qid, r, phrase)
        for qid, r in sorted(responses.items(), key=lambda kv: kv[1].line)
        if (phrase := judge_phrase(r.text)) is not None
    ]
    rejected = f"{fix}; such submissions are rejected"
    out = [
        _warn(display, r.line, f"response seems to address the judge: {phrase!r}", rejected, qid)
        for qid, r, phrase in hits[:MAX_JUDGE_WARNINGS]
    ]
    if len(hits) > MAX_JUDGE_WARNINGS:
        more = len(hits) - MAX_JUDGE_WARNINGS
        out.append(_warn(display, None, f"{more} more responses seem to address the judge", fix))
    return out


def _copy_warnings(
    display: str, others: Mapping[str, Mapping[str, int]], mine: Mapping[str, str]
) -> list[Problem]:
    """Warn when a high share of responses is identical to another submission's in the same
    setting (``others``: their :func:`fingerprint` by question id, by submission id)."""
    hashed = {q: digest(t) for q, t in mine.items()}
    fix = (
        "if it is the same model, keep one of them: a merged submission is never replaced by a "
        "pull request (new responses go under a new id, such as ID-v2; to correct or withdraw a "
        "merged one, ask the maintainers)"
    )
    out = []
    for other_id, theirs in sorted(others.items()):
        common = [q for q in mine if mine[q] and q in theirs]
        same = sum(1 for q in common if hashed[q] == theirs[q])
        if common and same >= TEMPLATE_MIN and same / len(common) >= COPY_SHARE:
            share = f"{same} of {len(common)} responses ({100 * same / len(common):.0f}%)"
            out.append(
                _warn(display, None, f"{share} are identical to submission {other_id!r}", fix)
            )
    return out


def warnings(
    display: str,
    responses: Mapping[str, Response],
    question_words: dict[str, set[str]],
    others: Mapping[str, Mapping[str, int]],
) -> list[Problem]:
    """Every gaming warning of one response file: templated answers, overlong ones, text aimed
    at the judge, and answers copied from ``others``."""
    texts = {q: normalise(r.text) for q, r in responses.items()}  # once, for two checks
    return [
        *_template_warnings(display, responses, question_words, texts),
        *_long_warnings(display, responses),
        *_judge_warnings(display, responses),
        *_copy_warnings(display, others, texts),
    ]
