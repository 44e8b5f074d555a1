"""The question explorer's data: one data script per question (its text in both settings, image,
labels, and every shown model's response with its scores and verdict counts), an index of the
questions, and the question images copied into the site.

With public rubrics a question's file also holds its checks (grouped by meta-rubric item) and each
model's verdict string; the judge's rationales go to a second file fetched on demand. With held
rubrics nothing but ids-free counts per tier and kind is written: no check, item, snippet or
rationale text.

Each file is a script that hands its JSON value to ``gamut.put`` (``assets/gamut.js``) rather
than a JSON file fetched at run time: browsers refuse fetch() on a site opened from a folder
(file://), but they run its scripts.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from generator.inputs import SETTINGS, TIERS, VERDICTS, SiteInputs, Verdicts, primary_verdicts
from generator.judging import judging_href
from generator.render import SETTING_LABELS, file_id, human, safe_url
from generator.tables import ScoreTables
from scoring.errors import Problem, ProblemsError
from scoring.questions import Question

#: Folder of the explorer's data under the site root.
DATA = "explorer"
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".gif"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: One letter per verdict in a model's verdict string; "-" where the check has no verdict.
LETTERS = "MPSC"


def question_file(question_id: str) -> str:
    """The data file of a question, relative to the site root."""
    return f"{DATA}/q/{file_id(question_id.lower())}.js"


def points(value: Any) -> float | None:
    """A question score in [-1, 1] on the leaderboard's 100-point scale, or None."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else round(100.0 * f, 2)


def data_script(obj: Any) -> str:
    """A script handing ``obj`` to the page (``gamut.put``, keyed by the script's address)."""
    text = orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY).decode()  # numpy arrays as lists
    # JSON allows the two line separators raw inside strings; older JavaScript did not
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"window.gamut.put(document.currentScript.src,{text});\n"


def _dump(path: Path, obj: Any) -> int:
    """Write a data script into the build's staging folder (swapped in whole when complete)."""
    data = data_script(obj).encode("utf-8")
    path.write_bytes(data)
    return len(data)


def _mean(values: list[float | None]) -> float | None:
    got = [x for x in values if x is not None]
    return round(sum(got) / len(got), 2) if got else None


def image_paths(questions: list[Question]) -> dict[str, str]:
    """Question id -> the site path of its local image (:func:`copy_images` copies it there)."""
    return {
        q.question_id: f"{DATA}/images/{file_id(q.image_id.lower())}{Path(q.image).suffix.lower()}"
        for q in questions
        if q.image is not None and safe_url(q.image) is None
    }


def copy_images(questions: list[Question], questions_path: Path, site: Path) -> dict[str, str]:
    """Copy each question's local image into ``site``; returns question id -> site path.

    An http(s) image is not copied (and not loaded by the site: the explorer links it).

    Raises:
        ProblemsError: listing every image that is missing, too large, not an image file or
            outside the questions file's folder.
    """
    base, paths = questions_path.parent.resolve(), image_paths(questions)
    problems: list[Problem] = []
    out: dict[str, str] = {}
    for n, q in enumerate(questions, 1):
        if q.image is None or safe_url(q.image) is not None:
            continue
        src = (base / q.image).resolve()

        def bad(msg: str, fix: str, q: Question = q, n: int = n) -> None:
            problems.append(Problem(str(questions_path), n, msg, fix, question_id=q.question_id))

        if not src.is_relative_to(base):
            bad(f"image {q.image!r} lies outside {base}", "keep images beside the questions file")
        elif src.suffix.lower() not in IMAGE_SUFFIXES:
            bad(f"image {q.image!r} is not a {'/'.join(sorted(IMAGE_SUFFIXES))} file",
                "convert it to PNG or JPEG")  # fmt: skip
        elif not src.is_file():
            bad(f"image {q.image!r} not found", "add the file or set image to null")
        elif src.stat().st_size > MAX_IMAGE_BYTES:
            bad(f"image {q.image!r} is over {MAX_IMAGE_BYTES // (1024 * 1024)} MB",
                "shrink the image")  # fmt: skip
        else:
            rel = paths[q.question_id]
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, site / rel)
            out[q.question_id] = rel
    if problems:
        raise ProblemsError(problems, "cannot copy the question images into the site")
    return out


@dataclass(frozen=True)
class _Scores:
    """Primary-judge question scores by (submission, setting, question)."""

    lookup: dict[tuple[str, str, str], tuple[float | None, ...]]

    @classmethod
    def of(cls, tables: ScoreTables) -> _Scores:
        qs = tables["question_scores"]
        qs = qs[qs["judge"].astype(str) == tables.primary_judge]
        ids = ("submission_id", "setting", "question_id")
        keys = zip(*(qs[c].astype(str).tolist() for c in ids), strict=True)
        columns = (qs[c].to_numpy(float, na_value=np.nan).tolist()
                   for c in ("gamut_raw", "ac_raw", "v_raw", "c_raw"))  # fmt: skip
        vals = zip(*([None if x != x else round(100.0 * x, 2) for x in c] for c in columns),
                   strict=True)  # fmt: skip
        return cls(dict(zip(keys, vals, strict=True)))


_LUT = np.array([c.encode() for c in LETTERS + "-"], dtype="S1")


@dataclass(frozen=True)
class _Counts:
    """Verdict counts of every (question, model-setting, label), counted once for all checks."""

    labels: list[str]
    counts: np.ndarray[Any, Any]  # [question, group, label, verdict]
    seen: np.ndarray[Any, Any]  # [question, group, label]: any verdict

    @classmethod
    def of(cls, v: Verdicts, column: np.ndarray[Any, Any], order: list[str]) -> _Counts:
        labels = [x for x in order if (column == x).any()]
        pos = {x: i for i, x in enumerate(labels)}
        q_code = np.cumsum(np.r_[0, v.question[1:] != v.question[:-1]]).astype(np.int64)
        n_q = int(q_code[-1]) + 1 if q_code.size else 0
        lab = np.array([pos[str(x)] for x in column], np.int64)
        n_g, n_l, n_v = len(v.groups), len(labels), len(VERDICTS)
        k, g = np.nonzero(v.codes >= 0)
        flat = ((q_code[k] * n_g + g) * n_l + lab[k]) * n_v + v.codes[k, g]
        counts = np.bincount(flat, minlength=n_q * n_g * n_l * n_v).reshape(n_q, n_g, n_l, n_v)
        return cls(labels, counts, counts.sum(axis=3) > 0)

    def of_question(self, q: int, g: int) -> dict[str, np.ndarray[Any, Any]]:
        c, seen = self.counts[q, g], self.seen[q, g]
        return {x: c[i] for i, x in enumerate(self.labels) if seen[i]}


def _checklist(v: Verdicts, lo: int, hi: int, settings: list[str]) -> list[dict[str, Any]]:
    """The checks of one question, with whether most models miss each (public rubrics only)."""
    text = v.check_text
    out = []
    by_setting = {s: [i for i, g in enumerate(v.groups) if g[1] == s] for s in settings}
    for k in range(lo, hi):
        most_missed = {}
        for s, cols in by_setting.items():
            got = v.codes[k, cols]
            got = got[got >= 0]
            most_missed[s] = bool(got.size and (got >= 2).sum() * 2 > got.size)
        cid = str(v.check_id[k])
        out.append(
            {
                "id": cid,
                "item": cid.split(".", 1)[0],
                "kind": str(v.kind[k]),
                "tier": str(v.tier[k]),
                "secondary": bool(v.secondary[k]),
                "text": None if text is None else str(text[k]),
                "most_missed": most_missed,
            }
        )
    return out


def write_explorer_data(
    tables: ScoreTables, inputs: SiteInputs, site: Path, public: bool, names: dict[str, str]
) -> dict[str, Any]:
    """Write every question's data file and the question index under ``site`` (the images
    are not copied: :func:`copy_images` does).

    Args:
        tables: the score tables (question scores and verdicts of the primary judge).
        inputs: questions and responses.
        site: the folder being filled.
        public: whether rubric text may be written.
        names: submission id -> model name, in the order the explorer lists models.

    Returns:
        Sizes and counts for the explorer page (``n_questions``, ``largest_bytes``).
    """
    images = image_paths(inputs.questions)
    scores = _Scores.of(tables)
    v = primary_verdicts(tables, public)
    spans = v.spans() if v is not None else {}
    models = list(names)
    g_index = {g: i for i, g in enumerate(v.groups)} if v is not None else {}
    q_pos = {qid: i for i, qid in enumerate(spans)}
    tiers = _Counts.of(v, v.tier, list(TIERS)) if v is not None else None
    kinds = _Counts.of(v, v.kind, sorted({str(x) for x in v.kind})) if v is not None else None
    primary = (tables.provenance.get("judges") or {}).get(tables.primary_judge) or {}
    # the page with the prompt template and request settings of the judge shown
    judging = judging_href(str(primary.get("prompt_version")), tables.primary_judge)
    settings = [s for s in SETTINGS if any((m, s) in inputs.responses for m in models)]
    index, largest = [], 0
    (site / DATA / "q").mkdir(parents=True, exist_ok=True)
    listed = [{"id": m, "name": names[m], "href": f"submissions/{file_id(m)}.html"} for m in models]
    counts = (tiers, kinds) if tiers is not None and kinds is not None else None
    for q in inputs.questions:
        qid = q.question_id
        lo, hi = spans.get(qid, (0, 0))
        where = (q_pos.get(qid, -1), lo, hi)
        rows = _rows(qid, where, models, settings, inputs, scores, counts, g_index, public, v)
        data: dict[str, Any] = {
            "id": qid,
            "domain": human(q.domain),
            "popularity": q.popularity.value,
            "egocentric": q.egocentric,
            "question": q.question,
            "text_only_question": q.text_only_question,
            "image": images.get(qid),
            "image_link": safe_url(q.image),
            "judge": tables.primary_judge,
            "judging": judging,
            "settings": {s: SETTING_LABELS.get(s, s) for s in settings},
            "models": listed,
            "public": public,
            "rows": rows,
        }
        if public and v is not None and hi > lo:
            data["checks"] = _checklist(v, lo, hi, settings)
            if v.rationale is not None:
                rel = question_file(qid).removesuffix(".js") + ".rationales.js"
                data["rationales"] = rel
                _dump(site / rel, _rationales(v, lo, hi, models, settings))
        largest = max(largest, _dump(site / question_file(qid), data))
        means = [_mean([scores.lookup.get((m, s, qid), (None,))[0] for m in models])
                 for s in SETTINGS]  # fmt: skip
        index.append([qid, human(q.domain), q.popularity.value, q.egocentric, q.question,
                      question_file(qid), q.text_only_question, *means])  # fmt: skip
    _dump(site / DATA / "questions.js", {"questions": index, "settings": SETTING_LABELS})
    return {"n_questions": len(index), "largest_bytes": largest}


def _rows(
    qid: str,
    where: tuple[int, int, int],
    models: list[str],
    settings: list[str],
    inputs: SiteInputs,
    scores: _Scores,
    counts: tuple[_Counts, _Counts] | None,
    g_index: dict[tuple[str, str], int],
    public: bool,
    v: Verdicts | None,
) -> list[dict[str, Any]]:
    """Each shown model's response to one question, with its scores and verdict counts (and
    verdict string with public rubrics); ``where``: the question's place in the counts and its
    checks' row range."""
    q_at, lo, hi = where
    rows = []
    for mi, m in enumerate(models):
        for s in settings:
            resp = inputs.responses.get((m, s))
            if resp is None:
                continue
            gamut, ac, vv, c = scores.lookup.get((m, s, qid), (None, None, None, None))
            row: dict[str, Any] = {"m": mi, "s": s, "response": resp.get(qid),
                                   "gamut": gamut, "ac": ac, "v": vv, "c": c}  # fmt: skip
            gi = g_index.get((m, s))
            if v is not None and counts is not None and gi is not None and hi > lo:
                row["tiers"] = counts[0].of_question(q_at, gi)
                row["kinds"] = counts[1].of_question(q_at, gi)
                if public:
                    row["verdicts"] = _LUT[v.codes[lo:hi, gi]].tobytes().decode("ascii")
            rows.append(row)
    return rows


def _rationales(
    v: Verdicts, lo: int, hi: int, models: list[str], settings: list[str]
) -> dict[str, dict[str, list[str | None]]]:
    """setting -> model -> the rationale of each check of the question (public rubrics only)."""
    assert v.rationale is not None
    out: dict[str, dict[str, list[str | None]]] = {}
    for (m, s), gi in ((g, i) for i, g in enumerate(v.groups)):
        if m in models and s in settings:
            col = v.rationale[lo:hi, gi]
            out.setdefault(s, {})[m] = [None if pd.isna(x) else str(x) for x in col]
    return out


__all__ = ["DATA", "copy_images", "points", "question_file", "write_explorer_data"]
