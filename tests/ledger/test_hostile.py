"""Forged and hostile shards: each is named and refused (verify, merge, reading), never trusted
and never a traceback. The hostile files are built here, small
(:mod:`tests.ledger.hostile_shards`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pytest
from click.testing import CliRunner

from gamut.cli import main
from scoring.errors import GamutError
from scoring.ledger import KeyScheme, Ledger, VerdictRecord
from scoring.ledger.keys import sort_key
from scoring.ledger.store import shard_bytes
from scoring.verdicts import Verdict
from tests.hub.conftest import write_config
from tests.ledger import hostile_shards as hs

ROOT = Path(__file__).resolve().parents[2]
SECRET = "ledger-secret-for-tests-" + "0" * 20


def _records(scheme: KeyScheme, n: int, verdict: Verdict = Verdict.MEETS) -> list[VerdictRecord]:
    return [
        VerdictRecord(
            key=scheme.digest("jid", "q", f"response {i}") + scheme.digest("q", "fact", "text"),
            judge_identity="jid",
            judge="j1",
            submission_id="m-one",
            setting="multimodal",
            question_id=f"food-{i:04d}",
            check_id="I1",
            verdict=verdict,
            model="judge-2026-01-01",
        )
        for i in range(n)
    ]


def _project(root: Path, monkeypatch: pytest.MonkeyPatch, held: bool) -> tuple[Path, Ledger]:
    """A project's config and its (empty) ledger, held (keyed) or public."""
    monkeypatch.setenv("GAMUT_LEDGER_KEY", SECRET)
    extra = '\n[store]\nledger_key_env = "GAMUT_LEDGER_KEY"\n' if held else ""
    cfg = write_config(root, "rubrics", public=not held, extra=extra)
    scheme = KeyScheme.keyed(SECRET) if held else KeyScheme.public()
    return cfg, Ledger.open(root / ".gamut" / "ledger", scheme, held=held)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def _rewritten(led: Ledger, name: str, **columns: pa.Array) -> pa.Table:
    """The rows of shard ``name`` with ``columns`` replaced."""
    t = led.read_shard("verdicts", name)
    for col, values in columns.items():
        t = t.set_column(t.schema.get_field_index(col), t.schema.field(col), values)
    return t


def _plant(led: Ledger, data: bytes, name: str | None = None) -> Path:
    """``data`` as a verdict shard of ``led``, named by its SHA-256 unless ``name`` is given."""
    path = led.root / "verdicts" / (name or hashlib.sha256(data).hexdigest() + ".parquet")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_a_held_shard_rewritten_and_renamed_by_its_sha256_is_refused_by_verify(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, led = _project(tmp_path / "p", monkeypatch, held=True)
    name = led.append_verdicts(_records(led.scheme, 30))
    assert name is not None
    code, out = _cli("ledger", "verify", "--config", str(cfg))
    assert code == 0 and "every one sound" in out, out
    # every verdict rewritten to "contradicts", the shard renamed by its new SHA-256: the
    # forger has the ledger's files, not its secret
    forged = _rewritten(led, name, verdict=pa.array([Verdict.CONTRADICTS.code] * 30, pa.int8()))
    path = _plant(led, shard_bytes(forged, "verdicts", led.scheme, held=True))
    (led.root / "verdicts" / name).unlink()
    code, out = _cli("ledger", "verify", "--config", str(cfg))
    assert code == 1
    assert path.name in out and "not authenticated" in out
    assert SECRET not in out


@pytest.mark.parametrize("held", [True, False])
def test_values_out_of_range_are_refused_by_verify_and_by_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: bool
) -> None:
    cfg, led = _project(tmp_path / "p", monkeypatch, held=held)
    name = led.append_verdicts(_records(led.scheme, 5))
    assert name is not None
    bad = {
        "verdict code 9": {"verdict": pa.array([0, 1, 9, 2, 3], pa.int8())},
        "negative count in tokens_out": {"tokens_out": pa.array([0, 0, -5, 0, 0], pa.int64())},
        "unknown source": {"source": pa.array(["direct"] * 4 + ["forged"], pa.string())},
    }
    for cols in bad.values():
        # written like any shard, under the right name (a held one by the secret's holder: a
        # bug, not a forger), so only the values are wrong
        led.write_shard("verdicts", _rewritten(led, name, **cols))
    code, out = _cli("ledger", "verify", "--config", str(cfg))
    assert code == 1 and "3 problem(s)" in out, out
    for what in bad:
        assert what in out
    # `gamut judge` reads the verdicts through the key index: a named error, not a traceback
    with pytest.raises(GamutError, match=r"verdict code 9 is not one of 0\.\.3"):
        led.key_index()


def _merge_hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes) -> tuple:
    cfg, _ = _project(tmp_path / "p", monkeypatch, held=False)
    other = Ledger.open(tmp_path / "hostile", KeyScheme.public(), held=False)
    path = _plant(other, data)
    code, out, *_ = hs.run_gamut("ledger", "merge", str(other.root), "--config", str(cfg))
    return path, code, out


def test_a_small_shard_of_40_million_rows_is_refused_before_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = hs.MANY_ROWS
    data = hs.many_rows()
    assert len(data) < 3_000_000
    path, code, out = _merge_hostile(tmp_path, monkeypatch, data)
    assert code == 1, out
    assert path.name in out and f"{rows} rows, more than a shard's" in out
    assert "Traceback" not in out and "MemoryError" not in out


def test_a_dictionary_that_expands_past_the_decoded_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = hs.dictionary_bomb()
    assert len(data) < 3_000_000
    path, code, out = _merge_hostile(tmp_path, monkeypatch, data)
    assert code == 1, out
    assert path.name in out and "decodes to" in out and "more than a shard's" in out


def test_a_footer_too_large_to_read_is_refused(tmp_path: Path) -> None:
    led = Ledger.open(tmp_path, KeyScheme.public(), held=False)
    path = _plant(led, b"PAR1" + b"\0" * 64 + (1 << 30).to_bytes(4, "little") + b"PAR1")
    (problem,) = led.verify()
    assert problem.file == str(path) and "Parquet footer of 1073741824 bytes" in problem.message
    with pytest.raises(GamutError, match="footer"):
        led.verdicts()


def test_keys_chosen_to_share_a_mix_do_not_slow_a_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = hs.COLLIDING
    keys = hs.colliding_keys(n)
    assert not sort_key(keys).any(), "every key shares one sort key"
    rec = _records(KeyScheme.public(), 1)[0]
    data = hs.colliding_shard(keys, {f: getattr(rec, f) for f in rec.__slots__})
    assert 900_000 < len(data) < 2_000_000
    _, code, out = _merge_hostile(tmp_path, monkeypatch, data)
    assert code == 0 and "merged 1 shard(s)" in out, out
