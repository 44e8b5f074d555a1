"""Small score tables with exactly the documented columns (ARCHITECTURE.md, "The score tables"),
written without the scoring engine so the generator can be tested on its own."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd

from generator.published import PUBLISHED, publish_site_data

SETTINGS = ("multimodal", "text_only")
JUDGES = ("oracle", "lenient", "partisan")
DOMAINS = ("food", "plants", "local places")
POPULARITY = ("head", "torso", "tail")
KINDS = ("fact", "member", "baseline", "step", "sequence")
#: Kappa per kind of the first judge pair; each later pair is 0.05 lower. Text-only sequence
#: checks were judged by no two judges (no kappa). So multimodal: least sequence, then step.
KIND_KAPPA = {"fact": 0.82, "member": 0.64, "baseline": 0.77, "step": 0.55, "sequence": 0.41}
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_LINK = "javascript:alert(1)"
#: Rubric text that the verdict table carries when it was written with public rubrics.
SECRET_CHECK_TEXTS = (
    "Identifies the dish as pad thai.",
    "Mentions tamarind paste.",
    "Soak the dried noodles before frying.",
)
SECRET_RATIONALE = "The response names tamarind paste explicitly."

MODELS = [
    # submission_id, model_name, organisation, family, open_weights, link
    ("acme-vision-1", "Acme Vision 1", "Acme", "acme", True, "https://example.org/acme"),
    ("zen-omni", "Zen Omni", "Zen Labs", "aurora", False, "https://example.org/zen"),
    ("hostile", HOSTILE_NAME, "Evil & <Co>", "evil", True, HOSTILE_LINK),
    ("tiny-lm", "Tiny LM", "Acme", "acme", True, "https://example.org/tiny"),
]


def _ci(rng: np.random.Generator, centre: float, width: float = 4.0) -> tuple[float, float, float]:
    lo = centre - width * (0.5 + rng.random())
    hi = centre + width * (0.5 + rng.random())
    return centre, lo, hi


#: The primary judge's judging cost per (model, setting): every verdict recorded its tokens.
#: The other judges replay stored verdicts ("lenient": no tokens at all) or partly so.
ORACLE_COST = {
    (sid, setting): round(0.002 * (i + 1) + (0.001 if setting == "text_only" else 0), 4)
    for i, (sid, *_rest) in enumerate(MODELS)
    for setting in SETTINGS
}
#: The one model whose responses record the model's own tokens (``gamut generate``'s usage).
MODEL_TOKENS = {"acme-vision-1": (52_000, 9_100)}


def _cost(sid: str, setting: str, judge: str) -> dict[str, object]:
    """The leaderboard's cost columns of one row (see :data:`ORACLE_COST`)."""
    recorded = {"oracle": 1.0, "lenient": 0.0, "partisan": 0.5}[judge]
    full = recorded == 1.0
    tokens_in, tokens_out = MODEL_TOKENS.get(sid, (None, None))
    return {
        "judge_calls": 400 if full else None,
        "judge_tokens_in": 180_000 if full else None,
        "judge_tokens_cached": 120_000 if full else None,
        "judge_tokens_out": 24_000 if full else None,
        "judge_tokens_recorded": recorded,
        "judge_cost_usd": ORACLE_COST[(sid, setting)] if full else np.nan,
        "model_tokens_in": tokens_in,
        "model_tokens_out": tokens_out,
        "model_tokens_recorded": 1.0 if tokens_in is not None else 0.0,
    }


def write_fixture_results(results: Path, *, demo: bool = True, seed: int = 7) -> Path:
    """Write every score table, the provenance and a verdict table into ``results``."""
    rng = np.random.default_rng(seed)
    results.mkdir(parents=True, exist_ok=True)
    base = {sid: 60.0 - 12 * i for i, (sid, *_rest) in enumerate(MODELS)}
    judge_shift = {"oracle": 0.0, "lenient": 5.0, "partisan": -2.0}
    setting_shift = {"multimodal": 0.0, "text_only": 9.0}
    lb_rows, js_rows, dom_rows, pop_rows, ego_rows, kind_rows = [], [], [], [], [], []
    for (sid, name, org, fam, open_w, link), setting, judge in itertools.product(
        MODELS, SETTINGS, JUDGES
    ):
        g, glo, ghi = _ci(rng, base[sid] + judge_shift[judge] + setting_shift[setting])
        incomplete = sid == "tiny-lm" and setting == "text_only"
        shares = rng.dirichlet([6, 2, 2, 1])
        lb_rows.append(
            {
                "submission_id": sid,
                "setting": setting,
                "judge": judge,
                "primary": judge == "oracle",
                "status": "incomplete" if incomplete else "complete",
                "n_questions": 30,
                "n_checks_missing": 5 if incomplete else 0,
                "gamut": g,
                "gamut_lo": glo,
                "gamut_hi": ghi,
                **{
                    f"{t}{s}": v
                    for t in ("ac", "v", "c")
                    for s, v in zip(("", "_lo", "_hi"), _ci(rng, g + rng.normal(0, 5)), strict=True)
                },
                "share_meets": shares[0],
                "share_partial": shares[1],
                "share_missing": shares[2],
                "share_contradicts": shares[3],
                "mean_response_chars": 800.0 + 100 * rng.random(),
                **_cost(sid, setting, judge),
                "rank": np.nan,
                "rank_lo": np.nan,
                "rank_hi": np.nan,
                "tie_group": np.nan,
                "model_name": name,
                "organisation": org,
                "model_family": fam,
                "open_weights": open_w,
                "parameters": "7B" if open_w else None,
                "date": "2026-10-01",
                "link": link,
                "demo": demo,
            }
        )
        js_rows.append(
            {
                "submission_id": sid,
                "setting": setting,
                "judge": judge,
                "gamut": g,
                "gamut_lo": glo,
                "gamut_hi": ghi,
                "rank": np.nan,
            }
        )
        for d in DOMAINS:
            c = _ci(rng, g + rng.normal(0, 8))
            dom_rows.append(
                {
                    "submission_id": sid,
                    "setting": setting,
                    "judge": judge,
                    "domain": d,
                    "n_questions": 10,
                    "gamut": c[0],
                    "gamut_lo": c[1],
                    "gamut_hi": c[2],
                    "ac": c[0],
                    "v": c[0] - 3,
                    "c": c[0] + 2,
                }
            )
        for p in POPULARITY:
            c = _ci(rng, g + {"head": 8, "torso": 0, "tail": -8}[p])
            pop_rows.append(
                {
                    "submission_id": sid,
                    "setting": setting,
                    "judge": judge,
                    "popularity": p,
                    "n_questions": 10,
                    "gamut": c[0],
                    "gamut_lo": c[1],
                    "gamut_hi": c[2],
                    "ac": c[0],
                    "v": c[0],
                    "c": c[0],
                }
            )
        for e in (False, True):
            c = _ci(rng, g - (6 if e else 0))
            ego_rows.append(
                {
                    "submission_id": sid,
                    "setting": setting,
                    "judge": judge,
                    "egocentric": e,
                    "n_questions": 15,
                    "gamut": c[0],
                    "gamut_lo": c[1],
                    "gamut_hi": c[2],
                    "ac": c[0],
                    "v": c[0],
                    "c": c[0],
                }
            )
        for k in KINDS:
            sh = rng.dirichlet([5, 2, 2, 1])
            kind_rows.append(
                {
                    "submission_id": sid,
                    "setting": setting,
                    "judge": judge,
                    "kind": k,
                    "secondary": k == "member",
                    "n_checks": 40,
                    "share_meets": sh[0],
                    "share_partial": sh[1],
                    "share_missing": sh[2],
                    "share_contradicts": sh[3],
                    "score": 100 * (sh[0] + 0.5 * sh[1] - 2 * sh[3]),
                }
            )
    lb = pd.DataFrame(lb_rows)
    for (_setting, _judge), grp in lb[lb["status"] == "complete"].groupby(["setting", "judge"]):
        order = grp.sort_values("gamut", ascending=False).index
        for r, idx in enumerate(order, 1):
            lb.loc[idx, ["rank", "rank_lo", "rank_hi", "tie_group"]] = [
                r,
                max(1, r - 1),
                min(len(order), r + 1),
                r,
            ]
    # the score tables store ranks as nullable integers (NA for incomplete rows)
    for col in ("rank", "rank_lo", "rank_hi", "tie_group"):
        lb[col] = lb[col].astype("Int64")
    for col in ("judge_calls", "judge_tokens_in", "judge_tokens_cached", "judge_tokens_out"):
        lb[col] = lb[col].astype("Int64")
    for col in ("model_tokens_in", "model_tokens_out"):
        lb[col] = lb[col].astype("Int64")
    js = pd.DataFrame(js_rows)
    js["rank"] = js.groupby(["setting", "judge"])["gamut"].rank(ascending=False)
    lb.to_parquet(results / "leaderboard.parquet")
    js.to_parquet(results / "judge_scores.parquet")
    dom = pd.DataFrame(dom_rows)
    dom["rank"] = (
        dom.groupby(["setting", "judge", "domain"])["gamut"].rank(ascending=False).astype("Int64")
    )
    dom["tie_group"] = ((dom["rank"] + 1) // 2).astype("Int64")
    dom.to_parquet(results / "by_domain.parquet")
    _question_tables(results, lb, rng)
    pd.DataFrame(pop_rows).to_parquet(results / "by_popularity.parquet")
    pd.DataFrame(ego_rows).to_parquet(results / "by_egocentric.parquet")
    pd.DataFrame(kind_rows).to_parquet(results / "by_kind.parquet")

    mod_rows = []
    for sid, *_ in MODELS:
        for judge in JUDGES:
            sel = lb[(lb.submission_id == sid) & (lb.judge == judge)].set_index("setting")
            mm, to = sel.loc["multimodal"], sel.loc["text_only"]
            gap = float(to.gamut - mm.gamut)
            mod_rows.append(
                {
                    "submission_id": sid,
                    "judge": judge,
                    "multimodal": mm.gamut,
                    "multimodal_lo": mm.gamut_lo,
                    "multimodal_hi": mm.gamut_hi,
                    "text_only": to.gamut,
                    "text_only_lo": to.gamut_lo,
                    "text_only_hi": to.gamut_hi,
                    "gap": gap,
                    "gap_lo": gap - 3,
                    "gap_hi": gap + 3,
                }
            )
    mod = pd.DataFrame(mod_rows)
    mod.to_parquet(results / "modality.parquet")
    summary = {}
    for judge, grp in mod.groupby("judge"):
        summary[str(judge)] = {
            "mean_gap": float(grp.gap.mean()),
            "sd_gap": float(grp.gap.std()),
            "min_gap": float(grp.gap.min()),
            "max_gap": float(grp.gap.max()),
            "corr_gap_mean": -0.2,
            "kendall_tau": 0.67,
            "n_models": len(grp),
        }
    (results / "modality_summary.json").write_text(json.dumps(summary), encoding="utf-8")

    tau, kappa, kind_kappa, len_rows, self_rows = [], [], [], [], []
    for setting in SETTINGS:
        for p, (a, b) in enumerate(itertools.combinations(JUDGES, 2)):
            for k in KINDS:
                none = setting == "text_only" and k == "sequence"
                kind_kappa.append(
                    {
                        "setting": setting,
                        "judge_a": a,
                        "judge_b": b,
                        "kind": k,
                        "secondary": k == "member",
                        "kappa": np.nan if none else KIND_KAPPA[k] - 0.05 * p,
                        "kappa_lo": np.nan if none else KIND_KAPPA[k] - 0.05 * p - 0.08,
                        "kappa_hi": np.nan if none else KIND_KAPPA[k] - 0.05 * p + 0.07,
                        "n_checks": 0 if none else 160,
                        "agreement": np.nan if none else 0.9 - 0.05 * p,
                        "agreement_lo": np.nan if none else 0.86 - 0.05 * p,
                        "agreement_hi": np.nan if none else 0.93 - 0.05 * p,
                    }
                )
            tau.append(
                {
                    "setting": setting,
                    "judge_a": a,
                    "judge_b": b,
                    "tau_b": 0.8,
                    "max_abs_diff": 6.5,
                    "max_diff_submission": "zen-omni",
                }
            )
            kappa.append(
                {
                    "setting": setting,
                    "judge_a": a,
                    "judge_b": b,
                    "kappa": 0.71,
                    "kappa_lo": 0.66,
                    "kappa_hi": 0.75,
                    "n_checks": 1200,
                    "agreement": 0.83,
                    "agreement_lo": 0.8,
                    "agreement_hi": 0.86,
                }
            )
        for judge in JUDGES:
            off = judge_shift[judge]
            len_rows.append(
                {
                    "setting": setting,
                    "judge": judge,
                    "offset": off,
                    "offset_lo": off - 1,
                    "offset_hi": off + 1,
                }
            )
            self_rows.append(
                {
                    "setting": setting,
                    "judge": judge,
                    "family": "aurora" if judge == "partisan" else judge,
                    "own_score": 50.0 if judge == "partisan" else np.nan,
                    "others_score_of_own": 45.0 if judge == "partisan" else np.nan,
                    "own_minus_others": 5.0 if judge == "partisan" else np.nan,
                    "other_families_diff": -1.0,
                    "self_preference": 6.0 if judge == "partisan" else np.nan,
                    "self_preference_lo": 2.5 if judge == "partisan" else np.nan,
                    "self_preference_hi": 9.5 if judge == "partisan" else np.nan,
                    "self_preference_primary": 7.5 if judge == "partisan" else np.nan,
                    "self_preference_primary_lo": 3.0 if judge == "partisan" else np.nan,
                    "self_preference_primary_hi": 12.0 if judge == "partisan" else np.nan,
                }
            )
    pd.DataFrame(tau).to_parquet(results / "judge_tau.parquet")
    pd.DataFrame(kappa).to_parquet(results / "judge_kappa.parquet")
    pd.DataFrame(kind_kappa).to_parquet(results / "judge_kappa_by_kind.parquet")
    pd.DataFrame(len_rows).to_parquet(results / "judge_leniency.parquet")
    pd.DataFrame(self_rows).to_parquet(results / "judge_self_preference.parquet")
    pd.DataFrame(
        {
            "submission_id": ["tiny-lm"],
            "setting": ["text_only"],
            "judge": ["oracle"],
            "n_expected": [100],
            "n_judged": [95],
            "n_missing": [5],
        }
    ).to_parquet(results / "incomplete.parquet")

    verdicts = []
    for (sid, *_), setting, judge in itertools.product(MODELS, SETTINGS, JUDGES):
        for q in range(3):
            for j, text in enumerate(SECRET_CHECK_TEXTS):
                verdicts.append(
                    {
                        "submission_id": sid,
                        "setting": setting,
                        "judge": judge,
                        "question_id": f"food-{q:04d}",
                        "check_id": f"I{j + 1}",
                        "kind": "fact",
                        "tier": "answer_critical",
                        "secondary": False,
                        "verdict": ("meets", "missing", "contradicts")[j],
                        "rationale": SECRET_RATIONALE,
                        "check_text": text,
                    }
                )
    vdf = pd.DataFrame(verdicts)
    for c in ("submission_id", "setting", "judge", "kind", "tier", "verdict"):
        vdf[c] = vdf[c].astype("category")
    vdf.to_parquet(results / "verdicts.parquet")
    prov = {
        "rubric_version": "rv-test-0001",
        "rubrics_public": True,
        "judges": {
            j: {"provider": "replay", "model": f"demo-{j}", "prompt_version": "v1", "family": j}
            for j in JUDGES
        },
        "primary_judge": "oracle",
        "scoring": {"partial_credit": 0.5},
        "engine_version": "0.1.0",
        "generated_at": "2026-11-29T21:00:00Z",
        "demo": demo,
    }
    (results / "provenance.json").write_text(json.dumps(prov), encoding="utf-8")
    return results


def _question_tables(results: Path, lb: pd.DataFrame, rng: np.random.Generator) -> None:
    """``question_scores`` and ``pairwise`` for the complete rows of the leaderboard."""
    qs_rows, pw_rows = [], []
    complete = lb[lb["status"] == "complete"]
    for r in complete.itertuples():
        for q in QUESTIONS:
            tiers = np.clip(r.gamut / 100 + rng.normal(0, 0.2, 3), -1, 1)
            qs_rows.append(
                {
                    "submission_id": r.submission_id,
                    "setting": r.setting,
                    "judge": r.judge,
                    "question_id": q["question_id"],
                    "domain": q["domain"],
                    "popularity": q["popularity"],
                    "egocentric": q["egocentric"],
                    "ac_raw": tiers[0],
                    "v_raw": tiers[1],
                    "c_raw": np.nan if q["question_id"].endswith("2") else tiers[2],
                    "gamut_raw": float(tiers[:2].mean()),
                    "n_meets": 1,
                    "n_partial": 0,
                    "n_missing": 1,
                    "n_contradicts": 1,
                    "response_chars": 40,
                }
            )
    pd.DataFrame(qs_rows).to_parquet(results / "question_scores.parquet")
    for (setting, judge), grp in complete.groupby(["setting", "judge"]):
        for a, b in itertools.permutations(grp.itertuples(), 2):
            diff = float(a.gamut - b.gamut)
            pw_rows.append(
                {
                    "setting": setting,
                    "judge": judge,
                    "submission_a": a.submission_id,
                    "submission_b": b.submission_id,
                    "diff": diff,
                    "diff_lo": diff - 4,
                    "diff_hi": diff + 4,
                    "significant": abs(diff) > 4,
                    "p_adjusted": 0.01 if abs(diff) > 4 else 0.5,
                    "n_questions": len(QUESTIONS),
                    "n_a_higher": 2 if diff > 0 else 1,
                    "n_b_higher": 1 if diff > 0 else 2,
                    "n_equal": 0,
                }
            )
    pd.DataFrame(pw_rows).to_parquet(results / "pairwise.parquet")


#: The fixture's public questions (their ids match the verdict table's).
QUESTIONS = [
    {
        "question_id": f"food-{q:04d}",
        "image_id": f"img-food-{q:04d}",
        "image": (f"images/img-food-{q:04d}.png", None, "https://example.org/dish.png")[q],
        "domain": "food",
        "popularity": POPULARITY[q],
        "egocentric": q != 1,
        "question": f"What is this dish number {q} and how is it made?",
        "text_only_question": f"What is fixture dish {q} and how is it made?",
    }
    for q in range(3)
]
HOSTILE_RESPONSE = "<script>alert(1)</script><img src=x onerror=alert(1)> is my answer."
#: A 1 x 1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201e2a7b4b10000000049454e44ae426082"
)


def write_fixture_inputs(root: Path) -> None:
    """The questions file, its image and every fixture model's responses under ``root``."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "images" / "img-food-0000.png").write_bytes(PNG)
    (root / "questions.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8"
    )
    for sid, *_ in MODELS:
        folder = root / "submissions" / sid
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "submission.yaml").write_text(f"model_name: {sid}\n", encoding="utf-8")
        for setting in SETTINGS:
            lines = []
            for i, q in enumerate(QUESTIONS):
                text = HOSTILE_RESPONSE if sid == "hostile" else f"Answer {i} by {sid} ({setting})."
                lines.append(json.dumps({"question_id": q["question_id"], "response": text}))
            (folder / f"{setting}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def publish_fixture_site_data(cfg: Path) -> Path:
    """Publish the site data of the fixture project ``cfg``, as `gamut score` does; returns the
    published folder."""
    from gamut.config import load_config
    from gamut.project import Project

    spec = Project(load_config(cfg)).site_spec()
    assert spec.questions is not None and spec.submissions is not None
    publish_site_data(spec.results, spec.questions, spec.submissions, spec.rubrics_public)
    [folder] = (spec.results / PUBLISHED).glob("site.*")
    return folder


def write_fixture_config(root: Path, *, rubrics_public: bool, demo_notice: bool = True) -> Path:
    """A gamut.toml in ``root`` whose results folder holds the fixture tables, beside the
    questions and responses they were computed from."""
    write_fixture_results(root / "results")
    write_fixture_inputs(root)
    cfg = root / "gamut.toml"
    cfg.write_text(
        f"""
[benchmark]
questions = "questions.jsonl"
rubrics = "rubrics"
rubrics_public = {str(rubrics_public).lower()}

[store]
results = "results"

[judges.oracle]
provider = "replay"
model = "demo-oracle"
family = "oracle"
primary = true
replay = "verdicts/oracle.parquet"

[site]
title = "Fixture leaderboard"
out = "site"
demo_notice = {str(demo_notice).lower()}
""",
        encoding="utf-8",
    )
    return cfg
