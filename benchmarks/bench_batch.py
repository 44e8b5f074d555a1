"""Batch mode at paper scale: one submission (1,813 questions x 2 settings x 35 checks) for three
batch-mode judges (two OpenAI-compatible, one Anthropic), about 380,000 requests, against the
fake batch service in its own process, over real HTTP with the real SDKs.

Prints the measured figures beside the targets: building and uploading every request file at
most 60 s; ingesting every result at most 60 s; peak memory of the judging process at most
1.5 GB. The fake service computes the replies between the two steps (that is the provider's
time, not the judge's).

Run: ``.venv/bin/python benchmarks/bench_batch.py`` (from the repository root).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yardsticks import report as report_figure

from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.batch.book import BatchBook
from scoring.judge.progress import NullProgress
from tests.fakes.batch_server import FakeBatchProcess

N_QUESTIONS = 1813
CHECKS = 35
TARGET_SUBMIT_S = 60.0
TARGET_INGEST_S = 60.0
TARGET_RSS_GB = 1.5
ANSWER = (
    "This is pad thai, a stir-fried rice noodle dish from central Thailand. It is made with "
    "soaked dried rice noodles, tamarind paste, fish sauce and palm sugar, fried with garlic, "
    "shallots, egg and firm tofu, and usually shrimp or chicken; it is topped with crushed "
    "peanuts, bean sprouts, garlic chives and a wedge of lime. "
) * 4


#: The three judges: name, provider, which of the two URLs, primary.
JUDGES = (
    ("gpt", "openai", 0, True),
    ("claude", "anthropic", 1, False),
    ("gemini", "openai", 0, False),
)


def make_project(
    root: Path,
    openai_url: str,
    anthropic_url: str,
    judge_specs: tuple[tuple[str, str, int, bool], ...] = JUDGES,
) -> Path:
    """Questions, rubrics of 35 checks each, one submission in both settings, three judges
    (``judge_specs``: name, provider, 0 for ``openai_url`` or 1 for ``anthropic_url``, primary)."""
    (root / "rubrics").mkdir(parents=True)
    sub = root / "submissions" / "paper-model"
    sub.mkdir(parents=True)
    with (
        (root / "questions.jsonl").open("w") as q,
        (sub / "multimodal.jsonl").open("w") as mm,
        (sub / "text_only.jsonl").open("w") as to,
    ):
        for i in range(N_QUESTIONS):
            qid = f"food-{i:05d}"
            q.write(json.dumps({
                "question_id": qid, "image_id": f"img-{i}", "image": None, "domain": "food",
                "popularity": "head", "egocentric": False, "question": f"What is dish {i}?",
                "text_only_question": f"What is pad thai number {i}?",
            }) + "\n")  # fmt: skip
            mm.write(json.dumps({"question_id": qid, "response": f"{i}: {ANSWER}"}) + "\n")
            to.write(json.dumps({"question_id": qid, "response": f"{i} (text): {ANSWER}"}) + "\n")
            members = [
                f"names ingredient number {k} of dish {i} by its name" for k in range(CHECKS)
            ]
            rubric = {"question_id": qid, "snippets": [], "items": [
                {"id": "I1", "type": "strict_list", "tier": "answer_critical",
                 "topic": "core ingredients", "members": members}]}  # fmt: skip
            (root / "rubrics" / f"{qid}.json").write_text(json.dumps(rubric))
    judges = ""
    for name, provider, which, primary in judge_specs:
        url = (openai_url, anthropic_url)[which]
        judges += (
            f'[judges.{name}]\nprovider = "{provider}"\nmodel = "{name}-judge"\n'
            f'base_url = "{url}"\napi_key_env = "GAMUT_BENCH_KEY"\nfamily = "{name}"\n'
            f'primary = {"true" if primary else "false"}\nmode = "batch"\n'
            "batch_price_in_per_mtok = 1.25\nbatch_price_out_per_mtok = 5.0\n\n"
        )
    cfg = root / "gamut.toml"
    cfg.write_text(
        '[benchmark]\nquestions = "questions.jsonl"\nrubrics = "rubrics"\nrubrics_public = true\n'
        'submissions = "submissions"\n\n' + judges
    )
    return cfg


def peak_gb() -> float:
    """Peak resident memory of this process so far, in GB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def finish_batches(project: Project, url: str) -> float:
    """Ask the fake service for every open batch, which makes it compute the replies."""
    t0 = time.perf_counter()
    book = BatchBook(project.ledger)
    for j in project.judges(need_keys=False):
        for rec in book.open_batches(j.identity):
            path = "/v1/messages/batches/" if j.config.provider == "anthropic" else "/v1/batches/"
            with urllib.request.urlopen(url + path + rec.batch_id, timeout=600) as r:
                r.read()
    return time.perf_counter() - t0


def main() -> None:
    """Submit, let the service answer, ingest; print the figures."""
    import anthropic  # noqa: F401  (import time is not judge time)
    import openai  # noqa: F401

    os.environ.setdefault("GAMUT_BENCH_KEY", "sk-bench")
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall times stretch "
        "with the load; the CPU seconds do not)"
    )
    with tempfile.TemporaryDirectory() as tmp, FakeBatchProcess() as srv:
        cfg = make_project(Path(tmp), srv.openai_base_url, srv.anthropic_base_url)
        quiet = NullProgress()
        t0 = time.perf_counter()
        project = Project(load_config(cfg))
        project.units()
        project.judges(need_keys=True)
        t_inputs = time.perf_counter() - t0
        t0, c0, s0 = time.perf_counter(), time.process_time(), srv.cpu_s()
        report = pipeline.judge(project, progress=quiet)
        t_submit, c_submit = time.perf_counter() - t0, time.process_time() - c0
        s_submit = srv.cpu_s() - s0
        rss_submit = peak_gb()
        n = sum(s.submitted for s in report.judges.values())
        batches = sum(s.batches_submitted for s in report.judges.values())
        print(
            f"inputs: {N_QUESTIONS} questions x 2 settings x {CHECKS} checks x 3 judges, read "
            f"and compiled in {t_inputs:.1f} s"
        )
        ok = "ok" if t_submit <= TARGET_SUBMIT_S else "MISSED"
        print(
            f"build and upload: {n:,} requests in {batches} batches in {t_submit:.1f} s "
            f"(target <= {TARGET_SUBMIT_S:.0f} s): {ok}; CPU: judge {c_submit:.1f} s, "
            f"fake service {s_submit:.1f} s"
        )
        report_figure("batch build and upload", f"{t_submit:.1f} s",
                      f"target {TARGET_SUBMIT_S:.0f} s")  # fmt: skip
        for s in report.judges.values():
            print(f"    {s.judge}: {s.submitted:,} requests in {s.batches_submitted} batches")
        del project, report  # the next step is another run (in production, another process)
        gc.collect()
        t_server = finish_batches(Project(load_config(cfg)), srv.url)
        gc.collect()
        print(f"fake service computed the replies in {t_server:.1f} s (provider time)")
        t0, c0, s0 = time.perf_counter(), time.process_time(), srv.cpu_s()
        report = pipeline.judge(Project(load_config(cfg)), progress=quiet)
        t_ingest, c_ingest = time.perf_counter() - t0, time.process_time() - c0
        s_ingest = srv.cpu_s() - s0
        judged = sum(s.judged for s in report.judges.values())
        print(
            f"ingest: {judged:,} verdicts in {t_ingest:.1f} s (target <= "
            f"{TARGET_INGEST_S:.0f} s): {'ok' if t_ingest <= TARGET_INGEST_S else 'MISSED'}; "
            f"CPU: judge {c_ingest:.1f} s, fake service {s_ingest:.1f} s; in flight after: "
            f"{sum(s.in_flight for s in report.judges.values())}, failures: {len(report.failures)}"
        )
        report_figure("batch ingest", f"{t_ingest:.1f} s", f"target {TARGET_INGEST_S:.0f} s")
        for line in report.summary_lines():
            print("    " + line)
        peak = peak_gb()
        print(
            f"peak memory: {peak:.2f} GB (after submitting {rss_submit:.2f} GB; target <= "
            f"{TARGET_RSS_GB} GB): {'ok' if peak <= TARGET_RSS_GB else 'MISSED'}"
        )
        keys = Project(load_config(cfg)).ledger.verdicts(["key"])["key"]
        unique = len(set(keys.to_pylist()))
        print(f"verdicts in the ledger: {len(keys):,} ({unique:,} distinct) of {n:,} requested")


if __name__ == "__main__":
    main()
