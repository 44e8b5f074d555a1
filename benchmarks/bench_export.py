"""``gamut judge --export-batch`` at paper scale, beside a minimal script writing the same lines.

One new submission (1,813 questions x 2 settings x 35 checks) for three self-hosted judges
(provider ``openai``, as for vLLM): 380,730 requests. Each in a process of its own:

- **ours**: ``gamut judge --export-batch DIR`` (the whole command: project, rubrics, plans, keys,
  the request files, each written to a temporary file and renamed);
- **minimal**: the yardstick, no product code: orjson writes the same lines from the inputs
  gamut's own code dumped beforehand (outside any timing: texts, checks, judge settings and each
  request's ``custom_id``), the shared part of each prompt rendered once per response, the files
  split at the same limits (50,000 requests, 190 MB).

Prints wall time, CPU time and peak memory of each, in alternating rounds (``--rounds``, default
2), whether the two wrote the same lines (compared byte for byte, parsed where they differ), and
whether the targets are met by the best of each: ours within 2x the minimal script's wall time,
peak memory under 300 MB. On the commit before this work (ba93773) it printed 75.69 s, 25.03 s
CPU and 1,007 MB for ours against 14.02 s and 3.68 s CPU for the minimal script (5.40x wall).

Run: ``.venv/bin/python benchmarks/bench_export.py [--keep DIR]`` (from the repository root).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_import import SELF_HOSTED, _measure  # noqa: E402

TARGET_RATIO = 2.0
TARGET_RSS_MB = 300
#: OpenAI's per-file limits (``scoring.judge.batch.openai_lines.OPENAI_LIMITS``).
MAX_REQUESTS, MAX_BYTES = 50_000, 190_000_000
BEFORE = (
    "before (ba93773, this benchmark, load average 15 on 2 CPUs): ours 75.69 s wall, 25.03 s "
    "CPU, 1007 MB; the minimal script 14.02 s wall, 3.68 s CPU, 72 MB (5.40x wall, 6.81x CPU); "
    "issue 33: 18.8 s and 1.0 GB against 3.5 s and 59 MB"
)


def setup(root: Path) -> None:
    """The project under ``root / "project"``, and the yardstick's inputs dumped by gamut's own
    code under ``root / "inputs"`` (run in a process of its own, outside any timing)."""
    from benchmarks.bench_batch import make_project
    from gamut.config import load_config
    from gamut.project import Project
    from scoring.judge.prompt import _KIND_LABEL
    from scoring.ledger import key_bytes
    from tests.judge.project import write_meta

    cfg = make_project(root / "project", "http://127.0.0.1:9/v1", "", SELF_HOSTED)
    write_meta(root / "project" / "submissions" / "paper-model", "Paper Model")
    plans = Project(load_config(cfg)).pair_plans(need_keys=True)
    inputs = root / "inputs"
    inputs.mkdir()
    t = plans[0].judge.template
    table = plans[0].table
    dump: dict[str, Any] = {
        "system": t.system,
        "shared": t.shared,
        "check": t.check,
        "units": [
            [u.question, u.response, int(o), int(c)]
            for u, o, c in zip(plans[0].units, table.unit_offset, table.unit_count, strict=True)
        ],
        "checks": [[c.text, _KIND_LABEL.get(c.kind, c.kind.value)] for c in table.checks],
        "judges": [],
    }
    for p in plans:
        j = p.judge.config
        dump["judges"].append([p.judge.name, j.model, j.temperature, j.token_limit_key,
                               j.max_tokens, j.structured_output])  # fmt: skip
        (inputs / f"{p.judge.name}.keys").write_bytes(b"".join(key_bytes(p.keys_of())))
    (inputs / "inputs.json").write_text(json.dumps(dump))


_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {
            "type": "string",
            "enum": ["meets", "partially_meets", "missing", "contradicts"],
        },
        "rationale": {"type": "string"},
    },
    "required": ["verdict", "rationale"],
    "additionalProperties": False,
}


def _fence(response: str) -> str:
    salt = 0
    while True:
        fence = f"<<<ANSWER-{hashlib.sha256(f'{salt}:{response}'.encode()).hexdigest()[:12]}>>>"
        if fence not in response:
            return fence
        salt += 1


def _fill(template: str, values: dict[str, str]) -> str:
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values.get(m[1], m[0]), template)


def minimal(inputs: Path, out: Path) -> int:
    """The yardstick: every request line written with orjson. Returns the lines written."""
    import orjson

    d = orjson.loads((inputs / "inputs.json").read_bytes())
    lines = 0
    for name, model, temperature, token_key, max_tokens, structured in d["judges"]:
        keys = (inputs / f"{name}.keys").read_bytes()
        files, count, size, at, f = 0, 0, 0, 0, None
        for question, response, offset, n in d["units"]:
            values = {"question": question, "response": response, "fence": _fence(response)}
            shared = _fill(d["shared"], values)
            for text, kind in d["checks"][offset : offset + n]:
                check = _fill(d["check"], {"check": text, "kind": kind})
                body: dict[str, Any] = {
                    "model": model,
                    "messages": [
                        {"role": "system", "content": d["system"]},
                        {"role": "user", "content": shared + "\n\n" + check},
                    ],
                    "temperature": temperature,
                    token_key: max_tokens,
                }
                if structured:
                    schema = {"name": "verdict", "strict": True, "schema": _SCHEMA}
                    body["response_format"] = {"type": "json_schema", "json_schema": schema}
                cid, at = keys[at : at + 32].hex(), at + 32
                line = orjson.dumps(
                    {
                        "custom_id": cid,
                        "method": "POST",
                        "url": "/v1/chat/completions",
                        "body": body,
                    }
                )
                if f is None or count >= MAX_REQUESTS or size + len(line) + 1 > MAX_BYTES:
                    if f is not None:
                        f.close()
                    files += 1
                    f = (out / f"{name}-1-{files:04d}.jsonl").open("wb")
                    count = size = 0
                f.write(line + b"\n")
                count += 1
                size += len(line) + 1
                lines += 1
        if f is not None:
            f.close()
    return lines


def same_lines(ours: Path, yard: Path) -> str:
    """Whether the two folders hold the same files of the same lines (each parsed and compared:
    the same custom ids and bodies), and whether they are byte for byte the same."""
    import orjson

    a, b = sorted(ours.glob("*.jsonl")), sorted(yard.glob("*.jsonl"))
    if [p.name for p in a] != [p.name for p in b]:
        raise SystemExit(f"different files: {[p.name for p in a]} and {[p.name for p in b]}")
    exact = True
    for pa, pb in zip(a, b, strict=True):
        with pa.open("rb") as fa, pb.open("rb") as fb:
            for n, (la, lb) in enumerate(zip(fa, fb, strict=True), 1):
                if la != lb:
                    exact = False
                    if orjson.loads(la) != orjson.loads(lb):
                        raise SystemExit(f"{pa.name} line {n} differs:\n{la[:300]!r}\n{lb[:300]!r}")
    return "byte for byte" if exact else "the same JSON values (not the same bytes)"


def main() -> None:
    """Build the project, then measure both, each in its own process, in alternating rounds (the
    best of each is compared: other work on the machine only adds)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", type=Path, default=None, help="build the project here and keep it")
    ap.add_argument("--rounds", type=int, default=2, help="measurements of each (default 2)")
    ap.add_argument("--setup", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--minimal", nargs=2, metavar=("INPUTS", "OUT"), help=argparse.SUPPRESS)
    ns = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GAMUT_BENCH_KEY": "sk-bench"}
    if ns.setup:
        setup(ns.setup)
        return
    if ns.minimal:
        print(f"{minimal(Path(ns.minimal[0]), Path(ns.minimal[1]))} lines")
        return
    tmp = tempfile.mkdtemp(prefix="gamut-bench-export-") if ns.keep is None else None
    root = ns.keep if ns.keep is not None else Path(tmp or "")
    try:
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run([sys.executable, __file__, "--setup", str(root)], env=env, check=True)
        cfg = root / "project" / "gamut.toml"
        gamut = [sys.executable, "-m", "gamut", "judge", "--config", str(cfg), "--export-batch"]
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        yards, ours = [], []
        for k in range(1, ns.rounds + 1):
            for d in ("ours", "minimal"):
                shutil.rmtree(root / d, ignore_errors=True)
            (root / "minimal").mkdir()
            yards.append(_measure([sys.executable, __file__, "--minimal", str(root / "inputs"),
                                   str(root / "minimal")], ROOT, env))  # fmt: skip
            ours.append(_measure([*gamut, str(root / "ours")], ROOT, env))
            for name, (wall, cpu, rss, _) in (("ours", ours[-1]), ("minimal", yards[-1])):
                print(f"round {k}: {name:8s} wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak RSS "
                      f"{rss * 1000:5.0f} MB")  # fmt: skip
        files = sorted((root / "ours").glob("*.jsonl"))
        n = sum(1 for p in files for _ in p.open("rb"))
        size = sum(p.stat().st_size for p in files) / 1e6
        print(f"{n:,} request lines in {len(files)} files ({size:.0f} MB)")
        print(
            f"ours and minimal wrote the same lines: {same_lines(root / 'ours', root / 'minimal')}"
        )
        best, yard = min(ours), min(yards)
        ratio = best[0] / yard[0]
        rss = max(o[2] for o in ours) * 1000
        print(
            f"best: ours {best[0]:.2f} s wall ({best[1]:.2f} s CPU, {best[2] * 1000:.0f} MB), "
            f"minimal {yard[0]:.2f} s wall ({yard[1]:.2f} s CPU, {yard[2] * 1000:.0f} MB)"
        )
        print(
            f"ours / minimal: {ratio:.2f}x wall, {best[1] / yard[1]:.2f}x CPU (target <= "
            f"{TARGET_RATIO:.0f}x wall): {'met' if ratio <= TARGET_RATIO else 'MISSED'}; peak "
            f"RSS {rss:.0f} MB (target < {TARGET_RSS_MB} MB): "
            f"{'met' if rss < TARGET_RSS_MB else 'MISSED'}"
        )
        print(BEFORE)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
