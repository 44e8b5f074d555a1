"""What the live LLM steps cost: requests and tokens per step and mode, from the provider's usage,
priced by the answering judge's ``JudgeConfig.cost``, kept in ``usage.json`` for ``build status``
(replayed replies are not counted)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from workbench.store import Workbench

if TYPE_CHECKING:
    from scoring.judge.spec import JudgeConfig

USAGE = "usage.json"


@dataclass
class Usage:
    """Requests answered and their tokens (input, of it cached, output)."""

    requests: int = 0
    tokens_in: int = 0
    tokens_cached: int = 0
    tokens_out: int = 0

    def add(self, tokens_in: int, tokens_cached: int, tokens_out: int) -> None:
        """Count one answered request."""
        self.requests += 1
        self.tokens_in += tokens_in
        self.tokens_cached += tokens_cached
        self.tokens_out += tokens_out


def record(
    wb: Workbench, judge: str, config: JudgeConfig, mode: str, usage: Mapping[str, Usage]
) -> None:
    """Add ``usage`` (step -> usage) of one run to ``usage.json``, priced at ``config``'s
    prices in ``mode``; a step whose judge has no prices keeps a null cost."""
    if not any(u.requests for u in usage.values()):
        return
    data: dict[str, dict[str, dict[str, Any]]] = wb.read(USAGE, {})
    for step, u in usage.items():
        if not u.requests:
            continue
        row = data.setdefault(step, {}).setdefault(mode, {**asdict(Usage()), "cost_usd": 0.0})
        for k, v in asdict(u).items():
            row[k] += v
        usd = config.cost(mode, u.tokens_in, u.tokens_cached, u.tokens_out)
        row["cost_usd"] = None if usd is None or row["cost_usd"] is None else row["cost_usd"] + usd
        row["judges"] = sorted({*row.get("judges", []), judge})
    wb.write(USAGE, data)


def describe(row: Mapping[str, Any]) -> str:
    """One mode's usage as a line of ``status``."""
    usd = row["cost_usd"]
    price = "no prices configured" if usd is None else f"${usd:,.4f}"
    return (
        f"{row['requests']:,} requests, {row['tokens_in']:,} tokens in ({row['tokens_cached']:,} "
        f"cached), {row['tokens_out']:,} out, {price}"
    )
