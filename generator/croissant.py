"""The downloads described in Croissant 1.0 (``downloads/croissant.json``, JSON-LD): the dataset,
each Parquet file with its sha256, and one record set per table whose fields carry the column
dictionary's meanings and the files' types."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from generator.downloads import Download

FILE = "croissant.json"
CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
#: The JSON-LD context every Croissant 1.0 document opens with (the specification's own).
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def _data_type(kind: pa.DataType) -> str:
    if pa.types.is_boolean(kind):
        return "sc:Boolean"
    if pa.types.is_integer(kind):
        return "sc:Integer"
    if pa.types.is_floating(kind):
        return "sc:Float"
    return "sc:Text"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _table(d: Download, folder: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The file object and record set of one download's Parquet file, if it has one."""
    rel = next((p for fmt, p, _ in d.files if fmt == "Parquet"), None)
    if rel is None:
        return None
    path = folder / rel.removeprefix("downloads/")
    schema = pq.read_schema(path)
    file_id = path.name
    fields = [
        {
            "@type": "cr:Field",
            "@id": f"{d.name}/{f.name}",
            "name": f.name,
            "description": d.columns.get(f.name, f.name),
            "dataType": _data_type(f.type),
            "source": {"fileObject": {"@id": file_id}, "extract": {"column": f.name}},
        }
        for f in schema
    ]
    file_object = {
        "@type": "cr:FileObject",
        "@id": file_id,
        "name": file_id,
        "contentUrl": file_id,
        "encodingFormat": "application/x-parquet",
        "sha256": _sha256(path),
    }
    record_set = {
        "@type": "cr:RecordSet",
        "@id": d.name,
        "name": d.name,
        "description": f"{d.label}: {d.rows} rows." + (f" {d.note}" if d.note else ""),
        "field": fields,
    }
    return file_object, record_set


def write_croissant(
    downloads: list[Download],
    folder: Path,
    provenance: dict[str, Any],
    *,
    title: str,
    description: str,
    url: str,
) -> Path:
    """Write ``folder/croissant.json``, the Croissant description of the Parquet tables among
    ``downloads`` (files in ``folder``, the site's ``downloads/``); return its path."""
    parts = [t for t in (_table(d, folder) for d in downloads) if t is not None]
    doc: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": "gamut-results",
        "description": f"{title}: {description}",
        "conformsTo": CONFORMS_TO,
        "license": "https://www.apache.org/licenses/LICENSE-2.0",
        "version": str(provenance.get("engine_version") or "0.0.0"),
        "citeAs": "@misc{gamut_benchmark, title = {{Two-Level Meta-Rubrics for Evaluating "
        "Open-Ended Generation: GAMUT, a Benchmark for Factual Completeness}}}",
        "keywords": ["leaderboard", "llm-as-judge", "evaluation", "visual question answering"],
        "distribution": [f for f, _ in parts],
        "recordSet": [r for _, r in parts],
    }
    if url:
        doc["url"] = url
    published = str(provenance.get("generated_at") or "")[:10]
    if published:
        doc["datePublished"] = published
    path = folder / FILE
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
