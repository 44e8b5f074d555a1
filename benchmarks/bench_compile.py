"""Compile 2,000 meta-rubrics of 15 items each; target under 2 s. Prints the measured figures."""

from __future__ import annotations

import random
import time
from typing import Any

from scoring import MetaRubric, compile_rubric

N_RUBRICS, N_ITEMS = 2000, 15


def make_rubric(i: int, rng: random.Random) -> dict[str, Any]:
    tiers = ["answer_critical", "valuable", "context"]
    items: list[dict[str, Any]] = []
    for j in range(N_ITEMS):
        base = {"id": f"I{j + 1}", "tier": rng.choice(tiers), "cites": ["S1"]}
        kind = j % 5
        if kind == 0:
            items.append(base | {"type": "fact", "text": f"States fact {j} about entity {i}."})
        elif kind == 1:
            members = [f"member {k}" for k in range(rng.randint(1, 5))]
            items.append(base | {"type": "strict_list", "topic": f"topic {j}", "members": members})
        elif kind == 2:
            n = rng.randint(3, 12)
            items.append(
                base
                | {
                    "type": "flexible_list",
                    "topic": f"pool {j}",
                    "members": [f"option {k}" for k in range(n)],
                    "baselines": [rng.randint(1, n - 1)],
                    "insight": {"text": f"Notes the pattern {j}.", "tier": "context"},
                }
            )
        elif kind == 3:
            steps = [{"text": f"step {k}", "required": k % 3 != 1} for k in range(4)]
            items.append(base | {"type": "process", "topic": f"process {j}", "steps": steps})
        else:
            aspects = [f"aspect {k}" for k in range(2)]
            items.append(
                base
                | {
                    "type": "relationship",
                    "entity": f"rival {j}",
                    "relation": "a rival",
                    "aspects": aspects,
                }
            )
    snippet = {"id": "S1", "url": "https://example.org/x", "title": "t", "text": "evidence"}
    return {"question_id": f"q-{i:05d}", "snippets": [snippet], "items": items}


def main() -> None:
    rng = random.Random(0)
    raw = [make_rubric(i, rng) for i in range(N_RUBRICS)]
    t0 = time.perf_counter()
    rubrics = [MetaRubric.model_validate(r) for r in raw]
    t1 = time.perf_counter()
    n_checks = sum(len(compile_rubric(r)) for r in rubrics)
    t2 = time.perf_counter()
    print(f"bench_compile: {N_RUBRICS} rubrics x {N_ITEMS} items -> {n_checks} checks")
    print(
        f"  validate: {t1 - t0:.3f} s   compile: {t2 - t1:.3f} s   "
        f"validate+compile: {t2 - t0:.3f} s   (target: compile < 2 s)"
    )
    print(f"  {n_checks / (t2 - t1):,.0f} checks/s")


if __name__ == "__main__":
    main()
