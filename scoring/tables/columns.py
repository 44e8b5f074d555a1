"""The column dictionary of every published table: each column's type and meaning, as the
downloads page and the Hugging Face card print them and the published files are cast to (an
all-null column is typed, not ``null``). A column with no entry is an error (:func:`undocumented`).
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from scoring.compiler import CheckKind

_S, _I, _F, _B = "string", "int64", "double", "bool"


def _ends(name: str, lower: str, upper: str = "upper end") -> dict[str, tuple[str, str]]:
    """The entries of ``name``'s interval ends, ``name_lo`` and ``name_hi``."""
    return {f"{name}_lo": (_F, lower), f"{name}_hi": (_F, upper)}


_GROUP = {
    "submission_id": (_S, "the submission (its folder name under submissions/)"),
    "setting": (_S, "multimodal (image + question) or text_only (entity named, no image)"),
    "judge": (_S, "the judge's name in the configuration (see provenance.json for its model)"),
}
_SETTING_JUDGE = {k: _GROUP[k] for k in ("setting", "judge")}
_CI = "95% bootstrap confidence interval over questions"
_SCORE = {
    "gamut": (_F, "Gamut score: 100 x the mean question score, from -100 to 100"),
    **_ends("gamut", f"lower end of the {_CI}", f"upper end of the {_CI}"),
    "ac": (_F, "answer-critical tier score (100 x mean over the questions that have the tier)"),
    "v": (_F, "valuable tier score (same scale)"),
    "c": (_F, "context tier score (same scale)"),
}
_SHARES = {
    "share_meets": (_F, "share of checks judged meets, in [0, 1]"),
    "share_partial": (_F, "share judged partially_meets"),
    "share_missing": (_F, "share judged missing"),
    "share_contradicts": (_F, "share judged contradicts"),
}
_PRIMARY = {"primary": (_B, "true for the primary judge, which ranks the leaderboard")}
#: Every check kind, as the column meanings list them.
KINDS = ", ".join(CheckKind)
_KIND = {
    "kind": (_S, f"check kind ({KINDS})"),
    "secondary": (_B, "true for extra-credit checks"),
}
_PAIR = {
    "setting": _GROUP["setting"],
    "judge_a": (_S, "the first judge of the pair"),
    "judge_b": (_S, "the second judge of the pair"),
}

#: The leaderboard's PPI columns (docs/contract.md §11).
PPI_COLUMNS = {
    "gamut_ppi": (
        _F,
        "Gamut score corrected by the human audit (prediction-powered inference): 100 x (mean "
        "judge question score over all questions + mean of human minus judge question score "
        "over the audited questions); empty when fewer than 2 questions are audited",
    ),
    "gamut_ppi_lo": (
        _F,
        "lower end of its 95% interval: 100 x (theta - 1.96 sqrt(var(judge scores) / N + "
        "var(human - judge) / n)), sample variances",
    ),
    "gamut_ppi_hi": (_F, "upper end of that interval"),
    "audited_questions": (
        _I,
        "questions whose response has a final human verdict on every check (n above)",
    ),
    "rank_ppi": (_I, "rank within setting and judge under gamut_ppi"),
    "tie_group_ppi": (
        _I,
        "tie group under gamut_ppi (the leaderboard's bootstrap resamples applied to both terms)",
    ),
}
#: The leaderboard's stamp columns: what produced each row (:mod:`scoring.tables.stamps`).
STAMP_COLUMNS = {
    "benchmark_version": (
        _S,
        "the question set's release version (benchmark_version in the config's [benchmark] "
        "table, from the release's release.json); empty when the set is not versioned",
    ),
    "rubric_version": (
        _S,
        "digest of the rubric set this row's verdicts were judged under (as the verdict table "
        "records it; empty when it records none)",
    ),
    "judge_model": (_S, "the model the judge was configured with when it judged this row"),
    "judge_snapshot": (
        _S,
        "the model snapshot(s) the judge's provider reported for this row's verdicts, comma "
        "separated; empty when it reported none",
    ),
    "prompt_version": (_S, "the judge prompt template's version this row was judged with"),
    "prompt_digest": (_S, "content digest of that template (scoring/prompts/judge_<version>.txt)"),
    "engine_version": (_S, "version of the GAMUT engine that scored the row"),
    "stale": (
        _B,
        "true when the row was judged under another rubric version, judge model, prompt "
        "version or prompt template than the current ones (rejudge with `gamut judge`); empty "
        "when the verdict table records no versions",
    ),
    "stale_reason": (_S, "what changed since the row was judged; empty when not stale"),
}
#: The fewest (response, check) pairs compared for a check kind's kappa (judge against judge or
#: against people); a kind with fewer gets NaN kappa and no intervals (its agreement is still
#: given). With fewer, kappa's standard error at typical agreement (0.85 observed, 0.4 by chance)
#: is above 0.1, as large as the differences between kinds it is read for. The figures over all
#: checks have no such floor.
MIN_KIND_CHECKS = 30
_AGREEMENT = {
    "n_checks": (_I, "(response, check) pairs that both sides labelled"),
    "agreement": (_F, "share of those with the same verdict"),
    "kappa": (_F, "Cohen's kappa over the four verdicts; empty for a kind with too few checks"),
    "kappa_linear": (
        _F,
        "Cohen's kappa with linear weights on the ordered scale meets, partially meets, missing, "
        "contradicts (a near miss counts as partial agreement); empty for a kind with too few",
    ),
    "macro_f1": (_F, "mean F1 over the verdicts that occur in either labelling"),
}
#: Each agreement figure's 95% interval: a bootstrap over questions (every check of a drawn
#: question together, the scores' resamples), empty below the floor.
_INTERVALS = {
    f"{name}_{end}": (_F, f"{'lower' if end == 'lo' else 'upper'} end of {name}'s 95% interval")
    for name in ("agreement", "kappa", "kappa_linear", "macro_f1")
    for end in ("lo", "hi")
}
#: The judge-against-judge kappa columns.
_KAPPA = {
    "kappa": (_F, "Cohen's kappa over every check both judges judged"),
    **{k: _INTERVALS[k] for k in ("kappa_lo", "kappa_hi")},
    "n_checks": (_I, "checks both judges judged"),
    "agreement": (_F, "share of those checks with the same verdict"),
    **{k: _INTERVALS[k] for k in ("agreement_lo", "agreement_hi")},
}
_AUDIT_KIND = (_S, f"check kind ({KINDS}), or all")
_SHORT = {"meets": "meets", "partial": "partially_meets", "missing": "missing"}
_SHORT["contradicts"] = "contradicts"


#: table -> column -> (Arrow type name, meaning).
TABLES: dict[str, dict[str, tuple[str, str]]] = {
    "questions": {
        "question_id": (_S, "the question; the key of every per-question row"),
        "image_id": (_S, "the image the question is about"),
        "domain": (_S, "the question's domain (plants, food, ...)"),
        "popularity": (_S, "how well known the entity is: head, torso or tail"),
        "egocentric": (_B, "true when the photo was taken with smart glasses"),
        "question": (_S, "the multimodal question (refers to the entity through the image)"),
        "text_only_question": (_S, "the text-only question (names the entity)"),
    },
    "responses": {
        "submission_id": _GROUP["submission_id"],
        "setting": _GROUP["setting"],
        "question_id": (_S, "the question"),
        "response": (_S, "the model's response, as submitted"),
        "length": (_I, "the response's length in characters (Unicode code points)"),
    },
    "question_scores": {
        **_GROUP,
        "question_id": (_S, "the question"),
        "domain": (_S, "the question's domain"),
        "popularity": (_S, "head, torso or tail"),
        "egocentric": (_B, "true for smart-glasses photos"),
        "ac_raw": (
            _F,
            "answer-critical tier score of the question, in [-1, 1]; empty when "
            "the question has none (published scores are 100 x the mean)",
        ),
        "v_raw": (_F, "valuable tier score, in [-1, 1]; empty when the question has none"),
        "c_raw": (_F, "context tier score, in [-1, 1]; empty when the question has none"),
        "gamut_raw": (
            _F,
            "the question's Gamut score in [-1, 1] (tier weights 0.6 / 0.3 / 0.1, "
            "renormalised over the tiers present)",
        ),
        "n_meets": (_I, "checks judged meets"),
        "n_partial": (_I, "checks judged partially_meets"),
        "n_missing": (_I, "checks judged missing"),
        "n_contradicts": (_I, "checks judged contradicts"),
        "response_chars": (_I, "length of the response in characters"),
    },
    "leaderboard": {
        **_GROUP,
        **_PRIMARY,
        "status": (_S, "complete, or incomplete when some checks have no verdict (not ranked)"),
        "n_questions": (_I, "questions scored"),
        "n_checks_missing": (_I, "checks without a verdict"),
        "n_checks": (_I, "checks judged"),
        **_SCORE,
        "ac_lo": (_F, f"lower end of the answer-critical score's {_CI}"),
        "ac_hi": (_F, "upper end of that interval"),
        **_ends("v", f"lower end of the valuable score's {_CI}", "upper end of that interval"),
        **_ends("c", f"lower end of the context score's {_CI}", "upper end of that interval"),
        **_SHARES,
        "mean_response_chars": (_F, "mean response length in characters"),
        "judge_calls": (
            _I,
            "calls to the judge that gave this row's verdicts, re-asks included (empty when "
            "judge_tokens_recorded is below 1)",
        ),
        "judge_tokens_in": (
            _I,
            "input tokens of those calls, cached ones included, as the provider reported them "
            "(empty when judge_tokens_recorded is below 1)",
        ),
        "judge_tokens_cached": (_I, "of judge_tokens_in, those the provider served from cache"),
        "judge_tokens_out": (_I, "output tokens of those calls"),
        "judge_tokens_recorded": (
            _F,
            "share of this row's verdicts that recorded their tokens, in [0, 1]: verdicts "
            "replayed from a file or given by the demo's offline matcher were obtained by no "
            "call and record none (empty: no verdict from a call, or no usage table)",
        ),
        "judge_cost_usd": (
            _F,
            "USD of those tokens at the judge's configured prices (direct calls at its direct "
            "prices, provider batches and imported batch files at its batch prices); empty when "
            "a price is not configured or judge_tokens_recorded is below 1. A verdict shared by "
            "identical responses counts in each row that uses it; failed calls count in none",
        ),
        "model_tokens_in": (
            _I,
            "the model's own input tokens over this setting's responses, as its provider "
            "reported them to gamut generate (the response lines' usage); empty unless every "
            "response records them",
        ),
        "model_tokens_out": (_I, "the model's own output tokens over those responses"),
        "model_tokens_recorded": (
            _F,
            "share of this setting's responses whose line records the model's token counts, "
            "in [0, 1]",
        ),
        "rank": (_I, "rank within setting and judge (complete rows only)"),
        "rank_lo": (_I, "best rank in the bootstrap resamples (95%)"),
        "rank_hi": (_I, "worst rank in the bootstrap resamples (95%)"),
        "tie_group": (_I, "1 + the number of models significantly better (Holm-adjusted)"),
        "text_only": (_F, "the same model's text-only Gamut score (multimodal rows)"),
        "gap": (_F, "text-only minus multimodal score: the visual-identification gap"),
        "gap_lo": (_F, "lower end of the gap's paired bootstrap 95% interval"),
        "gap_hi": (_F, "upper end of that interval"),
        "model_name": (_S, "model name from submission.yaml"),
        "organisation": (_S, "who built the model"),
        "model_family": (_S, "model family (for judge self-preference)"),
        "open_weights": (_B, "whether the weights are publicly downloadable"),
        "parameters": (_S, "parameter count as given (e.g. 70B), empty if unknown"),
        "date": (_S, "when the responses were produced (YYYY-MM-DD)"),
        "link": (_S, "model card, paper or product page"),
        "demo": (_B, "true for the synthetic demo models"),
        "production_decoding": (_S, "decoding settings used to produce the responses"),
        "production_tools": (_B, "whether the model could call tools"),
        "production_web_access": (_B, "whether the model could search or browse the web"),
        "production_system_prompt": (_S, "system prompt text or its hash, if given"),
        "production_notes": (_S, "anything else about how the responses were produced"),
        "training_datasets": (
            _S,
            "datasets the model was trained on that may overlap the benchmark, '; '-separated "
            "(submission.yaml training_data); empty when not declared",
        ),
        "contamination": (
            _S,
            "declared contamination: none_known, possible or confirmed; empty when not declared",
        ),
        "training_notes": (_S, "how the overlap was checked, or what is known of it"),
        **PPI_COLUMNS,
        **STAMP_COLUMNS,
    },
    **{
        f"by_{group}": {
            **_GROUP,
            group: (kind, meaning),
            "n_questions": (_I, "questions in the group"),
            "ci_coverage_ceiling": (
                _F,
                "the most the interval can cover with this many questions, 1 - 2^(1 - "
                "n_questions): a bootstrap interval stays within the range of the question scores",
            ),
            **_SCORE,
            "rank": (_I, "rank within the group, setting and judge"),
            "tie_group": (_I, "1 + the number of models significantly better (Holm-adjusted)"),
        }
        for group, kind, meaning in (
            ("domain", _S, "the domain"),
            ("popularity", _S, "head, torso or tail"),
            ("egocentric", _B, "true for smart-glasses photos"),
        )
    },
    "by_kind": {
        **_GROUP,
        **_KIND,
        "n_checks": (_I, "checks of this kind judged"),
        **_SHARES,
        "score": (_F, "the tier formula on these checks' pooled counts, x100 (-100 to 100)"),
    },
    "modality": {
        "submission_id": _GROUP["submission_id"],
        "judge": _GROUP["judge"],
        **_PRIMARY,
        "multimodal": (_F, "multimodal Gamut score"),
        **_ends("multimodal", f"lower end of its {_CI}"),
        "text_only": (_F, "text-only Gamut score"),
        **_ends("text_only", f"lower end of its {_CI}"),
        "gap": (
            _F,
            "text_only minus multimodal (positive: the model does better when told the entity)",
        ),
        **_ends("gap", "lower end of the gap's paired bootstrap 95% interval"),
    },
    "modality_summary": {
        "judge": _GROUP["judge"],
        **_PRIMARY,
        "n_models": (_I, "models with both settings"),
        "mean_gap": (_F, "mean gap over models"),
        "sd_gap": (_F, "standard deviation of the gap"),
        "min_gap": (_F, "smallest gap"),
        "max_gap": (_F, "largest gap"),
        "corr_gap_mean": (
            _F,
            "Pearson correlation of the gap and the mean of the multimodal and text-only scores "
            "(not the multimodal score alone, which biases it negative by construction)",
        ),
        "kendall_tau": (_F, "Kendall tau between the multimodal and text-only orderings"),
    },
    "judge_scores": {
        **_GROUP,
        **_PRIMARY,
        "gamut": _SCORE["gamut"],
        "gamut_lo": _SCORE["gamut_lo"],
        "gamut_hi": _SCORE["gamut_hi"],
        "rank": (_I, "rank under this judge"),
    },
    "judge_tau": {
        **_PAIR,
        "n_models": (_I, "models both judges scored"),
        "tau_b": (_F, "Kendall tau-b between the two judges' rankings"),
        "max_abs_diff": (_F, "largest absolute per-model score difference"),
        "max_diff_submission": (_S, "the submission with that difference"),
    },
    "judge_leniency": {
        **_SETTING_JUDGE,
        **_PRIMARY,
        "n_models": (_I, "models in the comparison"),
        "offset": (_F, "mean paired score difference, this judge minus the primary judge"),
        **_ends("offset", "lower end of its 95% interval"),
    },
    "judge_self_preference": {
        **_SETTING_JUDGE,
        "family": (_S, "the judge's model family"),
        "n_own": (_I, "models of the judge's family"),
        "n_other": (_I, "models of other families"),
        "own_score": (_F, "the judge's mean score of its own family's models"),
        "others_score_of_own": (_F, "the mean of every other judge's score of those models"),
        "own_minus_others": (_F, "own_score minus others_score_of_own"),
        "other_families_diff": (_F, "the same difference over the other families' models"),
        "self_preference": (_F, "own_minus_others minus other_families_diff"),
        **_ends("self_preference", "lower end of its 95% interval"),
        "self_preference_primary": (
            _F,
            "the same self-preference against the primary judge alone instead of the mean of "
            "every other judge (empty for the primary judge)",
        ),
        **_ends("self_preference_primary", "lower end of its 95% interval"),
    },
    "judge_kappa": {**_PAIR, **_KAPPA},
    "judge_kappa_by_kind": {
        **_PAIR,
        **_KIND,
        **_KAPPA,  # the same columns, these two of the kind's checks (in the same places)
        "kappa": (
            _F,
            "Cohen's kappa over the checks of this kind both judges judged; empty when "
            f"fewer than {MIN_KIND_CHECKS} were",
        ),
        "n_checks": (_I, "checks of this kind both judges judged (one per response and check)"),
    },
    "pairwise": {
        **_SETTING_JUDGE,
        "submission_a": (_S, "the first model of the pair"),
        "submission_b": (_S, "the second model of the pair"),
        "diff": (_F, "Gamut score of a minus that of b"),
        **_ends("diff", "lower end of the paired bootstrap 95% interval of the difference"),
        "significant": (_B, "true when p_adjusted is below 0.05"),
        "p_adjusted": (
            _F,
            "p-value of the paired t test (difference over its bootstrap standard error), "
            "Holm-adjusted over every pair of this judge's rankings in all settings",
        ),
        "n_questions": (_I, "questions both models answered"),
        "n_a_higher": (_I, "questions where a scored higher"),
        "n_b_higher": (_I, "questions where b scored higher"),
        "n_equal": (_I, "questions where both scored the same"),
    },
    "audit_incomplete": {
        "setting": _GROUP["setting"],
        "submission_id": _GROUP["submission_id"],
        "question_id": (_S, "a question of that response with some human labels"),
        "n_checks": (_I, "the question's checks"),
        "n_final": (
            _I,
            "checks with a final human verdict (fewer than n_checks: not labelled in full, or a "
            "disagreement not adjudicated); the question is left out of the correction",
        ),
    },
    "rank_sensitivity": {
        "setting": _GROUP["setting"],
        "submission_id": _GROUP["submission_id"],
        "judge": _GROUP["judge"],
        **_PRIMARY,
        "compared": (_B, "the model is complete under every judge and ranked here"),
        "rank": (
            _I,
            "the model's rank under this judge among the models complete under every judge "
            "(empty when not compared)",
        ),
        "primary_rank": (_I, "its rank under the primary judge among the same models"),
        "rank_change": (_I, "rank minus primary_rank (positive: placed lower by this judge)"),
        "max_rank_change": (_I, "the largest difference between its ranks under any two judges"),
    },
    "judge_family_matrix": {
        **_SETTING_JUDGE,
        "judge_family": (_S, "the judge's model family"),
        "model_family": (_S, "the family of the models scored (lower case)"),
        "n_models": (_I, "models of that family complete under every judge"),
        "judge_score": (_F, "the judge's mean Gamut score of those models"),
        "others_score": (_F, "the other judges' mean Gamut score of the same models"),
        "difference": (
            _F,
            "judge_score minus others_score: on the judge's own family, its self-preference",
        ),
    },
    "min_detectable_difference": {
        **_SETTING_JUDGE,
        "board": (_S, "all (every question) or domain:<name>"),
        "n_questions": (_I, "questions on the board"),
        "n_pairs": (_I, "pairs of models neighbouring in this judge's ranking"),
        "sd_paired": (
            _F,
            "median over those pairs of the sample standard deviation of their paired "
            "question-score differences on the board (question scale, -2 to 2)",
        ),
        "mdd": (
            _F,
            "smallest Gamut-score difference two models can have that the board's questions "
            "detect with 80% power at alpha 0.05 (paired t test): 100 (t_0.975 + t_0.8) "
            "sd_paired / sqrt(n_questions), Student's t with n_questions - 1 degrees of freedom",
        ),
    },
    "judge_human": {
        **_SETTING_JUDGE,
        "kind": _AUDIT_KIND,
        **_AGREEMENT,
        **_INTERVALS,
        "leniency": (
            _F,
            "the judge's mean verdict value minus the humans', on the scale meets 1, partially "
            "lambda, missing 0, contradicts mu (positive: the judge is more lenient)",
        ),
        **{
            f"judge_{j}_human_{h}": (
                _I,
                f"checks the judge called {_SHORT[j]} and the final human verdict {_SHORT[h]}",
            )
            for j in _SHORT
            for h in _SHORT
        },
    },
    "judge_annotator": {
        **_SETTING_JUDGE,
        "kind": _AUDIT_KIND,
        **_AGREEMENT,
        **_INTERVALS,
        "n_checks": (_I, "pairs of the judge's verdict and one annotator's label on a check"),
        "leniency": (_F, "the judge's mean verdict value minus the annotators'"),
    },
    "human_human": {
        "setting": _GROUP["setting"],
        "kind": _AUDIT_KIND,
        **_AGREEMENT,
        **_INTERVALS,
        "n_checks": (_I, "pairs of two annotators' labels on one (response, check)"),
        "leniency": (
            _F,
            "the first annotator's (lower id) mean verdict value minus the second's, same scale",
        ),
        **{
            f"first_{a}_second_{b}": (
                _I,
                f"pairs where the first annotator said {_SHORT[a]} and the second {_SHORT[b]}",
            )
            for a in _SHORT
            for b in _SHORT
        },
    },
    "judge_drift": {
        "judge": _GROUP["judge"],
        "old_snapshot": (_S, "the first model snapshot the provider reported for the judge"),
        "new_snapshot": (_S, "the latest one"),
        "n_pairs": (_I, "calibration pairs both snapshots judged"),
        "agreement": (_F, "share of those pairs with the same verdict"),
        "kappa": (_F, "Cohen's kappa of the two snapshots' verdicts"),
        "old_score": (_F, "mean check score (x100, tier formula credit) of the old snapshot"),
        "new_score": (_F, "the same of the new snapshot"),
        "score_diff": (_F, "new_score minus old_score"),
    },
    "incomplete": {
        **_GROUP,
        "n_expected": (_I, "checks that need a verdict"),
        "n_judged": (_I, "checks with a verdict"),
        "n_missing": (_I, "checks without one"),
        "n_questions_affected": (_I, "questions with at least one missing verdict"),
    },
    "verdicts": {
        **_GROUP,
        "judge_id": (_S, "the judge's identity: provider:model@prompt-version"),
        "question_id": (_S, "the question"),
        "domain": (_S, "the question's domain"),
        "check_id": (_S, "the check, unique only within its question (I1, I3.b1, I4.seq, ...)"),
        "kind": _KIND["kind"],
        "tier": (_S, "answer_critical, valuable or context"),
        "secondary": (
            _B,
            "true for extra-credit checks: flexible-list members and coverage "
            "thresholds, optional steps, the full-ordering sequence",
        ),
        "verdict": (_S, "meets, partially_meets, missing or contradicts"),
        "rationale": (_S, "the judge's one- or two-sentence reason (public rubrics only)"),
        "check_text": (_S, "the check's text (public rubrics only)"),
    },
}

VERDICT_KEY_NOTE = (
    "One row per (submission_id, setting, judge, question_id, check_id); check_id is unique "
    "only within its question, so join on question_id and check_id together."
)
SECONDARY_NOTE = (
    "Secondary (extra-credit) checks count exactly like the other checks of the tier they are "
    "compiled into, which is one level below their item's (answer-critical to valuable, valuable "
    "to context, context stays context): in the tier formula a met one adds to M, a missing one "
    "to S, a contradicted one costs like any contradiction. They carry no separate weight and no "
    "bonus; their lower tier is what keeps them from outweighing the required content."
)


def undocumented(table: str, columns: Iterable[str]) -> list[str]:
    """The columns of ``table`` that have no dictionary entry (all of them for an unknown table)."""
    known = TABLES.get(table, {})
    return [c for c in columns if c not in known]


def dictionary(table: str, columns: Iterable[str]) -> dict[str, str]:
    """Column -> meaning for the given columns of ``table``, in order (KeyError: no entry)."""
    cols = list(columns)
    missing = undocumented(table, cols)
    if missing:
        raise KeyError(f"{table}: no dictionary entry for {', '.join(missing)}")
    return {c: TABLES[table][c][1] for c in cols}


def arrow_type(table: str, column: str) -> pa.DataType:
    """The published Arrow type of a documented column."""
    return pa.type_for_alias(TABLES[table][column][0])
