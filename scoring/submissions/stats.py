"""Response statistics of one response file, as numbers: lengths, empty answers, refusals and
identical or templated answers (the groups the template warning counts). Pure functions."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from scoring.submissions.gaming import LONG_FACTOR, LONG_MIN_CHARS, normalise, template_groups

#: An answer that opens like this is counted as a refusal (a heuristic: it is only reported).
_REFUSAL = re.compile(
    r"^\W*(?:i'?m sorry|i am sorry|sorry, |i apologi[sz]e|i can(?:no|')t (?:help|assist|"
    r"identify|determine|provide|answer|tell|see)|i (?:am|'m) (?:not able|unable) to|"
    r"i'?m not able to|i do not feel comfortable|as an ai\b|unable to (?:identify|determine))",
    re.IGNORECASE,
)


def is_refusal(text: str) -> bool:
    """True when an answer opens with a refusal or an apology."""
    return _REFUSAL.match(text.strip().replace("\u2019", "'")) is not None


@dataclass(frozen=True)
class ResponseStats:
    """The numbers of one response file."""

    n: int
    empty: int
    refused: int
    duplicated: int
    largest_duplicate_group: int
    long: int
    length_min: int
    length_p10: int
    length_median: int
    length_p90: int
    length_max: int

    def line(self) -> str:
        """One line for the terminal."""
        lengths = (
            f"length in characters: min {self.length_min:,}, 10% {self.length_p10:,}, "
            f"median {self.length_median:,}, 90% {self.length_p90:,}, max {self.length_max:,}"
        )
        dup = (  # the groups of the validator's warning, said the same way
            f"{self.duplicated} identical or templated (largest group "
            f"{self.largest_duplicate_group})"
            if self.duplicated
            else "none identical or templated"
        )
        return (
            f"{self.n:,} responses; {lengths}; {self.empty} empty, {self.refused} refused, "
            f"{dup}, {self.long} longer than {LONG_FACTOR:g}x the median"
        )


def _percentile(sorted_values: list[int], q: float) -> int:
    """The nearest-rank percentile of already sorted values."""
    if not sorted_values:
        return 0
    k = max(0, min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


def response_stats(
    texts: Mapping[str, str], question_words: Mapping[str, set[str]]
) -> ResponseStats:
    """The statistics of one setting's responses, by question id; ``question_words``: each
    question's own words (:func:`scoring.submissions.gaming.question_words`), so that the
    duplicates counted are the groups the validator's template warning counts."""
    lengths = sorted(len(t) for t in texts.values())
    normal = {q: normalise(t) for q, t in texts.items() if t.strip()}
    dup_groups = [len(g) for g in template_groups(normal, question_words)]
    median = _percentile(lengths, 0.5)
    threshold = max(LONG_FACTOR * median, LONG_MIN_CHARS)
    return ResponseStats(
        n=len(lengths),
        empty=sum(1 for t in texts.values() if not t.strip()),
        refused=sum(1 for t in texts.values() if is_refusal(t)),
        duplicated=sum(dup_groups),
        largest_duplicate_group=max(dup_groups, default=0),
        long=sum(1 for n in lengths if n > threshold),
        length_min=lengths[0] if lengths else 0,
        length_p10=_percentile(lengths, 0.1),
        length_median=median,
        length_p90=_percentile(lengths, 0.9),
        length_max=lengths[-1] if lengths else 0,
    )
