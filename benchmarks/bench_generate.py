"""Throughput of ``gamut generate`` against a slow fake provider.

The fake OpenAI-compatible server (tests/fakes/llm_server.py) answers every request after a fixed
latency, in its own process. With latency L and concurrency C the ideal rate is C / L responses
per second; the target is at least 85% of it (2,000 multimodal questions, each with a real PNG
sent as base64, every answer appended and fsynced). Prints the measured figures.

    .venv/bin/python benchmarks/bench_generate.py [--questions 2000] [--latency 0.5]
                                                  [--concurrency 32] [--provider openai]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gamut.config import load_config  # noqa: E402
from gamut.model_runner import GenerateOptions, generate  # noqa: E402
from gamut.project import Project  # noqa: E402
from scoring.questions import Setting  # noqa: E402
from tests.model_runner.project import CONFIG, write_image  # noqa: E402

_SERVER = """
import sys, time
from tests.fakes.llm_server import FakeLLMServer
srv = FakeLLMServer(responder=lambda body: "A complete answer, with several facts in it.",
                    latency=float(sys.argv[1])).start()
print(srv.port, flush=True)
sys.stdin.read()
srv.stop()
"""


def _project(root: Path, n: int) -> Path:
    for i in range(8):
        write_image(root / "images" / f"img-{i}.png", "PNG", i)
    with (root / "questions.jsonl").open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "question_id": f"q-{i:05d}",
                        "image_id": f"img-{i % 8}",
                        "image": f"images/img-{i % 8}.png",
                        "domain": "food",
                        "popularity": "head",
                        "egocentric": False,
                        "question": f"What is this dish ({i}) and how is it made?",
                        "text_only_question": f"What is dish {i} and how is it made?",
                    }
                )
                + "\n"
            )
    config = root / "gamut.toml"
    config.write_text(
        CONFIG,
        encoding="utf-8",
    )
    return config


def _reference(port: int, n: int, concurrency: int) -> float:
    """Responses/s of the plainest client: ``post`` calls, a semaphore, nothing written."""
    import openai

    async def go() -> float:
        client = openai.AsyncOpenAI(
            api_key="sk-bench", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0
        )
        sem = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with sem:
                body = {
                    "model": "fake",
                    "max_tokens": 16,
                    "messages": [{"role": "user", "content": f"question {i}"}],
                }
                await client.post("/chat/completions", body=body, cast_to=str)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        rate = n / (time.perf_counter() - t0)
        await client.close()
        return rate

    return asyncio.run(go())


def main() -> None:
    """Run the benchmark and print responses/s and the share of the ideal rate."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--provider", choices=["openai", "anthropic"], default="openai")
    ap.add_argument(
        "--reference",
        action="store_true",
        help="also time a bare SDK loop (no files, no images) on the same server, "
        "to tell this code's cost from a busy machine's",
    )
    args = ap.parse_args()
    ideal = args.concurrency / args.latency
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(args.latency)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        base = f"http://127.0.0.1:{port}" + ("/v1" if args.provider == "openai" else "")
        with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp:
            cfg = load_config(_project(Path(tmp), args.questions))
            opts = GenerateOptions(
                submission_id="bench",
                model="fake",
                provider=args.provider,
                base_url=base,
                api_key_env="BENCH_KEY",
                settings=(Setting.MULTIMODAL,),
                concurrency=args.concurrency,
                max_retries=0,
            )
            t0, c0 = time.perf_counter(), time.process_time()
            result = generate(Project(cfg), opts, environ={**os.environ, "BENCH_KEY": "sk-bench"})
            elapsed = time.perf_counter() - t0
            cpu = time.process_time() - c0
            lines = (Path(tmp) / "submissions/bench/multimodal.jsonl").read_text().count("\n")
        ref = _reference(port, args.questions, args.concurrency) if args.reference else None
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=30)
    rate = lines / elapsed
    print(
        f"gamut generate ({args.provider}): {lines} responses in {elapsed:.1f}s "
        f"with latency {args.latency:g}s and concurrency {args.concurrency}"
    )
    print(
        f"responses/s: {rate:.1f}; ideal {ideal:.0f}/s; ratio {rate / ideal:.3f} "
        f"(target >= 0.85); failures {len(result.failures)}"
    )
    print(
        f"of which start-up (SDK import, checks, provenance): {elapsed - result.elapsed_s:.1f}s; "
        f"steady rate {lines / result.elapsed_s:.1f}/s"
    )
    print(
        f"client CPU: {cpu:.1f}s ({cpu / max(lines, 1) * 1000:.2f} ms per response); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    if ref is not None:
        print(
            f"reference, a bare SDK loop on this machine now: {ref:.1f}/s "
            f"(ratio {ref / ideal:.3f}); gamut generate reaches {rate / ref:.2f} of it"
        )


if __name__ == "__main__":
    main()
