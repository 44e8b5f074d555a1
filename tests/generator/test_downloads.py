"""The site's downloads: every table with its column dictionary, verdict files with the export's
columns plus the domain, each verdict stored twice, spreadsheet-safe CSV, world-readable files."""

from __future__ import annotations

import csv
import gzip
import hashlib
import html
import io
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from gamut import pipeline
from gamut.config import GamutConfig, load_config
from gamut.project import Project
from generator import downloads_size
from generator.registry import dataset_folder
from generator.render import file_id
from scoring.errors import GamutError
from scoring.tables import published_types
from scoring.tables.columns import TABLES
from scoring.verdicts import VERDICT_COLUMNS, VERDICT_KEY
from tests.dataset_loading import card_configs, load_configs, read_everywhere
from tests.generator.fixture_tables import (
    JUDGES,
    QUESTIONS,
    publish_fixture_site_data,
    write_fixture_config,
)

pytestmark = pytest.mark.slow
FORMULA = '=HYPERLINK("http://evil.example","open me")'
#: ``gamut export verdicts`` columns (held rubrics): the verdict table with judge_id after judge.
EXPORT = [*VERDICT_COLUMNS[:3], "judge_id", *VERDICT_COLUMNS[3:]]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GamutConfig, Path]]:
    old = os.umask(0o022)
    try:
        root = tmp_path_factory.mktemp("dl")
        cfg = load_config(write_fixture_config(root, rubrics_public=False))
        lb_path = cfg.path(cfg.store.results) / "leaderboard.parquet"
        lb = pd.read_parquet(lb_path)
        lb.loc[lb["submission_id"] == "tiny-lm", "organisation"] = FORMULA
        lb.to_parquet(lb_path)
        yield cfg, pipeline.build_site(Project(cfg))
    finally:
        os.umask(old)


def test_every_table_is_downloadable_with_its_dictionary(built: tuple[GamutConfig, Path]) -> None:
    _, site = built
    dl = site / "downloads"
    # a column name may break after an underscore only (the page marks where)
    page = html.unescape((site / "downloads.html").read_text(encoding="utf-8")).replace("<wbr>", "")
    names = ["leaderboard", "questions", "by_domain", "by_popularity", "by_egocentric",
             "by_kind", "modality", "judge_scores", "judge_tau", "judge_kappa",
             "judge_kappa_by_kind", "judge_leniency", "judge_self_preference",
             "incomplete"]  # fmt: skip
    for name in names:
        files = sorted(p.name for p in dl.glob(f"{name}.*"))
        assert files and any(f.endswith(".csv") for f in files), name
        df = pd.read_csv(dl / f"{name}.csv")
        for col in df.columns:
            assert col in TABLES[name], (name, col)
            assert f"<code>{col}</code>" in page, (name, col)
            assert f"{col}</code></td><td>{TABLES[name][col][1]}</td>" in page, (name, col)


def test_questions_carry_their_metadata_and_both_texts(built: tuple[GamutConfig, Path]) -> None:
    _, site = built
    df = pd.read_parquet(site / "downloads" / "questions.parquet")
    assert list(df.columns) == list(TABLES["questions"])
    assert df.to_dict("records") == [{k: q[k] for k in TABLES["questions"]} for q in QUESTIONS]
    assert df["egocentric"].dtype == bool


def test_verdict_files_have_the_export_columns_plus_domain(built: tuple[GamutConfig, Path]) -> None:
    cfg, site = built
    df = pd.read_parquet(site / "downloads" / "verdicts.parquet")
    assert [c for c in df.columns if c != "domain"] == EXPORT
    assert list(df.columns).index("domain") == list(df.columns).index("question_id") + 1
    assert set(df["judge_id"].astype(str)) == {f"replay:demo-{j}@v1" for j in JUDGES}
    domains = {q["question_id"]: q["domain"] for q in QUESTIONS}
    assert (df["domain"].astype(str) == df["question_id"].astype(str).map(domains)).all()
    assert not df.duplicated(list(VERDICT_KEY)).any()
    # check ids repeat across questions: the key needs the question
    assert df.duplicated(["submission_id", "setting", "judge", "check_id"]).any()
    page = (site / "downloads.html").read_text(encoding="utf-8")
    assert "(submission_id, setting, judge, question_id, check_id)" in page
    assert "unique only within its question" in page
    assert "Secondary (extra-credit) checks count" in page
    source = pd.read_parquet(cfg.path(cfg.store.results) / "verdicts.parquet")
    assert len(df) == len(source)


def test_one_submission_reads_from_the_all_verdicts_file(built: tuple[GamutConfig, Path]) -> None:
    _, site = built
    path = site / "downloads" / "verdicts.parquet"
    meta = pq.read_metadata(path)
    assert meta.num_row_groups >= 4  # one per submission
    one = pd.read_parquet(path, filters=[("submission_id", "==", "zen-omni")])
    alone = pd.read_parquet(site / "downloads" / "verdicts" / "zen-omni.parquet")
    assert len(one) == len(alone) > 0
    assert set(one["submission_id"].astype(str)) == {"zen-omni"}


def test_no_verdict_is_stored_more_than_twice(built: tuple[GamutConfig, Path]) -> None:
    cfg, site = built
    n = pq.read_metadata(cfg.path(cfg.store.results) / "verdicts.parquet").num_rows
    stored = 0
    for path in (site / "downloads").rglob("*"):
        if path.suffix == ".parquet" and "verdict" in str(path.relative_to(site)):
            stored += pq.read_metadata(path).num_rows
        elif path.name.endswith((".csv", ".csv.gz")):
            assert "verdict" not in path.name, path
    assert stored == 2 * n
    files, size = downloads_size(site)
    assert files > 20 and size == sum(
        p.stat().st_size for p in (site / "downloads").rglob("*") if p.is_file()
    )


def test_csv_downloads_neutralise_formulas(built: tuple[GamutConfig, Path]) -> None:
    _, site = built
    rows = list(csv.DictReader(io.StringIO((site / "downloads" / "leaderboard.csv").read_text())))
    tiny = [r for r in rows if r["submission_id"] == "tiny-lm"]
    assert tiny and {r["organisation"] for r in tiny} == {"'" + FORMULA}
    for path in (site / "downloads").glob("*.csv*"):
        raw = path.read_bytes()
        text = gzip.decompress(raw).decode() if path.suffix == ".gz" else raw.decode()
        for row in csv.reader(io.StringIO(text)):
            for cell in row:
                assert not cell.startswith(("=", "+", "@", "\t", "\r")), (path.name, cell)


def test_the_built_site_is_world_readable(built: tuple[GamutConfig, Path]) -> None:
    _, site = built
    for path in [site, *site.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = 0o055 if path.is_dir() else 0o044
        assert mode & want == want, f"{path.relative_to(site)} is {oct(mode)}"


def test_an_undocumented_column_stops_the_build_with_its_name(tmp_path: Path) -> None:
    cfg = load_config(write_fixture_config(tmp_path, rubrics_public=False))
    path = cfg.path(cfg.store.results) / "by_kind.parquet"
    df = pd.read_parquet(path)
    df["mystery"] = 1
    df.to_parquet(path)
    want = r"by_kind: undocumented columns mystery.*scoring/tables/columns"
    with pytest.raises(GamutError, match=want):
        pipeline.build_site(Project(cfg))


def _provenance(path: Path) -> dict[str, object]:
    meta = pq.read_schema(path).metadata or {}
    assert b"gamut.provenance" in meta, path.name
    out: dict[str, object] = json.loads(meta[b"gamut.provenance"])
    return out


def test_every_parquet_download_carries_the_runs_provenance(
    built: tuple[GamutConfig, Path],
) -> None:
    cfg, site = built
    dl = site / "downloads"
    published = json.loads((dl / "provenance.json").read_text(encoding="utf-8"))
    results = json.loads((cfg.path(cfg.store.results) / "provenance.json").read_text())
    assert published == results
    files = sorted(dl.rglob("*.parquet"))
    names = {p.name for p in files}
    assert {"leaderboard.parquet", "questions.parquet", "responses.parquet"} <= names
    assert "verdicts.parquet" in names
    for path in files:
        prov = _provenance(path)
        if path.name in ("verdicts.parquet", "responses.parquet") or path.parent.name == "verdicts":
            # the verdict and response files, made by the score step, carry it without the time
            assert prov == {k: v for k, v in published.items() if k != "generated_at"}
        else:
            assert prov == published, path.name
    # a column name may break after an underscore only (the page marks where)
    page = html.unescape((site / "downloads.html").read_text(encoding="utf-8")).replace("<wbr>", "")
    assert "<code>rubric_version</code>" in page and 'href="downloads/provenance.json"' in page


def test_leaderboard_parquet_keeps_the_published_types(built: tuple[GamutConfig, Path]) -> None:
    cfg, site = built
    lb = pq.read_table(site / "downloads" / "leaderboard.parquet")
    source = pq.read_table(cfg.path(cfg.store.results) / "leaderboard.parquet")
    # the results file's values in the published types: text as plain strings, never Arrow null
    assert lb.equals(published_types("leaderboard", source))
    assert lb.schema.field("parameters").type == pa.string()
    assert not any(pa.types.is_large_string(f.type) or pa.types.is_null(f.type) for f in lb.schema)


def test_responses_are_downloadable_with_their_lengths(built: tuple[GamutConfig, Path]) -> None:
    cfg, site = built
    df = pd.read_parquet(site / "downloads" / "responses.parquet")
    assert list(df.columns) == ["submission_id", "setting", "question_id", "response", "length"]
    assert (df["length"] == df["response"].str.len()).all()
    subs = cfg.path(cfg.benchmark.submissions)
    for (sid, setting), part in df.groupby(["submission_id", "setting"]):
        lines = (subs / str(sid) / f"{setting}.jsonl").read_text(encoding="utf-8").splitlines()
        given = {r["question_id"]: r["response"] for r in map(json.loads, lines)}
        assert dict(zip(part["question_id"], part["response"], strict=True)) == given
    board = pd.read_parquet(site / "downloads" / "leaderboard.parquet")
    assert set(df["submission_id"]) == set(board["submission_id"])


def test_every_file_a_page_names_exists(built: tuple[GamutConfig, Path]) -> None:
    _, site = built
    named = 0
    link = re.compile(r"""(?:href|src)=["']([^"'#?]+)""")
    for page in site.rglob("*.html"):
        for target in link.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("//"):
                continue  # another site, mailto:, data:
            path = (site / target.lstrip("/")) if target.startswith("/") else page.parent / target
            path = path.resolve()
            if target.endswith("/"):
                path = path / "index.html"
            assert path.exists(), f"{page.relative_to(site)} names {target}, which is missing"
            named += 1
    assert named > 500


def test_the_site_has_a_dataset_card_naming_every_file(built: tuple[GamutConfig, Path]) -> None:
    _, site = built
    dl = site / "downloads"
    card = (dl / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "apache-2.0" and header["language"] == ["en"]
    prov = json.loads((dl / "provenance.json").read_text(encoding="utf-8"))
    assert f"rubric version: `{prov['rubric_version']}`" in card
    top = sorted(p.name for p in dl.iterdir() if p.is_file() and p.name != "README.md")
    assert top and all(f"`{name}`" in card for name in top), top
    assert "| `response` | the model's response, as submitted |" in card
    assert "The meta-rubrics are held" in card
    page = html.unescape((site / "downloads.html").read_text(encoding="utf-8"))
    assert 'href="downloads/README.md"' in page
    assert not (site / "downloads" / "README.html").exists(), "a file, not a page"


def test_the_downloads_folder_loads_as_a_dataset(
    built: tuple[GamutConfig, Path], tmp_path: Path
) -> None:
    _, site = built
    dl = site / "downloads"
    configs = card_configs(dl)
    tables = {p.stem: read_everywhere(p) for p in dl.glob("*.parquet")}
    assert sorted(configs) == sorted(tables) and all(tables.values())  # empty: test_publish
    assert all(files == [f"{name}.parquet"] for name, files in configs.items())
    loaded = load_configs(dl, tmp_path / "hf", sorted(configs))
    for name, got in loaded.items():
        assert got["rows"] == tables[name] > 0, name
        assert got["columns"] == pq.read_schema(dl / f"{name}.parquet").names, name
        assert "null" not in got["features"].values(), name
    board = pd.read_json(dl / "leaderboard.json")
    parquet = pd.read_parquet(dl / "leaderboard.parquet")
    assert list(board.columns) == list(parquet.columns) and len(board) == len(parquet)
    assert board["gamut"].round(9).tolist() == parquet["gamut"].round(9).tolist()


def test_every_download_reads_with_pandas_pyarrow_duckdb_and_polars(
    built: tuple[GamutConfig, Path],
) -> None:
    import polars as pl

    _, site = built
    dl = site / "downloads"
    files = sorted([*dl.rglob("*.parquet"), *dl.rglob("*.csv"), *dl.rglob("*.csv.gz")])
    assert {"leaderboard.csv", "verdicts.parquet", "question_scores.csv.gz"} <= {
        f.name for f in files
    }
    rows = {f.relative_to(dl).as_posix(): read_everywhere(f) for f in files}
    assert rows["leaderboard.csv"] == rows["leaderboard.parquet"] > 0
    assert rows["verdicts.parquet"] == sum(
        n for name, n in rows.items() if name.startswith("verdicts/")
    )
    board = pl.read_json(dl / "leaderboard.json")
    assert board.height == rows["leaderboard.parquet"]
    assert sorted(board.columns) == sorted(pq.read_schema(dl / "leaderboard.parquet").names)


def test_the_croissant_description_validates_and_reads_every_table(
    built: tuple[GamutConfig, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import mlcroissant as mlc

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # offline: any request would fail
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    _, site = built
    dl = site / "downloads"
    doc = json.loads((dl / "croissant.json").read_text(encoding="utf-8"))
    assert doc["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    dataset = mlc.Dataset(jsonld=dl / "croissant.json")
    issues = dataset.metadata.ctx.issues
    assert not issues.errors and not issues.warnings, issues.report()
    tables = {p.name: pq.read_metadata(p).num_rows for p in dl.glob("*.parquet")}
    files = {f["@id"]: f for f in doc["distribution"]}
    assert sorted(files) == sorted(tables)
    for record_set in dataset.metadata.record_sets:
        name = f"{record_set.name}.parquet"
        rows = sum(1 for _ in dataset.records(record_set=record_set.uuid))
        assert rows == tables[name], name
        assert files[name]["sha256"] == hashlib.sha256((dl / name).read_bytes()).hexdigest()
    page = html.unescape((site / "downloads.html").read_text(encoding="utf-8"))
    assert 'href="downloads/croissant.json"' in page


def test_verdicts_rewritten_after_the_score_are_published_as_they_are_now(tmp_path: Path) -> None:
    path = write_fixture_config(tmp_path, rubrics_public=False)
    publish_fixture_site_data(path)
    cfg = load_config(path)
    results = cfg.path(cfg.store.results)
    table = pq.read_table(results / "verdicts.parquet")
    gone = str(table["submission_id"][0])
    kept = table.filter(pa.compute.not_equal(table["submission_id"], gone))
    pq.write_table(kept, results / "verdicts.parquet")  # a judge run after the score
    # the score step's copy is of other verdicts: the Hub gets nothing until a score
    with pytest.raises(GamutError, match=r"no verdict and response files.*`gamut score` first"):
        dataset_folder(Project(cfg).site_spec(), tmp_path / "hub", "org/name")
    site = pipeline.build_site(Project(cfg))  # the build makes the files of the verdicts now
    assert pq.read_metadata(site / "downloads" / "verdicts.parquet").num_rows == kept.num_rows
    names = {p.stem for p in (site / "downloads" / "verdicts").glob("*.parquet")}
    assert names and file_id(gone) not in names
