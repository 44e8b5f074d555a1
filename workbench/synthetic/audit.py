"""The demo's simulated human audit (docs/contract.md §11), from the known labels: an annotator
gives the known label, or at :data:`ANNOTATOR_ERROR_RATE` a neighbouring one. Per (model,
setting, domain) :data:`AUDIT_SHARE` of the questions (at least one) are drawn: ``sim-a`` labels
every check, ``sim-b`` those of :data:`DOUBLE_SHARE` of them, ``sim-adjudicator`` gives the known
label where they differ. The pages say these are simulated (``audit_simulated = true``).
"""

from __future__ import annotations

import math
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from scoring.questions import Question
from scoring.storage import atomic_write_text
from scoring.verdicts import VERDICT_ORDER
from workbench.synthetic._io import jsonl

#: Probability that a simulated annotator departs from the known label.
ANNOTATOR_ERROR_RATE = 0.1
#: Share of each (model, setting, domain)'s questions whose responses are audited.
AUDIT_SHARE = 0.25
#: Share of the audited responses that a second simulated annotator labels too.
DOUBLE_SHARE = 0.5
FIRST, SECOND, ADJUDICATOR = "sim-a", "sim-b", "sim-adjudicator"
_NOTE = "simulated annotator (demo)"


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(p.encode()) for p in parts)])


def _annotate(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The known verdict codes, each moved to a neighbouring verdict at the error rate."""
    wrong = rng.random(truth.size) < ANNOTATOR_ERROR_RATE
    step = np.where(rng.random(truth.size) < 0.5, -1, 1)
    last = len(VERDICT_ORDER) - 1
    moved = np.where(truth == 0, 1, np.where(truth == last, last - 1, truth + step))
    return np.where(wrong, moved, truth).astype(np.int64)


def _line(key: tuple[str, str, str], cid: str, code: int, who: str, role: str) -> dict[str, str]:
    sub, setting, qid = key
    return {
        "submission_id": sub,
        "setting": setting,
        "question_id": qid,
        "check_id": cid,
        "annotator": who,
        "verdict": VERDICT_ORDER[code].value,
        "role": role,
        "note": _NOTE,
    }


def simulate_audit(
    labels: pd.DataFrame, questions: list[Question], *, seed: int
) -> dict[str, list[dict[str, str]]]:
    """The simulated label lines per annotator file name (without ``.jsonl``), from the known
    labels and the questions' domains; the same seed and labels give the same lines."""
    domain = {q.question_id: q.domain for q in questions}
    codes = {v.value: i for i, v in enumerate(VERDICT_ORDER)}
    out: dict[str, list[dict[str, str]]] = {FIRST: [], SECOND: [], ADJUDICATOR: []}
    frame = labels.assign(domain=labels["question_id"].map(domain))
    for (sub, setting, dom), part in frame.groupby(
        ["submission_id", "setting", "domain"], sort=True
    ):
        qids = sorted(part["question_id"].unique())
        rng = _rng(seed, "audit", str(sub), str(setting), str(dom))
        n = max(1, math.ceil(AUDIT_SHARE * len(qids)))
        drawn = sorted(rng.choice(qids, size=n, replace=False).tolist())
        for qid in drawn:
            rows = part[part["question_id"] == qid]
            truth = rows["verdict"].map(codes).to_numpy(np.int64)
            r = _rng(seed, "labels", str(sub), str(setting), qid)
            first = _annotate(truth, r)
            double = r.random() < DOUBLE_SHARE
            second = _annotate(truth, r) if double else None
            key = (str(sub), str(setting), qid)
            for i, cid in enumerate(rows["check_id"]):
                out[FIRST].append(_line(key, cid, int(first[i]), FIRST, "label"))
                if second is not None:
                    out[SECOND].append(_line(key, cid, int(second[i]), SECOND, "label"))
                    if second[i] != first[i]:
                        out[ADJUDICATOR].append(
                            _line(key, cid, int(truth[i]), ADJUDICATOR, "adjudication")
                        )
    return out


def write_audit(folder: Path, lines: dict[str, list[dict[str, str]]]) -> list[Path]:
    """Write one ``<annotator>.jsonl`` file per annotator into ``folder``, atomically."""
    for who, rows in lines.items():
        atomic_write_text(folder / f"{who}.jsonl", jsonl(rows))
    return [folder / f"{who}.jsonl" for who in lines]
