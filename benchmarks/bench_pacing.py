"""Direct judging against a provider's rate limits: a fake provider (its own process) that
enforces requests and tokens per minute as OpenAI does (token buckets holding a second's worth,
429 with ``retry-after`` and OpenAI's ``rate_limit_exceeded`` body) and answers in 2 s. Prints,
per run, the share of the binding limit the judge used and its failures; the target is 0
failures at >= 0.90 of the limit, with the judge told only the provider's published limits
(``requests_per_minute``, ``tokens_per_minute``) and ``max_concurrency = 256``; a last run
tells it nothing and leaves it to back off on 429s (AIMD).

``--scale K`` runs time K times faster: the provider's minute lasts 60/K s and it answers in
2/K s, and the judge is told K times the limits per (real) minute; the requests a second's
burst may hold, the concurrency needed (rate x latency) and the number of requests are those of
the unscaled run. The 20,000-check run uses K = 1 by default (about 17 minutes). K = 2 halves
that but asks the judge for twice the CPU per second (it spends about 5 ms per check): on a
busy shared machine (load average 15 on 2 cores) such a run reached 0.77 of the token limit,
CPU-bound, with 0 failures (budgets holding a quarter second then). K > 2 gives the judge a
larger burst (half a second's worth of its scaled limit) than the provider's (a second of the
unscaled one), which the unscaled run does not have.

The share of the limit is measured twice: at the provider, the rate of the requests it let
through from the first to the last (what the provider sees), and over the whole run's wall time
(which adds planning, the last reply's latency and writing the verdicts: seconds that a busy
machine stretches).

Run: ``.venv/bin/python benchmarks/bench_pacing.py [--quick]`` (from the repository root).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_judge import make_project
from gamut import pipeline
from gamut.config import load_config
from gamut.project import Project
from scoring.judge.progress import NullProgress
from tests.fakes.llm_server import FakeLLMProcess, RateLimits

RPM = 1800
LATENCY_S = 2.0
#: Tokens per request of the benchmark's project as the provider counts them (prompt chars / 4
#: plus max_tokens 400), measured by a first run of the script: used to set the token limit.
TOKENS_PER_REQUEST = 1_236


def run(n_checks: int, scale: float, *, told: bool, tpm_binding: bool = False) -> bool:
    """Judge ``n_checks`` checks against the limited provider once; print the figures."""
    os.environ.setdefault("GAMUT_BENCH_KEY", "sk-bench")
    # the token limit binds (80% of the requests' tokens at the request limit) or not (200%)
    tpm = int(RPM * TOKENS_PER_REQUEST * (0.8 if tpm_binding else 2.0))
    limits = RateLimits(rpm=RPM, tpm=tpm, window_s=60.0 / scale)
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeLLMProcess(latency=LATENCY_S / scale, limits=limits) as srv,
    ):
        cfg_path = make_project(Path(tmp), n_checks, srv.openai_base_url, 256)
        if told:
            with cfg_path.open("a") as fh:
                fh.write(f"requests_per_minute = {int(RPM * scale)}\n")
                fh.write(f"tokens_per_minute = {int(tpm * scale)}\n")
        project = Project(load_config(cfg_path))
        t0, c0 = time.perf_counter(), time.process_time()
        report = pipeline.judge(project, progress=NullProgress())
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        st = srv.stats()
    s = report.judges["bench"]
    minute = 60.0 / scale
    span = st["span_s"]  # from the first accepted request to the last
    per_req = st["tokens"] / max(st["accepted"], 1)
    by_req = (st["accepted"] - 1) / span / (RPM / minute)
    by_tok = (st["tokens"] - per_req) / span / (tpm / minute)
    binding = "tokens" if tpm_binding else "requests"
    share = by_tok if tpm_binding else by_req
    wall_share = (
        n_checks / wall / (RPM / minute)
        if not tpm_binding
        else st["tokens"] / wall / (tpm / minute)
    )
    refused = sum(st["refused"].values())
    mode = "told the limits" if told else "told nothing (AIMD only)"
    print(
        f"{n_checks:>6} checks, scale {scale:g} (minute = {minute:g} s, latency "
        f"{LATENCY_S / scale:g} s), {mode}; {binding} per minute binding:"
    )
    print(
        f"    share of the {binding} limit: {share:.3f} at the provider, {wall_share:.3f} "
        f"over the run's wall time ({wall:.1f} s); requests {by_req:.3f}, tokens "
        f"{by_tok:.3f} of their limits"
    )
    print(
        f"    verdicts {s.judged}/{n_checks}, failures {len(s.failures)}, not attempted "
        f"{s.unfinished}; HTTP requests {st['requests']}, 429s {refused} "
        f"({', '.join(f'{k} {v}' for k, v in st['refused'].items()) or 'none'}), "
        f"avg tokens per request {per_req:.0f}; judge CPU {cpu / n_checks * 1000:.2f} ms "
        f"per check ({cpu / wall:.0%} of one core; load average {os.getloadavg()[0]:.1f})"
    )
    return not s.failures and s.judged == n_checks and (share >= 0.9 or not told)


def main() -> None:
    """The runs of the module's docstring (``--quick``: the 1,800-check ones only)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the 1,800-check runs")
    ap.add_argument("--scale", type=float, default=1.0, help="time scale of the 20,000 run")
    a = ap.parse_args()
    print(
        f"provider: {RPM} requests per minute and a token limit, {LATENCY_S:g} s per reply, "
        f"its own process; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    ok = run(1_800, 1.0, told=True)
    if not a.quick:
        ok &= run(20_000, a.scale, told=True, tpm_binding=True)
    run(1_800, 1.0, told=False)
    print("target met (0 failures, >= 0.90 of the limit when told it):", ok)


if __name__ == "__main__":
    main()
