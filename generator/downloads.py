"""Downloadable files: the leaderboard and every verdict, with rubric text only when public."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from generator.render import file_id
from generator.tables import VERDICT_ID_COLUMNS, VERDICT_TEXT_COLUMNS, ScoreTables

VERDICT_DICTIONARY: dict[str, str] = {
    "submission_id": "the submission (folder name under submissions/)",
    "setting": "multimodal (image + question) or text_only (entity named, no image)",
    "judge": "the judge's name in the configuration (see the judges page)",
    "question_id": "the public question",
    "check_id": "the check within the question's compiled rubric",
    "kind": "fact, member, baseline, coverage, step, sequence, relation_entity, "
    "relation_aspect or insight",
    "tier": "answer_critical, valuable or context",
    "secondary": "true for extra-credit checks (flexible-list members, coverage, optional steps)",
    "verdict": "meets, partially_meets, missing or contradicts",
    "rationale": "the judge's one- or two-sentence reason (public rubrics only)",
    "check_text": "the check's text (public rubrics only)",
}
LEADERBOARD_DICTIONARY: dict[str, str] = {
    "submission_id, setting, judge": "one row per submission, setting and judge",
    "primary": "true for the judge that ranks the leaderboard",
    "status": "complete, or incomplete when some checks have no verdict",
    "gamut, gamut_lo, gamut_hi": "Gamut score (100 x mean question score) and its 95% CI",
    "ac, v, c (+ _lo, _hi)": "tier scores: answer-critical, valuable, context",
    "share_meets ... share_contradicts": "verdict mix over all checks, as shares in [0, 1]",
    "mean_response_chars": "mean response length in characters",
    "rank, rank_lo, rank_hi, tie_group": "rank within setting and judge, bootstrap rank range "
    "and tie group (complete rows only)",
    "model_name ... demo": "submission metadata from submission.yaml",
}


@dataclass(frozen=True)
class Download:
    """One downloadable file: where it is (from the site root), its size and how to read it."""

    label: str
    path: str
    size: int
    reader: str
    columns: dict[str, str]


def _verdict_table(tables: ScoreTables, public: bool) -> pa.Table | None:
    if tables.verdicts_path is None:
        return None
    table = pq.read_table(tables.verdicts_path)
    keep = [c for c in VERDICT_ID_COLUMNS if c in table.column_names]
    if public:
        keep += [c for c in VERDICT_TEXT_COLUMNS if c in table.column_names]
    return table.select(keep).replace_schema_metadata(None)


def _write_csv_gz(table: pa.Table, path: Path) -> None:
    plain = table.cast(
        pa.schema(
            [
                pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type)
                for f in table.schema
            ]
        )
    )
    with pa.CompressedOutputStream(str(path), "gzip") as out:
        pacsv.write_csv(plain, out)


def write_downloads(tables: ScoreTables, docs: Path, *, public: bool) -> dict[str, object]:
    """Write the download files under ``docs/downloads`` (a fresh build folder).

    Args:
        tables: the score tables.
        docs: the build copy of the docs folder.
        public: whether rubric text and rationales may be published.

    Returns:
        ``{"main": [Download, ...], "per_submission": {submission_id: {label: path}}}``.
    """
    out = docs / "downloads"
    (out / "verdicts").mkdir(parents=True, exist_ok=True)
    lb = tables["leaderboard"]
    lb.to_csv(out / "leaderboard.csv", index=False)
    records = json.loads(lb.to_json(orient="records", date_format="iso"))
    (out / "leaderboard.json").write_text(
        json.dumps({"provenance": tables.provenance, "rows": records}, indent=1), encoding="utf-8"
    )
    main: list[Download] = []
    lb_cols = dict(LEADERBOARD_DICTIONARY)
    for name, fmt in (("leaderboard.csv", "csv"), ("leaderboard.json", "json")):
        reader = (
            "pd.read_csv(path)"
            if fmt == "csv"
            else "pd.json_normalize(json.load(open(path))['rows'])"
        )
        main.append(
            Download(
                f"Leaderboard ({fmt.upper()})",
                f"downloads/{name}",
                (out / name).stat().st_size,
                reader,
                lb_cols,
            )
        )
    per_sub: dict[str, dict[str, str]] = {}
    vt = _verdict_table(tables, public)
    if vt is not None:
        cols = {c: VERDICT_DICTIONARY.get(c, "") for c in vt.column_names}
        pq.write_table(vt, out / "verdicts.parquet", compression="zstd")
        _write_csv_gz(vt, out / "verdicts.csv.gz")
        main.append(
            Download(
                "All verdicts (Parquet)",
                "downloads/verdicts.parquet",
                (out / "verdicts.parquet").stat().st_size,
                "pd.read_parquet(path)",
                cols,
            )
        )
        main.append(
            Download(
                "All verdicts (CSV, gzip)",
                "downloads/verdicts.csv.gz",
                (out / "verdicts.csv.gz").stat().st_size,
                "pd.read_csv(path)",
                cols,
            )
        )
        subs = pc.unique(vt.column("submission_id")).to_pylist()
        sub_col = vt.column("submission_id")
        if pa.types.is_dictionary(sub_col.type):
            sub_col = sub_col.cast(sub_col.type.value_type)
        for sid in sorted(str(s) for s in subs):
            part = vt.filter(pc.equal(sub_col, sid))
            name = file_id(sid)
            pq.write_table(part, out / "verdicts" / f"{name}.parquet", compression="zstd")
            _write_csv_gz(part, out / "verdicts" / f"{name}.csv.gz")
            per_sub[sid] = {
                "Verdicts (Parquet)": f"downloads/verdicts/{name}.parquet",
                "Verdicts (CSV, gzip)": f"downloads/verdicts/{name}.csv.gz",
            }
    return {
        "main": main,
        "per_submission": per_sub,
        "verdict_columns": [] if vt is None else vt.column_names,
    }


__all__ = ["LEADERBOARD_DICTIONARY", "VERDICT_DICTIONARY", "Download", "write_downloads"]
