"""Drawing responses for the human audit (``gamut audit sample``). Pure, no I/O.

Each stratum (model, setting, domain) gets its share of ``n`` by largest remainders (ties in an
order drawn from the seed), drawn uniformly without replacement from a generator seeded by
(seed, stratum), so a stratum's draw does not depend on the others.
"""

from __future__ import annotations

import zlib
from collections.abc import Collection, Sequence
from typing import NamedTuple

import numpy as np


class Response(NamedTuple):
    """One response that can be audited."""

    submission_id: str
    setting: str
    question_id: str
    domain: str


def _allocate(sizes: Sequence[int], n: int, seed: int) -> list[int]:
    """``n`` split over strata of ``sizes`` in proportion: the whole parts, then one more for
    the largest remainders, equal remainders in an order drawn from ``seed`` (so that equal
    strata early in the order are not favoured)."""
    total = sum(sizes)
    if total == 0:
        return [0] * len(sizes)
    n = min(n, total)
    exact = [n * s / total for s in sizes]
    out = [int(x) for x in exact]
    tiebreak = np.random.default_rng([seed, len(sizes)]).permutation(len(sizes))
    order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - out[i]), int(tiebreak[i])))
    for i in order[: n - sum(out)]:
        out[i] += 1
    return out


def draw_sample(
    responses: Sequence[Response],
    n: int,
    seed: int,
    exclude: Collection[tuple[str, str, str]] = (),
) -> list[Response]:
    """Draw ``n`` responses stratified by (submission, setting, domain), never one of ``exclude``;
    the same inputs and seed give the same draw, sorted."""
    strata: dict[tuple[str, str, str], list[Response]] = {}
    for r in responses:
        if (r.submission_id, r.setting, r.question_id) not in exclude:
            strata.setdefault((r.submission_id, r.setting, r.domain), []).append(r)
    keys = sorted(strata)
    counts = _allocate([len(strata[k]) for k in keys], n, seed)
    out: list[Response] = []
    for key, count in zip(keys, counts, strict=True):
        if not count:
            continue
        pool = sorted(strata[key])
        rng = np.random.default_rng([seed, *(zlib.crc32(part.encode()) for part in key)])
        out += [pool[int(i)] for i in rng.choice(len(pool), size=count, replace=False)]
    return sorted(out)
