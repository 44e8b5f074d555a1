"""A named pipe, a socket, a folder or a symbolic link (to ``/dev/zero``) under the name of a
file that a reader of a folder reads: each is refused by name before it is opened
(:func:`scoring.storage.open_regular`), and the other files of the folder are still read.

Every reader runs in a thread with a time limit, so that one that waits on a pipe or reads a
device fails the test instead of hanging it; a pipe still waited on is then opened for writing
and closed, which ends the wait.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from click.testing import CliRunner

from gamut import pipeline
from gamut.cli import main
from gamut.project import Project as GamutProject
from scoring.audit import read_audit
from scoring.errors import GamutError, NotRegularFileError, ProblemsError, RubricError
from scoring.ledger import KeyScheme, Ledger, VerdictRecord
from scoring.ledger.store import merge
from scoring.questions import load_questions
from scoring.rubric_io import load_rubrics, rubric_files
from scoring.storage import open_regular
from scoring.submissions import read_responses
from scoring.verdicts import Verdict
from tests.fakes.batch_server import run_batch_file
from tests.hub.conftest import RUBRIC, write_config
from tests.judge.project import TOTAL_CALLS, openai_judge, write_project
from tests.judge.store import verdict_keys
from tests.judge.test_batch import hashed_verdict
from tests.ledger.hostile_shards import SPECIAL, plant
from tests.submissions.helpers import Project
from workbench.images import read_manifest
from workbench.store import Workbench

KINDS = tuple(SPECIAL)
#: Generous: a refusal takes milliseconds; a reader waiting on a pipe never returns.
LIMIT_S = 30.0
_T = TypeVar("_T")


def _unblock(folder: Path) -> None:
    """End the wait of a reader that opened a pipe under ``folder``."""
    for p in folder.rglob("*"):
        if p.is_fifo():
            with contextlib.suppress(OSError):
                os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))


def within(folder: Path, call: Callable[[], _T]) -> _T:
    """``call()`` in a thread, which must return (or raise) within :data:`LIMIT_S`."""
    out: list[_T] = []
    err: list[BaseException] = []

    def run() -> None:
        try:
            out.append(call())
        except BaseException as exc:  # handed to the test
            err.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(LIMIT_S)
    if thread.is_alive():
        _unblock(folder)
        pytest.fail(f"the reader was still reading after {LIMIT_S} s")
    if err:
        raise err[0]
    return out[0]


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_open_regular_refuses_each_kind_by_name_and_opens_a_file(tmp_path: Path, kind: str) -> None:
    bad = plant(tmp_path / "x.jsonl", kind)
    with pytest.raises(NotRegularFileError) as exc:
        within(tmp_path, lambda: open_regular(bad))
    assert exc.value.filename == str(bad) and exc.value.strerror == SPECIAL[kind]
    (tmp_path / "ok").write_bytes(b"data")
    with open_regular(tmp_path / "ok") as f:
        assert f.read() == b"data"


# -- the ledger ------------------------------------------------------------------------------


def _records(scheme: KeyScheme, start: int, n: int) -> list[VerdictRecord]:
    return [
        VerdictRecord(
            key=scheme.digest("jid", "q", f"response {i}") + scheme.digest("fact", "check"),
            judge_identity="jid",
            judge="j1",
            submission_id="m-one",
            setting="multimodal",
            question_id=f"food-{i:04d}",
            check_id="I1",
            verdict=Verdict.MEETS,
            model="judge-2026-01-01",
        )
        for i in range(start, start + n)
    ]


def _ledger(root: Path) -> Ledger:
    return Ledger.open(root, KeyScheme.public(), held=False)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    """A public project's ledger (``p/.gamut/ledger``, its config ``p/gamut.toml``): three
    verdicts and a push record."""
    write_config(tmp_path / "p", "rubrics", public=True)
    led = _ledger(tmp_path / "p" / ".gamut" / "ledger")
    led.append_verdicts(_records(led.scheme, 0, 3))
    led.add_push_record(None, [])
    yield led
    _unblock(led.root)


@pytest.mark.parametrize("where", ["verdicts", "failures", "pushes"])
def test_verify_names_a_special_file_named_like_a_shard_or_record_and_checks_the_rest(
    ledger: Ledger, kind: str, where: str
) -> None:
    suffix = ".json" if where == "pushes" else ".parquet"
    bad = plant(ledger.root / where / ("a" * 64 + suffix), kind)
    rotten = ledger.root / "verdicts" / ("b" * 64 + ".parquet")
    rotten.write_bytes(b"not a shard")  # a file beside it: still checked
    problems = within(ledger.root, ledger.verify)
    assert {(p.file, p.message) for p in problems if p.file == str(bad)} == {
        (str(bad), SPECIAL[kind])
    }
    assert any(p.file == str(rotten) for p in problems)
    cfg = ledger.root.parents[1] / "gamut.toml"
    cli = within(
        ledger.root, lambda: CliRunner().invoke(main, ["ledger", "verify", "--config", str(cfg)])
    )
    assert cli.exit_code == 1 and SPECIAL[kind] in cli.output, cli.output


def test_reading_the_ledger_names_a_special_shard(ledger: Ledger, kind: str) -> None:
    bad = plant(ledger.root / "verdicts" / ("a" * 64 + ".parquet"), kind)
    with pytest.raises(GamutError) as exc:
        within(ledger.root, ledger.verdicts)
    assert str(bad) in str(exc.value) and SPECIAL[kind] in str(exc.value)


def test_merge_refuses_a_ledger_holding_a_special_file_by_name(
    ledger: Ledger, tmp_path: Path, kind: str
) -> None:
    other = _ledger(tmp_path / "other")
    other.append_verdicts(_records(other.scheme, 10, 2))
    bad = plant(other.root / "verdicts" / ("a" * 64 + ".parquet"), kind)
    with pytest.raises(GamutError) as exc:
        within(other.root, lambda: merge(ledger, other))
    assert str(bad) in str(exc.value) and SPECIAL[kind] in str(exc.value)
    assert ledger.verdicts().num_rows == 3  # nothing copied from a ledger that fails


def test_a_special_manifest_is_refused_by_name(tmp_path: Path, kind: str) -> None:
    bad = plant(tmp_path / "led" / "LEDGER.json", kind)
    with pytest.raises(GamutError) as exc:
        within(bad.parent, lambda: _ledger(bad.parent))
    assert str(bad) in str(exc.value) and SPECIAL[kind] in str(exc.value)


# -- rubrics and questions: links followed, to a regular file only --------------------------

#: What a reader that follows links (the project's own inputs) says of each kind.
FOLLOWED = {**SPECIAL, "link to /dev/zero": "not a regular file but a device"}


@pytest.mark.parametrize("name", ["b.json", "b.jsonl"])
def test_a_rubric_file_is_refused_by_name_and_a_link_to_one_read(
    tmp_path: Path, kind: str, name: str
) -> None:
    folder = tmp_path / "rubrics"
    folder.mkdir()
    (tmp_path / "real.json").write_text(json.dumps(RUBRIC))
    (folder / "a.json").symlink_to(tmp_path / "real.json")  # as in a Hub snapshot
    bad = plant(folder / name, kind)
    if kind == "folder":  # rubrics may be kept in folders, whatever their names
        assert list(within(folder, lambda: load_rubrics(rubric_files(folder)))) == ["food-0001"]
        return
    with pytest.raises(RubricError) as exc:
        within(folder, lambda: load_rubrics(rubric_files(folder)))
    assert [(p.file, p.message) for p in exc.value.problems] == [
        (str(bad), FOLLOWED[kind] if name.endswith("l") else f"cannot read: {FOLLOWED[kind]}")
    ]
    bad.unlink()
    assert list(load_rubrics(rubric_files(folder))) == ["food-0001"]


def test_a_questions_file_is_refused_by_name(tmp_path: Path, kind: str) -> None:
    bad = plant(tmp_path / "questions.jsonl", kind)
    with pytest.raises(ProblemsError) as exc:
        within(tmp_path, lambda: load_questions(bad))
    assert [(p.file, p.message) for p in exc.value.problems] == [(str(bad), FOLLOWED[kind])]


# -- submissions, audit labels, the workbench, batch results ----------------------------------


@pytest.mark.parametrize("name", ["multimodal.jsonl", "submission.yaml"])
def test_a_submission_file_is_refused_by_name_and_the_other_submission_checked(
    tmp_path: Path, kind: str, name: str
) -> None:
    project = Project.fresh(tmp_path)
    good = project.write("acme")
    project.write("bolt", multimodal="not json\n")
    bad = plant(project.write("crow") / name, kind)
    report = within(project.subs, lambda: pipeline.validate(GamutProject(project.cfg)))
    assert report.rejected == ["bolt", "crow"], report.errors
    assert any(p.file.endswith(f"crow/{name}") for p in report.errors)
    assert any(p.file.endswith("bolt/multimodal.jsonl") for p in report.errors)
    _, problems = within(project.subs, lambda: read_responses(bad))
    assert [p.message for p in problems] == [SPECIAL[kind]]
    assert not within(project.subs, lambda: read_responses(good / "multimodal.jsonl"))[1]


def test_an_audit_label_file_is_refused_by_name_and_the_others_read(
    tmp_path: Path, kind: str
) -> None:
    folder = tmp_path / "audit"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"submission_id": "nobody"}\n')
    bad = plant(folder / "b.jsonl", kind)
    with pytest.raises(ProblemsError) as exc:
        within(
            folder,
            lambda: read_audit(
                folder,
                submission_ids=("alpha",),
                has_responses=np.array([[True, True]]),
                question_ids=("q-1",),
                check_ids=(("I1",),),
            ),
        )
    got = {(p.file, p.message) for p in exc.value.problems}
    assert (str(bad), SPECIAL[kind]) in got
    assert any(f == str(folder / "a.jsonl") for f, _ in got)  # the other file was read


def test_a_workbench_state_file_or_image_is_refused_by_name(tmp_path: Path, kind: str) -> None:
    wb = Workbench.open(tmp_path / "wb")
    wb.write("ok.json", {"a": 1})
    plant(wb.path("state.json"), kind)
    with pytest.raises(NotRegularFileError):
        within(wb.root, lambda: wb.read("state.json"))
    assert wb.read("ok.json") == {"a": 1}
    (tmp_path / "a.png").write_bytes(b"\x89PNG")
    plant(tmp_path / "b.png", kind)
    manifest = tmp_path / "images.csv"
    manifest.write_text(
        "image_id,file,entity,domain,popularity,egocentric\n"
        "img-1,a.png,Pad thai,food,head,true\n"
        "img-2,b.png,Ginkgo,plants,head,false\n",
        encoding="utf-8",
    )
    with pytest.raises(ProblemsError) as exc:
        within(tmp_path, lambda: read_manifest(manifest))
    assert [(p.line, p.message) for p in exc.value.problems] == [
        (3, f"image file b.png: {SPECIAL[kind]}")
    ]


@pytest.mark.slow
def test_import_batch_refuses_a_special_result_file_by_name_and_ingests_the_other(
    tmp_path: Path, kind: str
) -> None:
    root = tmp_path / "p"
    cfg = write_project(root, openai_judge("http://127.0.0.1:9/v1", "local"))
    out = tmp_path / "requests"
    r = CliRunner().invoke(main, ["judge", "--config", str(cfg), "--export-batch", str(out)])
    assert r.exit_code == 0, r.output
    (req,) = out.glob("*.jsonl")
    results = tmp_path / "results.jsonl"
    run_batch_file(req, results, hashed_verdict)
    bad = plant(tmp_path / "more.jsonl", kind)
    args = ["judge", "--config", str(cfg), "--import-batch", str(bad), str(results)]
    r = within(tmp_path, lambda: CliRunner().invoke(main, args))
    if kind == "folder":  # refused by the command line's own check, before any file is read
        assert r.exit_code == 2 and f"'{bad}' is a directory" in r.output, r.output
        return
    assert r.exit_code == 1 and f"{bad}: {SPECIAL[kind]}" in r.output, r.output
    assert len(set(verdict_keys(root))) == TOTAL_CALLS  # the other file, whole
