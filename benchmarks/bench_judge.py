"""Judge throughput against the fake provider (200 ms per call) over real HTTP, with the real
SQLite cache. Prints the measured figures; targets: >= 0.90 of the ideal 80 checks/s at
max_concurrency 16, >= 0.80 of the ideal 320 checks/s at 64 over 5,000 checks, and with 10% of
requests faulted every check ends with exactly one stored verdict.

Throughput is bounded by the client's CPU per call (mostly the SDK's HTTP stack), so the script
also prints CPU per call and a bare-SDK baseline measured on the same machine at the same time:
on a busy machine both fall together, and their ratio is the judge's own overhead.

Run: ``.venv/bin/python benchmarks/bench_judge.py`` (from the repository root).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from gamut import pipeline
from gamut.project import Project

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yardsticks import report as report_figure

from gamut.config import load_config
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMProcess

LATENCY = 0.2
CHECKS_PER_QUESTION = 20
ANSWER = (
    "It is pad thai, a stir-fried rice noodle dish from Thailand made with tamarind paste, "
    "fish sauce, palm sugar, egg, tofu and shrimp, topped with peanuts and lime. "
) * 4


def make_project(root: Path, n_checks: int, base_url: str, concurrency: int) -> Path:
    """A project with one submission whose responses need ``n_checks`` judge calls."""
    n_q = n_checks // CHECKS_PER_QUESTION
    (root / "rubrics").mkdir(parents=True)
    sub = root / "submissions" / "bench-model"
    sub.mkdir(parents=True)
    with (root / "questions.jsonl").open("w") as q, (sub / "multimodal.jsonl").open("w") as r:
        for i in range(n_q):
            qid = f"food-{i:05d}"
            q.write(
                json.dumps(
                    {
                        "question_id": qid,
                        "image_id": f"img-{i}",
                        "image": None,
                        "domain": "food",
                        "popularity": "head",
                        "egocentric": False,
                        "question": f"What is dish {i}?",
                        "text_only_question": f"What is pad thai number {i}?",
                    }
                )
                + "\n"
            )
            r.write(json.dumps({"question_id": qid, "response": f"{i}: {ANSWER}"}) + "\n")
            members = [f"ingredient {k} of dish {i}" for k in range(CHECKS_PER_QUESTION)]
            (root / "rubrics" / f"{qid}.json").write_text(
                json.dumps(
                    {
                        "question_id": qid,
                        "snippets": [],
                        "items": [
                            {
                                "id": "I1",
                                "type": "strict_list",
                                "tier": "answer_critical",
                                "topic": "core ingredients",
                                "members": members,
                            }
                        ],
                    }
                )
            )
    cfg = root / "gamut.toml"
    cfg.write_text(
        '[benchmark]\nquestions = "questions.jsonl"\nrubrics = "rubrics"\n'
        'rubrics_public = true\nsubmissions = "submissions"\n\n'
        '[judges.bench]\nprovider = "openai"\n'
        f'model = "bench"\nbase_url = "{base_url}"\napi_key_env = "GAMUT_BENCH_KEY"\n'
        f'family = "bench"\nmax_concurrency = {concurrency}\nprimary = true\nmax_retries = 6\n'
        "timeout_s = 30\n"
    )
    return cfg


def run(n_checks: int, concurrency: int, fault_rate: float = 0.0) -> None:
    """Judge ``n_checks`` checks once and print throughput, ratio to ideal and calls/verdict."""
    os.environ.setdefault("GAMUT_BENCH_KEY", "sk-bench")
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeLLMProcess(latency=LATENCY, fault_rate=fault_rate, seed=11) as srv,
    ):
        cfg = load_config(make_project(Path(tmp), n_checks, srv.openai_base_url, concurrency))
        t0, c0 = time.perf_counter(), time.process_time()
        report = pipeline.judge(Project(cfg), progress=NullProgress())
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        first_failures = len(report.failures)
        reasks = report.judges["bench"].reasks
        reruns = 0
        while report.failures and reruns < 3:  # what `gamut judge` says to do: run it again
            reruns += 1
            report = pipeline.judge(Project(cfg), progress=NullProgress())
        keys = Project(cfg).ledger.verdicts(["key"])["key"].to_pylist()
        verdicts = len(set(keys))
        per_check = max(Counter(keys).values(), default=0)
        s = report.judges["bench"]
        stats = srv.stats()
        ideal = concurrency / LATENCY
        rate = n_checks / elapsed
        faults = ", ".join(f"{k} {v}" for k, v in sorted(stats["faults"].items())) or "none"
        print(
            f"max_concurrency {concurrency:>3}, {n_checks:>5} checks, faults {fault_rate:.0%}: "
            f"{elapsed:6.2f} s, {rate:6.1f} checks/s, ideal {ideal:.0f}/s, "
            f"ratio {rate / ideal:.3f}; judge CPU {cpu / n_checks * 1000:.2f} ms per check"
        )
        report_figure(f"judging, concurrency {concurrency}, faults {fault_rate:.0%}",
                      f"{rate:.1f} checks/s", f"ideal {ideal:.0f}/s")  # fmt: skip
        print(
            f"    verdicts stored {verdicts}/{n_checks} (at most {per_check} per check), "
            f"failures {len(s.failures)}, HTTP requests {stats['requests']}, "
            f"calls per verdict {stats['requests'] / max(verdicts, 1):.3f} "
            f"(judge-level re-asks {reasks}); injected: {faults}"
        )
        if fault_rate:
            ok = verdicts == n_checks and not s.failures and per_check == 1
            print(
                f"    first run: {first_failures} check(s) failed (a check whose replies were "
                f"unusable three times in a row, re-asked twice); reruns needed: {reruns}"
            )
            print(f"    every check ended with exactly one stored verdict: {ok}")
        for f in s.failures[:5]:
            print(f"    failure: {f.kind}: {f.message[:200]}")


def bare_sdk(n: int, concurrency: int) -> None:
    """The bare SDK (typed ``chat.completions.create``, nothing else) on the same server."""
    import asyncio

    import openai

    with FakeLLMProcess(latency=LATENCY) as srv:

        async def go() -> tuple[float, float]:
            client = openai.AsyncOpenAI(base_url=srv.openai_base_url, api_key="sk-bench")
            sem = asyncio.Semaphore(concurrency)

            async def one(i: int) -> None:
                async with sem:
                    await client.chat.completions.create(
                        model="bench",
                        temperature=0,
                        max_tokens=400,
                        messages=[{"role": "user", "content": f"{i}: {ANSWER}"}],
                    )

            t0, c0 = time.perf_counter(), time.process_time()
            await asyncio.gather(*(one(i) for i in range(n)))
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
            await client.close()
            return elapsed, cpu

        elapsed, cpu = asyncio.run(go())
    ideal = concurrency / LATENCY
    print(
        f"bare SDK baseline, max_concurrency {concurrency:>3}, {n:>5} calls: "
        f"{n / elapsed:6.1f} calls/s, ratio {n / elapsed / ideal:.3f}; "
        f"client CPU {cpu / n * 1000:.2f} ms per call"
    )


def main() -> None:
    """Run the measurements (the bare-SDK baselines show what this machine allows)."""
    import openai  # noqa: F401  (import time is not judge time)

    print(
        f"fake provider latency {LATENCY * 1000:.0f} ms per call, server in its own process; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    bare_sdk(800, 16)
    bare_sdk(2000, 64)
    run(800, 16)
    run(5000, 64)
    run(2000, 64, fault_rate=0.10)


if __name__ == "__main__":
    main()
