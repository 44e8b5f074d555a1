"""``gamut judge --import-batch`` at paper scale, beside the minimal script that does the same work.

One submission (1,813 questions x 2 settings x 35 checks) for three self-hosted judges (provider
``openai``, as for vLLM): ``gamut judge --export-batch`` writes the request files, the fake
``vllm run-batch`` (``tests.fakes.batch_server.run_batch_file``) answers them, and then, each in
a process of its own:

- **ours**: ``gamut judge --import-batch FILES`` (the whole command: project, validation, plans,
  ingest into the ledger, verdict table), with the local store as the export left it (and once
  more with no local store at all);
- **minimal**: the yardstick, no product code: orjson and pyarrow read the output lines, join
  them on ``custom_id`` to the exported requests' keys, build the verdict column and write one
  Parquet shard.

Prints wall time, CPU time and peak memory of each, in alternating rounds (``--rounds``, default
2), and whether the targets are met by the best of each: ours within 2x the minimal script's wall
time, and peak memory under 1.5 GB. The project is built in a process of its own, so that the
measuring process stays small (a child's peak memory counts its parent's at the fork). On the
commit before this work (39e41b3) it printed 32.65 s and 1,134 MB for ours against 6.49 s for
the minimal script (5.03x); issue 21 had measured 31.8 s and 1.19 GB against 5.4 s.

Run: ``.venv/bin/python benchmarks/bench_import.py [--keep DIR]`` (from the repository root).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from yardsticks import report  # noqa: E402

#: The shape of ``benchmarks.bench_batch.make_project`` (not imported here: see :func:`setup`).
N_QUESTIONS, CHECKS = 1813, 35

TARGET_RATIO = 2.0
TARGET_RSS_GB = 1.5
BEFORE = (
    "before (39e41b3, this benchmark): ours 32.65 s wall, 30.21 s CPU, 1134 MB; the minimal "
    "script 6.49 s wall, 6.30 s CPU, 328 MB (5.03x wall); issue 21: 31.8 s, 1.19 GB against 5.4 s"
)
#: Three self-hosted judges (OpenAI batch format).
SELF_HOSTED = (
    ("gpt", "openai", 0, True),
    ("qwen", "openai", 0, False),
    ("gemma", "openai", 0, False),
)
_VERDICTS = ("meets", "partially_meets", "missing", "contradicts")


def _responder(body: dict[str, Any]) -> str:
    """A verdict that depends on the request (so the verdict column is not constant)."""
    import json

    h = int(hashlib.sha256(body["messages"][-1]["content"].encode()).hexdigest()[:8], 16)
    return json.dumps({"verdict": _VERDICTS[h % 4], "rationale": f"Reason {h % 97}."})


def minimal(requests: list[Path], results: list[Path], shard: Path) -> int:
    """The yardstick: the results of ``results`` joined on ``custom_id`` to the keys of
    ``requests``, as one Parquet shard of (key, verdict, model, tokens). Returns the rows."""
    import orjson
    import pyarrow as pa
    import pyarrow.parquet as pq

    codes = {v: i for i, v in enumerate(_VERDICTS)}
    row: dict[bytes, int] = {}
    for path in requests:
        with path.open("rb") as f:
            for line in f:
                row[orjson.loads(line)["custom_id"].encode()] = len(row)
    keys, verdicts, models, t_in, t_out = [], [], [], [], []
    for path in results:
        with path.open("rb") as f:
            for line in f:
                obj = orjson.loads(line)
                cid = obj["custom_id"].encode()
                if cid not in row:
                    raise SystemExit(f"unknown custom_id {cid!r}")
                body = obj["response"]["body"]
                reply = orjson.loads(body["choices"][0]["message"]["content"])
                keys.append(bytes.fromhex(cid.decode()))
                verdicts.append(codes[reply["verdict"]])
                models.append(body["model"])
                t_in.append(body["usage"]["prompt_tokens"])
                t_out.append(body["usage"]["completion_tokens"])
    table = pa.table(
        {
            "key": pa.array(keys, pa.binary(32)),
            "verdict": pa.array(verdicts, pa.int8()),
            "model": pa.array(models, pa.string()),
            "tokens_in": pa.array(t_in, pa.int64()),
            "tokens_out": pa.array(t_out, pa.int64()),
        }
    )
    pq.write_table(table, shard, compression="zstd")
    return table.num_rows


def _measure(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds and peak RSS (GB) of one child process, and its output."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {proc.returncode}:\n{text}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1e6, text


def setup(root: Path, env: dict[str, str]) -> None:
    """The project, its exported requests and their results, under ``root`` (run in a process
    of its own: a child's peak memory counts its parent's at the fork, so the measuring process
    stays small)."""
    from benchmarks import bench_batch
    from benchmarks.bench_batch import make_project
    from tests.fakes.batch_server import run_batch_file
    from tests.judge.project import write_meta

    assert (bench_batch.N_QUESTIONS, bench_batch.CHECKS) == (N_QUESTIONS, CHECKS)
    cfg = make_project(root / "project", "http://127.0.0.1:9/v1", "", SELF_HOSTED)
    write_meta(root / "project" / "submissions" / "paper-model", "Paper Model")
    req, res = root / "requests", root / "results"
    cmd = [sys.executable, "-m", "gamut", "judge", "--config", str(cfg), "--export-batch", str(req)]
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    res.mkdir()
    for p in sorted(req.glob("*.jsonl")):
        run_batch_file(p, res / p.name, _responder)


def _fresh(project: Path, cold: bool = False) -> None:
    """The project's store as the export left it, before any import: no ledger, no working
    index, no verdict table (``cold``: no store at all, as on a machine that did not export)."""
    store = project / ".gamut"
    for p in [store] if cold else [store / "ledger", store / "verdicts.sqlite"]:
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)
    (project / "results" / "verdicts.parquet").unlink(missing_ok=True)


def main() -> None:
    """Build the project and the result files, then measure both, each in its own process, in
    alternating rounds (the best of each is compared: other work on the machine only adds)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", type=Path, default=None, help="build the project here and keep it")
    ap.add_argument("--rounds", type=int, default=2, help="measurements of each (default 2)")
    ap.add_argument("--setup", type=Path, help=argparse.SUPPRESS)
    ap.add_argument(
        "--minimal", nargs=3, metavar=("REQ_DIR", "RES_DIR", "SHARD"), help=argparse.SUPPRESS
    )
    ns = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GAMUT_BENCH_KEY": "sk-bench"}
    if ns.setup:
        setup(ns.setup, env)
        return
    if ns.minimal:
        req, res, shard = (Path(x) for x in ns.minimal)
        n = minimal(sorted(req.glob("*.jsonl")), sorted(res.glob("*.jsonl")), shard)
        print(f"{n} rows")
        return
    tmp = tempfile.mkdtemp(prefix="gamut-bench-import-") if ns.keep is None else None
    root = ns.keep if ns.keep is not None else Path(tmp or "")
    try:
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run([sys.executable, __file__, "--setup", str(root)], env=env, check=True)
        project, req, res = root / "project", root / "requests", root / "results"
        files = sorted(res.glob("*.jsonl"))
        n = sum(1 for p in files for _ in p.open("rb"))
        size = sum(p.stat().st_size for p in files) / 1e6
        print(
            f"{N_QUESTIONS} questions x 2 settings x {CHECKS} checks x {len(SELF_HOSTED)} judges: "
            f"{n:,} result lines in {len(files)} files ({size:.0f} MB); load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        )
        gamut = [sys.executable, "-m", "gamut", "judge", "--config", str(project / "gamut.toml")]
        shard = root / "minimal.parquet"
        yards, ours = [], []
        for k in range(1, ns.rounds + 1):
            yards.append(_measure(
                [sys.executable, __file__, "--minimal", str(req), str(res), str(shard)], ROOT, env
            ))  # fmt: skip
            _fresh(project)
            ours.append(_measure([*gamut, "--import-batch", *map(str, files)], ROOT, env))
            for name, (wall, cpu, rss, _) in (("ours", ours[-1]), ("minimal", yards[-1])):
                print(f"round {k}: {name:8s} wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak RSS "
                      f"{rss * 1000:5.0f} MB")  # fmt: skip
        best, yard = min(ours), min(yards)
        ratio = best[0] / yard[0]
        print(
            f"best: ours {best[0]:.2f} s wall ({best[1]:.2f} s CPU, {best[2] * 1000:.0f} MB), "
            f"minimal {yard[0]:.2f} s wall ({yard[1]:.2f} s CPU, {yard[2] * 1000:.0f} MB)"
        )
        print(
            f"ours / minimal: {ratio:.2f}x wall, {best[1] / yard[1]:.2f}x CPU (target <= "
            f"{TARGET_RATIO:.0f}x wall): {'met' if ratio <= TARGET_RATIO else 'MISSED'}; peak "
            f"RSS {max(o[2] for o in ours):.2f} GB (target < {TARGET_RSS_GB} GB): "
            f"{'met' if max(o[2] for o in ours) < TARGET_RSS_GB else 'MISSED'}"
        )
        report("gamut judge --import-batch", f"{best[0]:.2f} s, {best[2]:.2f} GB",
               f"orjson + pyarrow {yard[0]:.2f} s; target {TARGET_RATIO:.0f}x")  # fmt: skip
        print(BEFORE)
        print("\n".join("    " + ln for ln in best[3].splitlines() if "ingested" in ln))
        again = _measure([*gamut, "--import-batch", *map(str, files)], ROOT, env)
        print(f"the same files again: wall {again[0]:.2f} s")
        print("\n".join("    " + ln for ln in again[3].splitlines() if "ingested" in ln))
        _fresh(project, cold=True)
        cold = _measure([*gamut, "--import-batch", *map(str, files)], ROOT, env)
        print(
            f"ours with no local store at all (no run records of the export): "
            f"wall {cold[0]:.2f} s, CPU {cold[1]:.2f} s, peak RSS {cold[2] * 1000:.0f} MB"
        )
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
