"""Environments installed exactly as a workflow installs them, cached per lock-file hash.

A workflow's install step is a ``make`` target (``make install-locked PYTHON=python``: the
hash-locked runtime dependencies; ``make .venv/.installed PYTHON=python``: ``pip install -e .``).
The same target runs here with ``VENV`` pointing at a throwaway folder under
``.cache/workflow-venvs/``, named by the target and a hash of everything that decides what it
installs (the Makefile, pyproject.toml, the lock, the interpreter, this checkout's path: the
install is editable), so a rerun with nothing changed reuses it, and those of older keys are
removed. A half-made environment (no ``.complete`` stamp) is removed and made again; one lock
file keeps two test workers from making the same one at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "workflow-venvs"
#: The interpreter the workflows' ``actions/setup-python`` gives them (3.11), here: this one's base.
PYTHON = getattr(sys, "_base_executable", sys.executable)
INPUTS = ("Makefile", "pyproject.toml", "requirements/runtime.txt")


def install_target(run: str) -> str:
    """The make target of a workflow's install step (``make TARGET PYTHON=python``)."""
    words = run.split()
    assert words[0] == "make" and words[-1] == "PYTHON=python", f"not an install step: {run!r}"
    (target,) = words[1:-1]
    return target


def _key(target: str) -> str:
    h = hashlib.sha256(f"{target}\0{PYTHON}\0{REPO}\0".encode())
    for name in INPUTS:
        h.update((REPO / name).read_bytes())
    return h.hexdigest()[:16]


def installed(target: str) -> Path:
    """The environment ``make TARGET`` installs (made once per key), as its folder."""
    slug = target.replace(".venv/", "").replace("/", "-").strip(".-") or "venv"
    venv = CACHE / f"{slug}-{_key(target)}"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / ".complete").is_file():
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        make_target = target.replace(".venv", str(venv), 1)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
        done = subprocess.run(
            ["make", "--no-print-directory", make_target, f"VENV={venv}", f"PYTHON={PYTHON}"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=1800,
        )  # fmt: skip
        assert done.returncode == 0, f"make {target} failed:\n{done.stdout}\n{done.stderr}"
        (venv / ".complete").write_text(target + "\n", encoding="utf-8")
    _prune(slug, keep=venv)
    return venv


def _prune(slug: str, keep: Path) -> None:
    """Remove the environments of this target made for other keys (nearly 1 GB each), unless
    another worker holds one."""
    for old in CACHE.glob(f"{slug}-*"):
        if old == keep or not old.is_dir():
            continue
        with open(CACHE / f"{old.name}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(old, ignore_errors=True)
        (CACHE / f"{old.name}.lock").unlink(missing_ok=True)
