"""The leaderboard in Every Eval Ever's format (``eval.schema.json`` of ``every-eval-ever``
0.3.0): one document per submission, one line each of ``every_eval_ever.jsonl``.

Each (setting, judge) row of the leaderboard gives a result, the Gamut score with its bootstrap
interval over questions, and, where the human audit corrects it, a second result, the corrected
(prediction-powered) score with its interval. The judge of each result is in its
``llm_scoring.judges``; the rubrics are held or public, the prompt is named, never quoted.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from pathlib import Path
from typing import Any, cast

import pandas as pd

from scoring.numbers import number

SCHEMA_VERSION = "0.3.0"
FILE = "every_eval_ever.jsonl"
_LEVEL = 0.95


def _number(value: Any) -> float | None:
    """A finite float, or None for a missing or NaN value."""
    out = number(value)
    return out if out is not None and math.isfinite(out) else None


def _strings(pairs: dict[str, Any]) -> dict[str, str]:
    """The schema's ``additional_details``: every value a string, missing ones left out."""
    out: dict[str, str] = {}
    for key, raw in pairs.items():
        value = raw.item() if hasattr(raw, "item") else raw  # numpy scalars as Python's
        if value is None or (not isinstance(value, str) and bool(pd.isna(value))):
            continue
        if isinstance(value, bool):
            out[key] = str(value).lower()
        elif isinstance(value, float) and value.is_integer():
            out[key] = str(int(value))
        else:
            out[key] = str(value)
    return out


def _judge(name: str, j: dict[str, Any]) -> dict[str, Any]:
    provider, model = str(j.get("provider")), str(j.get("model"))
    info = {
        "name": model,
        "id": f"{provider}/{model}",
        "inference_platform": provider,
        "additional_details": {
            "deployment_type": "unknown",
            "model_availability": "unknown",
            **_strings(
                {
                    "judge": name,
                    "family": j.get("family"),
                    "prompt_template": j.get("prompt_template"),
                    "prompt_digest": j.get("prompt_digest"),
                }
            ),
        },
    }
    temperature = _number(j.get("temperature"))
    return {"model_info": info, **({"temperature": temperature} if temperature is not None else {})}


def _interval(lo: Any, hi: Any, method: str) -> dict[str, Any] | None:
    low, high = _number(lo), _number(hi)
    if low is None or high is None:
        return None
    return {"lower": low, "upper": high, "confidence_level": _LEVEL, "method": method}


def _result(row: dict[str, Any], prov: dict[str, Any], corrected: bool) -> dict[str, Any] | None:
    """One result of a leaderboard row: the score, or its audit-corrected form."""
    key = "gamut_ppi" if corrected else "gamut"
    score = _number(row.get(key))
    if score is None:
        return None
    judge = str(row["judge"])
    uncertainty: dict[str, Any] = {"num_samples": int(row["n_questions"])}
    if corrected:
        method = "prediction-powered inference: judge scores corrected by the human audit"
        ci = _interval(row.get("gamut_ppi_lo"), row.get("gamut_ppi_hi"), method)
    else:
        method = "percentile bootstrap over questions"
        ci = _interval(row.get("gamut_lo"), row.get("gamut_hi"), method)
        resamples = (prov.get("scoring") or {}).get("bootstrap_resamples")
        if isinstance(resamples, int):
            uncertainty["num_bootstrap_samples"] = resamples
    if ci is not None:
        uncertainty["confidence_interval"] = ci
    j = (prov.get("judges") or {}).get(judge) or {}
    template = j.get("prompt_template") or j.get("prompt_version") or "unknown"
    setting = str(row["setting"])
    return {
        "evaluation_result_id": f"{setting}/{judge}/{key}",
        "evaluation_name": f"GAMUT {setting}" + (" (audit-corrected)" if corrected else ""),
        "source_data": {
            "dataset_name": "GAMUT",
            "source_type": "other",
            "additional_details": _strings(
                {"setting": setting, "rubric_version": prov.get("rubric_version")}
            ),
        },
        "metric_config": {
            "evaluation_description": "Factual completeness of open-ended answers to visual "
            "questions, judged check by check against two-level meta-rubrics",
            "metric_id": f"gamut.{key}",
            "metric_name": "Gamut score" + (" (audit-corrected)" if corrected else ""),
            "metric_kind": "score",
            "metric_unit": "points",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": -100.0,
            "max_score": 100.0,
            "llm_scoring": {
                "judges": [_judge(judge, j)],
                "input_prompt": f"GAMUT judge prompt {template} (digest {j.get('prompt_digest')})",
                "additional_details": _strings({"primary": bool(row.get("primary"))}),
            },
        },
        "score_details": {
            "score": score,
            "details": _strings(
                {
                    "status": row.get("status"),
                    "rank": row.get("rank_ppi" if corrected else "rank"),
                    "audited_questions": row.get("audited_questions") if corrected else None,
                }
            ),
            "uncertainty": uncertainty,
        },
    }


def _model(row: dict[str, Any]) -> dict[str, Any]:
    """The submitted model, as ``submission.yaml`` describes it."""
    org = re.sub(r"[^A-Za-z0-9._-]+", "-", str(row["organisation"])).strip("-") or "unknown"
    weights = row.get("open_weights")
    return {
        "name": str(row["model_name"]),
        "id": f"{org}/{row['submission_id']}",
        "developer": str(row["organisation"]),
        "additional_details": {
            "deployment_type": "unknown",
            "model_availability": "unknown"
            if weights is None
            else ("open_weights" if weights else "closed_weights"),
            **_strings(
                {
                    "submission_id": row["submission_id"],
                    "model_family": row.get("model_family"),
                    "parameters": row.get("parameters"),
                    "link": row.get("link"),
                    "date": row.get("date"),
                    "demo": row.get("demo"),
                }
            ),
        },
    }


def _epoch(stamp: str) -> str:
    """An ISO 8601 UTC time stamp as Unix epoch seconds (text)."""
    when = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return str(int(when.timestamp()))


def write_every_eval(leaderboard: pd.DataFrame, provenance: dict[str, Any], out: Path) -> int:
    """Write ``out/every_eval_ever.jsonl``: one Every Eval Ever document per submission of the
    leaderboard table, in submission order, a line each (``provenance``: the run's, with its
    judges, scoring parameters and time stamp); returns the documents."""
    stamp = str(provenance.get("generated_at") or "1970-01-01T00:00:00Z")
    docs = []
    for sid, rows in leaderboard.groupby("submission_id", sort=True, observed=True):
        records = cast(list[dict[str, Any]], rows.to_dict(orient="records"))
        results = [
            r
            for row in records
            for r in (_result(row, provenance, False), _result(row, provenance, True))
            if r is not None
        ]
        docs.append(
            {
                "schema_version": SCHEMA_VERSION,
                "evaluation_id": f"gamut/{sid}/{_epoch(stamp)}",
                "evaluation_timestamp": stamp,
                "retrieved_timestamp": _epoch(stamp),
                "source_metadata": {
                    "source_name": "GAMUT leaderboard",
                    "source_type": "evaluation_run",
                    "source_organization_name": "GAMUT",
                    "evaluator_relationship": "third_party",
                    "additional_details": _strings(
                        {
                            "rubric_version": provenance.get("rubric_version"),
                            "primary_judge": provenance.get("primary_judge"),
                        }
                    ),
                },
                "eval_library": {
                    "name": "gamut",
                    "version": str(provenance.get("engine_version") or "unknown"),
                },
                "model_info": _model(records[0]),
                "evaluation_results": results,
            }
        )
    lines = [json.dumps(d, ensure_ascii=False, allow_nan=False) for d in docs]
    (out / FILE).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return len(docs)


#: What each top-level key of a document holds (the downloads list them).
KEYS: dict[str, str] = {
    "model_info": "the submitted model, from its submission.yaml",
    "evaluation_results": "per setting and judge: the Gamut score with its 95% bootstrap "
    "interval (score_details.uncertainty), and the audit-corrected score with its "
    "prediction-powered interval where the audit covers it; the judge in "
    "metric_config.llm_scoring.judges",
    "source_metadata": "who ran the evaluation (this leaderboard, a third party)",
    "eval_library": "the scoring engine and its version",
}
