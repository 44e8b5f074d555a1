"""The Makefile's set-up recipes, run for real with stand-ins for the system's package manager."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_BINS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

_STUB = """#!/bin/bash
echo "$(basename "$0") $* DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-unset}" >> "$STUB_LOG"
"""
_SUDO = """#!/bin/bash
echo "sudo $*" >> "$STUB_LOG"
exec "$@"
"""


def _path_without(tmp: Path, missing: str = "chromium") -> Path:
    """A PATH folder with every system command but ``missing``, and stand-in apt-get and sudo."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for folder in SYSTEM_BINS:
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            name = entry.name
            if missing in name or name in ("apt-get", "sudo"):
                continue
            if not (bin_dir / name).exists():
                (bin_dir / name).symlink_to(entry.path)
    for name, text in (("apt-get", _STUB), ("sudo", _SUDO)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _browser_deps(
    bin_dir: Path, home: Path, log: Path, target: str = "browser-deps"
) -> subprocess.CompletedProcess[str]:
    """``make browser-deps`` with only ``bin_dir`` on PATH; the stand-ins log their calls."""
    env = {"PATH": str(bin_dir), "HOME": str(home), "STUB_LOG": str(log)}
    return subprocess.run(
        ["make", "-s", "-C", str(ROOT), target],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_browser_deps_installs_chromium_when_it_is_absent(tmp_path: Path) -> None:
    bin_dir = _path_without(tmp_path)
    log = tmp_path / "calls.log"
    result = _browser_deps(bin_dir, tmp_path, log)
    assert result.returncode == 0, result.stdout + result.stderr
    calls = log.read_text().splitlines()
    root = os.getuid() == 0
    apt = [c for c in calls if c.startswith("apt-get")]
    assert apt == [
        "apt-get update -qq DEBIAN_FRONTEND=unset",
        "apt-get install -y -qq chromium DEBIAN_FRONTEND=noninteractive",
    ], calls
    assert any(c.startswith("sudo") for c in calls) is not root, calls
    assert "installing Debian's chromium" in result.stdout


def test_browser_deps_does_nothing_when_chromium_is_on_path(tmp_path: Path) -> None:
    bin_dir = _path_without(tmp_path)
    (bin_dir / "chromium").write_text("#!/bin/sh\n")
    (bin_dir / "chromium").chmod(0o755)
    log = tmp_path / "calls.log"
    result = _browser_deps(bin_dir, tmp_path, log)
    assert result.returncode == 0, result.stderr
    assert not log.exists()


def test_checker_deps_installs_java_when_it_is_absent(tmp_path: Path) -> None:
    bin_dir = _path_without(tmp_path, missing="java")
    log = tmp_path / "calls.log"
    result = _browser_deps(bin_dir, tmp_path, log, "checker-deps")
    assert result.returncode == 0, result.stdout + result.stderr
    apt = [c for c in log.read_text().splitlines() if c.startswith("apt-get")]
    assert apt == [
        "apt-get update -qq DEBIAN_FRONTEND=unset",
        "apt-get install -y -qq default-jre-headless DEBIAN_FRONTEND=noninteractive",
    ]
    assert "installing Debian's Java" in result.stdout


def test_checker_deps_does_nothing_when_java_is_on_path(tmp_path: Path) -> None:
    bin_dir = _path_without(tmp_path, missing="java")
    (bin_dir / "java").write_text("#!/bin/sh\n")
    (bin_dir / "java").chmod(0o755)
    log = tmp_path / "calls.log"
    result = _browser_deps(bin_dir, tmp_path, log, "checker-deps")
    assert result.returncode == 0, result.stderr
    assert not log.exists()


def test_make_test_installs_the_checkers_java() -> None:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    (line,) = [x for x in text.splitlines() if x.startswith("test:")]
    assert "browser-deps" in line.split() and "checker-deps" in line.split()
