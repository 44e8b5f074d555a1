"""What a paper-scale submission costs when its score run, the collector and a publish run
overlap: requests sent to the providers per check (target: exactly 1; re-asks of unusable
replies aside, and the fake service gives none).

One submission (1,813 questions x 2 settings x 35 checks) and three batch-mode judges (two
OpenAI-compatible, one Anthropic) against the fake batch service in its own process, over real
HTTP with the real SDKs. Each job has its own store and ledger, as each workflow run has its own
runner; a fourth ledger folder stands for the private Hub dataset (push and pull are
``scoring.ledger.merge`` between folders here; ``benchmarks/bench_ledger.py`` times the Hub).

1. The score run (an approved pull request) submits every check, then pushes.
2. The collector (``--collect-only``) and the publish run (after the merge) pull, then run at
   once, in two processes, collecting the same batches.
3. Both push; the score run pulls and runs again.

Prints the requests the service received beside the checks, each step's wall time, and whether
every check has exactly one verdict everywhere.

Run: ``.venv/bin/python benchmarks/bench_overlap.py`` (from the repository root).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import pyarrow.compute as pc  # noqa: E402
from bench_batch import CHECKS, N_QUESTIONS, make_project  # noqa: E402

from scoring.ledger import KeyScheme, Ledger, merge  # noqa: E402
from tests.fakes.batch_server import FakeBatchProcess  # noqa: E402
from tests.judge.project import write_meta  # noqa: E402

JOBS = ("score", "collect", "publish")
SUBMISSION = "paper-model"


def _job_configs(root: Path) -> dict[str, Path]:
    """One config per job, over the same inputs, each with its own store."""
    text = (root / "gamut.toml").read_text()
    for name in ("questions.jsonl", "rubrics", "submissions"):
        text = text.replace(f'= "{name}"', f'= "../{name}"')
    out = {}
    for job in JOBS:
        (root / job).mkdir()
        out[job] = root / job / "gamut.toml"
        out[job].write_text(text)
    return out


def _ledger(folder: Path) -> Ledger:
    return Ledger.open(folder, KeyScheme.public(), held=False)


def _gamut(cfg: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "gamut", "judge", "--config", str(cfg), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _wait(p: subprocess.Popen[bytes], what: str) -> tuple[int, str]:
    out, _ = p.communicate()
    text = out.decode()
    if p.returncode not in (0, 75):
        print(f"{what} exited {p.returncode}:\n{text}")
        raise SystemExit(1)
    return p.returncode, text


def _summary(who: str, out: str) -> None:
    """The per-judge batch counts a ``gamut judge`` printed."""
    for line in out.splitlines():
        if "batches:" in line:
            print(f"   {who}: " + line[: line.find("; tokens")])


def _requests_sent(url: str) -> tuple[int, int]:
    """(requests, batches) the service was sent, by its own listings."""
    n = batches = 0
    for path, count in (
        ("/v1/batches", lambda b: b["request_counts"]["total"]),
        ("/v1/messages/batches", lambda b: sum(b["request_counts"].values())),
    ):
        with urllib.request.urlopen(url + path, timeout=60) as r:
            for b in json.loads(r.read())["data"]:
                n += count(b)
                batches += 1
    return n, batches


def main() -> None:
    """Run the three jobs' interleaving; print the figures."""
    os.environ.setdefault("GAMUT_BENCH_KEY", "sk-bench")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    checks = N_QUESTIONS * 2 * CHECKS * 3
    with tempfile.TemporaryDirectory() as tmp, FakeBatchProcess() as srv:
        root = Path(tmp)
        make_project(root, srv.openai_base_url, srv.anthropic_base_url)
        write_meta(root / "submissions" / SUBMISSION, "Paper Model")
        cfgs = _job_configs(root)
        hub = _ledger(root / "hub-ledger")
        ledgers = {job: root / job / ".gamut" / "ledger" for job in JOBS}

        def push(job: str) -> None:
            merge(hub, _ledger(ledgers[job]))

        def pull(job: str) -> None:
            merge(_ledger(ledgers[job]), hub)

        t0 = time.perf_counter()
        code, _ = _wait(_gamut(cfgs["score"], "--submission", SUBMISSION), "the score run")
        push("score")
        t_score = time.perf_counter() - t0
        print(f"1. score run: submitted, exit {code}, pushed, in {t_score:.1f} s")
        pull("collect")
        pull("publish")
        t0 = time.perf_counter()
        collect = _gamut(cfgs["collect"], "--collect-only")
        publish = _gamut(cfgs["publish"])
        c_code, c_out = _wait(collect, "the collector")
        p_code, p_out = _wait(publish, "the publish run")
        t_both = time.perf_counter() - t0
        print(
            f"2. collector (exit {c_code}) and publish run (exit {p_code}) at once, on their "
            f"own ledgers: {t_both:.1f} s"
        )
        for who, out in (("collector", c_out), ("publish", p_out)):
            _summary(who, out)
        push("collect")
        push("publish")
        pull("score")
        t0 = time.perf_counter()
        code, s_out = _wait(_gamut(cfgs["score"], "--submission", SUBMISSION), "the score run")
        t_again = time.perf_counter() - t0
        print(f"3. score run again after pulling: exit {code} in {t_again:.1f} s")
        _summary("score", s_out)
        sent, batches = _requests_sent(srv.url)
        per_check = sent / checks
        ok = "ok" if sent == checks else "MISSED"
        print(
            f"requests sent: {sent:,} in {batches} batches for {checks:,} checks: "
            f"{per_check:.4f} per check (target 1): {ok}"
        )
        for job in ("hub", *JOBS):
            led = hub if job == "hub" else _ledger(ledgers[job])
            keys = led.verdicts(["key"])["key"]
            distinct = pc.count_distinct(keys).as_py()
            same = "every check once" if distinct == checks else "MISSED"
            print(
                f"   {job} ledger: {distinct:,} keys with a verdict ({same}), in {len(keys):,} "
                "rows (a verdict ingested by two jobs is stored by both; the first counts)"
            )


if __name__ == "__main__":
    main()
