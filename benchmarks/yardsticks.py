"""Minimal scripts doing the work of a gamut command with DuckDB and hashlib: the yardsticks the
benchmarks print beside gamut's figures (issue 21). Not product code: no checks of hostile input,
no named errors, no atomic writes; only the work itself.

Each runs in a process of its own (``python benchmarks/yardsticks.py WHAT ARGS...``), so that its
wall time and peak memory are measured like a gamut command's (:func:`measure`).

- ``judge LEDGER PLANS OUT``: the cached judge step: the plans' keys anti-joined against the
  ledger's (what would be judged: nothing), then the verdict table written by joining them (the
  same rows as gamut's, in DuckDB's order).
- ``verify LEDGER``: hash every file, load every verdict shard, check ranges and duplicate keys.
- ``pull ENDPOINT REPO DEST``: download every file of the dataset, then ``verify`` it.

``dump-plans CONFIG OUT`` (run outside any timing) writes the plans' keys and ids, from gamut's
own code, for ``judge``.
"""

from __future__ import annotations

import glob
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[
        float, float, str]:  # fmt: skip
    """Run ``args`` in a process of its own: wall seconds, its own peak RSS in GB (``wait4``),
    and its output; exits naming the command when it fails."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    out = proc.stdout.read() if proc.stdout is not None else ""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}):\n{out}")
    return elapsed, usage.ru_maxrss / 1e6, out


def run_child(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, float, float, str]:
    """Run ``args`` in a process of its own, its output kept in temporary files (no pipe for it
    to fill): wall seconds, CPU seconds, its own peak RSS in MB (``wait4``) and its standard
    output; exits naming the command, with the end of its standard error, when it fails."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(args)[:300]} failed:\n{err.read().decode()[-4000:]}")
        cpu = usage.ru_utime + usage.ru_stime
        return wall, cpu, usage.ru_maxrss / 1024.0, out.read().decode()


def pulled_ledger_only(root: Path) -> None:
    """Leave the project at ``root`` with its local store as a new machine has it after
    ``gamut ledger pull``: the ledger, and no other local state (the results folder is not
    committed: no verdict table, no usage table beside it)."""
    import shutil

    from scoring.verdicts import USAGE_TABLE, VERDICT_TABLE

    for p in (root / ".gamut").iterdir():
        if p.name == "ledger":
            continue
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()
    for table in (VERDICT_TABLE, USAGE_TABLE):
        (root / "results" / table).unlink(missing_ok=True)


#: The file ``make bench`` (``benchmarks/table.py``) collects the figures in, one JSON line each.
REPORT_ENV = "GAMUT_BENCH_REPORT"


def report(figure: str, measured: str, yardstick: str) -> None:
    """Hand one figure, beside its yardstick (a target, a figure measured before, or a minimal
    script's time), to ``make bench``'s table; nothing when the script runs alone."""
    import json

    path = os.environ.get(REPORT_ENV)
    if path:
        bench = Path(sys.argv[0]).stem
        row = {"bench": bench, "figure": figure, "measured": measured, "yardstick": yardstick}
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


def yardstick(what: str, *args: str) -> list[str]:
    """The command line of one yardstick."""
    return [sys.executable, str(Path(__file__).resolve()), what, *args]


def _sql_list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def _verdicts(con: object, ledger: Path) -> None:
    """A view ``led`` (key, verdict, and what the stamps and the usage table read: model, source,
    calls and tokens) of every verdict shard (a key is taken to be there once: the paper-scale
    ledger has no duplicates, and a minimal script would not look)."""
    files = sorted(glob.glob(str(ledger / "verdicts" / "*.parquet")))
    con.execute(  # type: ignore[attr-defined]
        "CREATE VIEW led AS SELECT key, verdict, model, source, calls, tokens_in, tokens_cached, "
        f"tokens_out FROM read_parquet({_sql_list(files)})"
    )


def judge(ledger: Path, plans: Path, out: Path) -> None:
    """The anti-join (what would be judged), the verdict table, and what ``gamut judge`` writes
    with it: the usage table (calls and tokens per submission, setting, judge and source, beside
    ``out``) and the stamps' model snapshots per judge, submission and setting."""
    import duckdb

    from scoring.verdicts import VERDICT_ORDER

    con = duckdb.connect()
    _verdicts(con, ledger)
    con.execute(f"CREATE VIEW plan AS SELECT * FROM read_parquet('{plans}')")
    todo = con.execute(
        "SELECT count(*) FROM plan ANTI JOIN led USING (key) WHERE NOT plan.empty"
    ).fetchone()
    words = "[" + ", ".join(f"'{v.value}'" for v in VERDICT_ORDER) + "]"
    missing = VERDICT_ORDER.index(next(v for v in VERDICT_ORDER if v.value == "missing"))
    con.execute(
        "COPY (SELECT submission_id, setting, judge, question_id, check_id, kind, tier, "
        f"secondary, {words}[CASE WHEN plan.empty THEN {missing} ELSE led.verdict END + 1] "
        "AS verdict FROM plan LEFT JOIN led USING (key) WHERE plan.empty OR led.verdict IS NOT "
        f"NULL) TO '{out}' (FORMAT parquet)"
    )
    usage = out.with_name("usage.parquet")
    judged = "FROM plan JOIN led USING (key) WHERE NOT plan.empty GROUP BY ALL"
    con.execute(
        "COPY (SELECT submission_id, setting, judge, source, count(*) AS n_verdicts, "
        "sum(calls) AS calls, sum(tokens_in) AS tokens_in, sum(tokens_cached) AS tokens_cached, "
        f"sum(tokens_out) AS tokens_out {judged}) TO '{usage}' (FORMAT parquet)"
    )
    snapshots = con.execute(
        f"SELECT judge, submission_id, setting, list(DISTINCT model ORDER BY model) {judged}"
    ).fetchall()
    print(f"to judge: {todo[0] if todo else '?'}; {len(snapshots)} snapshot lists")


def _digests(root: Path) -> int:
    """SHA-256 of every file under ``root``; the files hashed."""
    n = 0
    for path in sorted(root.rglob("*")):
        if path.is_file():
            h = hashlib.sha256()
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            n += 1
    return n


def verify(ledger: Path) -> None:
    """Hash every file, load every verdict shard, check its ranges and the duplicate keys."""
    import duckdb

    files = _digests(ledger)
    con = duckdb.connect()
    shards = sorted(glob.glob(str(ledger / "verdicts" / "*.parquet")))
    con.execute(
        "CREATE TABLE v AS SELECT key, verdict, tokens_in, tokens_cached, tokens_out, calls, "
        f"latency_s, source FROM read_parquet({_sql_list(shards)})"
    )
    bad = con.execute(
        "SELECT count(*) FROM v WHERE verdict NOT BETWEEN 0 AND 3 OR tokens_in < 0 OR "
        "tokens_cached < 0 OR tokens_out < 0 OR calls < 0 OR NOT isfinite(latency_s) OR "
        "latency_s < 0 OR source NOT IN ('direct', 'batch', 'replay', 'import')"
    ).fetchone()
    dups = con.execute(
        "SELECT count(*) FROM (SELECT key FROM v GROUP BY key HAVING count(*) > 1)"
    ).fetchone()
    print(f"{files} file(s) hashed; {bad[0] if bad else '?'} bad row(s); "
          f"{dups[0] if dups else '?'} key(s) with differing verdicts")  # fmt: skip


def pull(endpoint: str, repo: str, dest: Path) -> None:
    """Download every file of the dataset ``repo`` (8 at a time), then :func:`verify` it."""
    from huggingface_hub import HfApi

    api = HfApi(endpoint=endpoint, token=os.environ["HF_TOKEN"])
    api.snapshot_download(repo, repo_type="dataset", local_dir=dest, max_workers=8)
    verify(dest)


def dump_plans(config: Path, out: Path) -> None:
    """The plans' keys and ids (one row per pair, in the verdict table's order), from gamut."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gamut.config import load_config
    from gamut.project import Project

    plans = Project(load_config(config)).pair_plans()
    parts = []
    at = 0
    for p in plans:
        n = len(p)
        cols: dict[str, pa.Array] = {
            "i": pa.array(np.arange(at, at + n)),
            "key": pa.FixedSizeBinaryArray.from_buffers(
                pa.binary(32), n, [None, pa.py_buffer(p.keys_of())]
            ),
            "judge": pa.array([p.judge.name] * n),
            "empty": pa.array(p.empty),
        }
        for name, (codes, values) in p.id_codes().items():
            cols[name] = pa.array(values).take(pa.array(codes))
        sec = np.array([c.secondary for c in p.table.checks], bool)
        cols["secondary"] = pa.array(sec[p.check])
        parts.append(pa.table(cols))
        at += n
    pq.write_table(pa.concat_tables(parts), out)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    what, rest = sys.argv[1], sys.argv[2:]
    if what == "judge":
        judge(Path(rest[0]), Path(rest[1]), Path(rest[2]))
    elif what == "verify":
        verify(Path(rest[0]))
    elif what == "pull":
        pull(rest[0], rest[1], Path(rest[2]))
    elif what == "dump-plans":
        dump_plans(Path(rest[0]), Path(rest[1]))
    else:
        raise SystemExit(f"unknown yardstick {what!r}")
