"""A paper-scale synthetic project for benchmarks and load tests (never committed): config,
questions, random valid meta-rubrics, submissions, replay files and ``results/verdicts.parquet``
(about 5.3 million verdict rows at full size), drawn with numpy from per-model quality and
multimodal penalty and per-judge noise, leniency and own-family bias.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring.compiler import Check, compile_rubric, default_coverage_thresholds
from scoring.layout import SubmissionFolder
from scoring.questions import Popularity, Setting
from scoring.rubric import MetaRubric, Tier
from scoring.storage import atomic_write_text
from scoring.submissions.formats import SubmissionMeta
from scoring.verdicts import VERDICT_COLUMNS, VERDICT_ORDER, VERDICT_TABLE
from workbench.synthetic._io import jsonl, write_parquet, write_yaml
from workbench.synthetic.profiles import synthetic_meta

DOMAINS: tuple[str, ...] = (
    "plants", "food", "animals", "vehicles", "local places", "everyday objects",
    "consumer products", "buildings", "art", "sports",
)  # fmt: skip
SETTINGS: tuple[Setting, ...] = tuple(Setting)
_FAMILIES = ("atlas", "birch", "cedar", "dune", "ember", "fjord", "grove")
_WORDS = (
    "amber", "basalt", "cobalt", "delta", "ember", "fennel", "garnet", "harbor", "indigo",
    "juniper", "kelp", "linen", "marble", "nectar", "ochre", "pepper", "quartz", "russet",
    "saffron", "thistle", "umber", "velvet", "willow", "yarrow", "zinc",
)  # fmt: skip
_TIERS = tuple(Tier)
_SETTING_NAMES = [s.value for s in SETTINGS]
_VERDICT_NAMES = [v.value for v in VERDICT_ORDER]
_RATIONALE = (
    "Synthetic verdict: the response states this.",
    "Synthetic verdict: the response states this only vaguely.",
    "Synthetic verdict: the response does not state this.",
    "Synthetic verdict: the response states something incompatible with this.",
)


@dataclass(frozen=True)
class PaperJudge:
    """A simulated judge: per-check noise, leniency, and a bias toward its own family's models."""

    name: str
    family: str
    noise: float
    leniency: float
    own_family_bias: float
    primary: bool = False


PAPER_JUDGES: tuple[PaperJudge, ...] = (
    PaperJudge("atlas", "atlas", noise=0.03, leniency=0.0, own_family_bias=0.02, primary=True),
    PaperJudge("birch", "birch", noise=0.06, leniency=0.12, own_family_bias=0.02),
    PaperJudge("cedar", "cedar", noise=0.05, leniency=0.02, own_family_bias=0.15),
)


class _WordPool:
    """Random words drawn from a seeded generator in blocks (one numpy call per 64k words)."""

    def __init__(self, rng: np.random.Generator, block: int = 1 << 16) -> None:
        self._rng = rng
        self._block = block
        self._buf: list[int] = []
        self._pos = 0

    def __call__(self, n: int) -> str:
        if self._pos + n > len(self._buf):
            self._buf = self._rng.integers(0, len(_WORDS), max(n, self._block)).tolist()
            self._pos = 0
        out = " ".join(_WORDS[i] for i in self._buf[self._pos : self._pos + n])
        self._pos += n
        return out


def _item(
    rng: np.random.Generator, words: _WordPool, iid: str, room: int
) -> tuple[dict[str, Any], int]:
    """One random item that compiles to at most ``room`` checks; returns it and its check count."""
    tier = _TIERS[int(rng.choice(3, p=[0.4, 0.4, 0.2]))]
    base: dict[str, Any] = {"id": iid, "tier": tier.value, "cites": ["S1"]}
    kind = int(rng.choice(5, p=[0.2, 0.2, 0.25, 0.2, 0.15])) if room >= 4 else 0
    topic = f"the {words(1)} {words(1)}s"
    if kind == 0:
        return {**base, "type": "fact", "text": f"States the {words(3)} fact."}, 1
    if kind == 1:
        n = int(rng.integers(1, min(5, room - 1) + 1))
        members = [f"{topic} member {j} {words(1)}" for j in range(1, n + 1)]
        item = {**base, "type": "strict_list", "topic": topic, "members": members}
        item["insight"] = {"text": f"Notes that {words(3)}.", "tier": Tier.CONTEXT.value}
        return item, n + 1
    if kind == 2:
        long = tier is Tier.CONTEXT or (room >= 9 and rng.random() < 0.35)
        n = int(rng.integers(8, 15)) if long else int(rng.integers(2, min(7, room - 1) + 1))
        baselines = [1, 2] if n >= 4 and rng.random() < 0.3 else [int(rng.integers(1, min(n, 4)))]
        members = [f"option {j} {words(2)}" for j in range(1, n + 1)]
        extra = len(default_coverage_thresholds(n, baselines)) if long else n
        item = {
            **base,
            "type": "flexible_list",
            "topic": topic,
            "members": members,
            "baselines": baselines,
        }
        return item, len(baselines) + extra
    if kind == 3:
        n = int(rng.integers(2, min(6, room - 2) + 1))
        required = rng.random(n) < 0.7
        required[0] = True
        steps = [
            {"text": f"Step {j} {words(2)}", "required": bool(r)} for j, r in enumerate(required, 1)
        ]
        k = n + int(required.sum() >= 2) + int(not required.all())
        return {**base, "type": "process", "topic": topic, "steps": steps}, k
    n = int(rng.integers(0, min(3, room - 1) + 1))
    aspects = [f"differs in {words(2)}" for _ in range(n)]
    item = {
        **base,
        "type": "relationship",
        "entity": f"the {words(2)}",
        "relation": "a related entity",
        "aspects": aspects,
    }
    return item, 1 + n


def random_rubric(
    rng: np.random.Generator, question_id: str, target: int, words: _WordPool | None = None
) -> dict[str, Any]:
    """A valid meta-rubric object of mixed item types compiling to about ``target`` checks."""
    words = words or _WordPool(rng, block=256)
    items: list[dict[str, Any]] = [
        {
            "id": "I1",
            "type": "fact",
            "tier": Tier.ANSWER_CRITICAL.value,
            "cites": ["S1"],
            "text": f"Identifies the entity as the {words(2)}.",
        }
    ]
    n = 1
    while n < target:
        item, k = _item(rng, words, f"I{len(items) + 1}", target - n)
        items.append(item)
        n += k
    snippet = {
        "id": "S1",
        "url": f"https://example.org/{question_id}",
        "title": "Synthetic source",
        "text": f"Synthetic evidence about {words(2)}.",
    }
    return {"question_id": question_id, "snippets": [snippet], "items": items}


def _questions(rng: np.random.Generator, words: _WordPool, n: int) -> list[dict[str, Any]]:
    out = []
    pops = rng.choice(3, size=n, p=[0.3, 0.4, 0.3])
    ego = rng.random(n) < 0.8
    for i in range(n):
        domain = DOMAINS[i % len(DOMAINS)]
        qid = f"{domain.replace(' ', '-')}-{i:04d}"
        name = words(2)
        out.append(
            {
                "question_id": qid,
                "image_id": f"img-{i:04d}",
                "image": None,
                "domain": domain,
                "popularity": list(Popularity)[int(pops[i])].value,
                "egocentric": bool(ego[i]),
                "question": f"What is this {domain} item and what is it known for?",
                "text_only_question": f"What is the {name} and what is it known for?",
            }
        )
    return out


def _dict_array(indices: npt.NDArray[Any], values: list[str]) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(indices), pa.array(values, pa.string()))


@dataclass(frozen=True)
class _Checks:
    """The compiled checks of every question as parallel arrays, in question then rubric order."""

    question: npt.NDArray[np.int32]  # index into the question list
    check_ids: list[str]  # distinct check ids
    check: npt.NDArray[np.int32]  # index into check_ids
    tier: npt.NDArray[np.int8]
    kind: npt.NDArray[np.int8]
    kinds: list[str]
    secondary: npt.NDArray[np.bool_]


def _flatten(checks: list[list[Check]]) -> _Checks:
    ids: dict[str, int] = {}
    kinds: dict[str, int] = {}
    q, c, t, k, s = [], [], [], [], []
    for qi, cs in enumerate(checks):
        for ch in cs:
            q.append(qi)
            c.append(ids.setdefault(ch.check_id, len(ids)))
            t.append(_TIERS.index(ch.tier))
            k.append(kinds.setdefault(ch.kind.value, len(kinds)))
            s.append(ch.secondary)
    return _Checks(
        np.array(q, np.int32),
        list(ids),
        np.array(c, np.int32),
        np.array(t, np.int8),
        np.array(k, np.int8),
        list(kinds),
        np.array(s, np.bool_),
    )


def simulate_labels(
    rng: np.random.Generator,
    checks: _Checks,
    popularity: npt.NDArray[np.int8],
    egocentric: npt.NDArray[np.bool_],
    n_models: int,
) -> npt.NDArray[np.int8]:
    """Known verdict codes, shape (models, settings, checks)."""
    quality = np.sort(rng.normal(0.5, 0.6, n_models))[::-1]
    mm_penalty = rng.uniform(0.1, 0.8, n_models)
    caution = rng.uniform(-1.0, 1.0, n_models)
    n_q, n_c = len(popularity), len(checks.check)
    difficulty = np.array([-0.3, 0.1, 0.6])[popularity] + rng.normal(0, 0.4, n_q)
    check_diff = rng.normal(0, 0.8, len(checks.check)) + 0.4 * checks.secondary + 0.15 * checks.tier
    setting_mm = np.array([1.0, 0.0])
    ability = (
        quality[:, None, None]
        - difficulty[None, None, :]
        - (mm_penalty[:, None, None] * setting_mm[None, :, None]) * (1 + 0.3 * egocentric)
        + rng.normal(0, 0.4, (n_models, 2, n_q))
    )
    x = ability[:, :, checks.question] - check_diff + rng.logistic(0, 0.6, (n_models, 2, n_c))
    p_contra = 1 / (1 + np.exp(1.6 + caution[:, None, None] - 0.4 * (-x - 0.4)))
    codes = np.where(x > 0.4, 0, np.where(x > -0.4, 1, 2)).astype(np.int8)
    codes[(codes == 2) & (rng.random(x.shape) < p_contra)] = 3
    return codes


def judge_verdicts(
    rng: np.random.Generator,
    labels: npt.NDArray[np.int8],
    judge: PaperJudge,
    own_family: npt.NDArray[np.bool_],
) -> npt.NDArray[np.int8]:
    """One simulated judge's verdict codes from the known labels (codes ordered best to worst)."""
    v = labels.copy()
    r = rng.random(v.shape)
    noisy = r < judge.noise
    step = np.where(rng.random(v.shape) < 0.5, -1, 1).astype(np.int8)
    v[noisy] = np.clip(v[noisy] + step[noisy], 0, 3)
    lenient = ((v == 1) | (v == 2)) & (rng.random(v.shape) < judge.leniency)
    v[lenient] -= 1
    r = rng.random(v.shape)
    bias = (r < judge.own_family_bias) & (v > 0) & own_family[:, None, None]
    v[bias] -= 1
    return v


def _responses(
    rng: np.random.Generator, words: _WordPool, qids: list[str], model: int
) -> list[dict[str, str]]:
    lengths = rng.integers(1, 7, size=len(qids)) + model % 3
    return [
        {
            "question_id": q,
            "response": " ".join(f"The {words(2)} is known for {words(3)}." for _ in range(int(n))),
        }
        for q, n in zip(qids, lengths, strict=True)
    ]


#: The environment variable the synthetic project's ledger secret is read from.
LEDGER_KEY_ENV = "GAMUT_LEDGER_KEY"


_CONFIG = f"""# Synthetic paper-scale benchmark: generated by `gamut-workbench demo paper`.
[benchmark]
questions = "questions.jsonl"
rubrics = "rubrics.jsonl"
rubrics_public = false
submissions = "submissions"

[store]
cache = ".gamut/verdicts.sqlite"
results = "results"
# the rubrics are held, so ledger keys are keyed hashes: export GAMUT_LEDGER_KEY first
ledger_key_env = "{LEDGER_KEY_ENV}"
"""
_JUDGE = """
[judges.{name}]
provider = "replay"
model = "synthetic-{name}"
family = "{family}"
replay = "verdicts/{name}.parquet"
primary = {primary}
"""


def _key_columns(
    shape: tuple[int, ...],
    checks: _Checks,
    model_ids: list[str],
    qids: list[str],
    judges: tuple[PaperJudge, ...] = (),
) -> dict[str, pa.Array]:
    """The key columns of verdicts shaped (models, settings, [judges,] checks)."""
    n_m, n_s, n_c = shape[0], shape[1], shape[-1]
    n_j = max(1, len(judges))
    reps = n_m * n_s * n_j
    cols = {
        "submission_id": _dict_array(np.repeat(np.arange(n_m), n_s * n_j * n_c), model_ids),
        "setting": _dict_array(np.tile(np.repeat(np.arange(n_s), n_j * n_c), n_m), _SETTING_NAMES),
    }
    if judges:
        judge = np.tile(np.repeat(np.arange(n_j), n_c), n_m * n_s)
        cols["judge"] = _dict_array(judge, [j.name for j in judges])
    cols["question_id"] = _dict_array(np.tile(checks.question, reps), qids)
    cols["check_id"] = _dict_array(np.tile(checks.check, reps), checks.check_ids)
    return cols


def _replay_table(
    codes: npt.NDArray[Any], checks: _Checks, model_ids: list[str], qids: list[str]
) -> pa.Table:
    """One replay judge's verdict codes (models, settings, checks) as its replay file."""
    table = pa.table(
        {
            **_key_columns(codes.shape, checks, model_ids, qids),
            "verdict": _dict_array(codes.reshape(-1), _VERDICT_NAMES),
            "rationale": _dict_array(codes.reshape(-1), list(_RATIONALE)),
        }
    )
    return table.cast(pa.schema([(name, pa.string()) for name in table.column_names]))


def _verdict_table(
    stacked: npt.NDArray[Any],
    checks: _Checks,
    model_ids: list[str],
    qids: list[str],
    judges: tuple[PaperJudge, ...],
) -> pa.Table:
    """Every judge's verdict codes (models, settings, judges, checks) as the verdict table."""
    reps = stacked.size // len(checks.check)
    table = pa.table(
        {
            **_key_columns(stacked.shape, checks, model_ids, qids, judges),
            "kind": _dict_array(np.tile(checks.kind, reps), checks.kinds),
            "tier": _dict_array(np.tile(checks.tier, reps), [t.value for t in _TIERS]),
            "secondary": pa.array(np.tile(checks.secondary, reps)),
            "verdict": _dict_array(stacked.reshape(-1), _VERDICT_NAMES),
        }
    )
    assert tuple(table.column_names) == VERDICT_COLUMNS
    return table


def _benchmark(
    rng: np.random.Generator, words: _WordPool, n_questions: int, checks_per_question: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The questions and their meta-rubrics, with about ``checks_per_question`` checks each."""
    questions = _questions(rng, words, n_questions)
    spread = max(1, checks_per_question // 5)
    targets = rng.integers(
        checks_per_question - spread, checks_per_question + spread + 1, size=n_questions
    )
    rubrics = [
        random_rubric(rng, q["question_id"], int(t), words)
        for q, t in zip(questions, targets, strict=True)
    ]
    return questions, rubrics


def write_paper_scale(
    out_dir: Path,
    *,
    n_questions: int = 1813,
    n_models: int = 14,
    n_judges: int = 3,
    checks_per_question: int = 35,
    seed: int = 0,
) -> Path:
    """Write a synthetic project at paper scale under ``out_dir`` (generated files overwritten;
    the same seed gives the same files): ``n_models`` submissions in both settings and
    ``n_judges`` replay judges (the first primary). Returns the written ``gamut.toml``."""
    if not 1 <= n_judges <= len(PAPER_JUDGES):
        raise ValueError(f"n_judges must be between 1 and {len(PAPER_JUDGES)}")
    rng = np.random.default_rng(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    judges = PAPER_JUDGES[:n_judges]
    words = _WordPool(rng)
    questions, rubrics = _benchmark(rng, words, n_questions, checks_per_question)
    qids = [q["question_id"] for q in questions]
    checks = _flatten([compile_rubric(MetaRubric.model_validate(r)) for r in rubrics])
    atomic_write_text(out_dir / "questions.jsonl", jsonl(questions))
    atomic_write_text(out_dir / "rubrics.jsonl", jsonl(rubrics))

    pops = [p.value for p in Popularity]
    popularity = np.array([pops.index(q["popularity"]) for q in questions], np.int8)
    egocentric = np.array([q["egocentric"] for q in questions], np.bool_)
    labels = simulate_labels(rng, checks, popularity, egocentric, n_models)
    model_ids = [f"synthetic-{m + 1:02d}" for m in range(n_models)]
    families = [_FAMILIES[(m * 3) % len(_FAMILIES)] for m in range(n_models)]
    for m, mid in enumerate(model_ids):
        folder = SubmissionFolder(out_dir / "submissions" / mid)
        meta = synthetic_meta(
            f"Synthetic model {m + 1:02d}", families[m], "synthetic", open_weights=True
        )
        SubmissionMeta.model_validate(meta)
        write_yaml(folder.metadata, meta)
        for setting in SETTINGS:
            atomic_write_text(folder.responses(setting), jsonl(_responses(rng, words, qids, m)))

    per_judge = [
        judge_verdicts(rng, labels, j, np.array([f == j.family for f in families])) for j in judges
    ]
    for j, codes in zip(judges, per_judge, strict=True):
        table = _replay_table(codes, checks, model_ids, qids)
        write_parquet(out_dir / "verdicts" / f"{j.name}.parquet", table)
    stacked = np.stack(per_judge, axis=2)  # (models, settings, judges, checks)
    table = _verdict_table(stacked, checks, model_ids, qids, judges)
    write_parquet(out_dir / "results" / VERDICT_TABLE, table)

    config = out_dir / "gamut.toml"
    judge_tables = (
        _JUDGE.format(name=j.name, family=j.family, primary=str(j.primary).lower()) for j in judges
    )
    atomic_write_text(config, _CONFIG + "".join(judge_tables))
    return config
