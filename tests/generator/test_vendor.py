"""Fetching the charting bundle: by exact version, checked against committed checksums, from a
real HTTP server on 127.0.0.1 standing in for the npm registry."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import stat
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from generator.vendor import AXE, IFRAME_WORKER, PLOTLY, SHIPPED, TESTING, Bundle, fetch, verified
from scoring.errors import GamutError

SCRIPT = b"/* plotly.js (cartesian - minified) v9.9.9 */ window.Plotly = {};\n"


def _tarball(member: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _bundle(tarball: bytes, script: bytes = SCRIPT) -> Bundle:
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    return Bundle(
        package="plotly.js-cartesian-dist-min",
        version="9.9.9",
        member="package/plotly-cartesian.min.js",
        integrity=integrity,
        sha256=hashlib.sha256(script).hexdigest(),
        asset="plotly-cartesian.min.js",
    )


class _Registry:
    def __init__(self) -> None:
        self.body = b""
        self.requests: list[str] = []


@pytest.fixture
def registry() -> Iterator[tuple[_Registry, str]]:
    state = _Registry()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(state.body)))
            self.end_headers()
            self.wfile.write(state.body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/pkg.tgz"
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_verifies_and_stores_a_world_readable_file(
    registry: tuple[_Registry, str], tmp_path: Path
) -> None:
    state, url = registry
    state.body = _tarball("package/plotly-cartesian.min.js", SCRIPT)
    bundle = _bundle(state.body)
    dest = tmp_path / "cache" / "plotly-cartesian.min.js"
    assert fetch(bundle, dest=dest, url=url) == dest
    assert dest.read_bytes() == SCRIPT
    assert stat.S_IMODE(dest.stat().st_mode) & 0o044 == 0o044
    assert verified(bundle, dest) == dest
    # a second set-up finds the verified file and downloads nothing
    fetch(bundle, dest=dest, url=url)
    assert state.requests == ["/pkg.tgz"]


def test_a_tarball_that_differs_from_the_committed_hash_is_refused(
    registry: tuple[_Registry, str], tmp_path: Path
) -> None:
    state, url = registry
    bundle = _bundle(_tarball("package/plotly-cartesian.min.js", SCRIPT))
    state.body = _tarball("package/plotly-cartesian.min.js", SCRIPT + b"alert(1);\n")
    dest = tmp_path / "plotly-cartesian.min.js"
    with pytest.raises(GamutError, match="integrity hash"):
        fetch(bundle, dest=dest, url=url)
    assert not dest.exists()


def test_a_file_that_differs_from_the_committed_sha256_is_refused(
    registry: tuple[_Registry, str], tmp_path: Path
) -> None:
    state, url = registry
    state.body = _tarball("package/plotly-cartesian.min.js", SCRIPT)
    bundle = replace(_bundle(state.body), sha256="0" * 64)
    dest = tmp_path / "plotly-cartesian.min.js"
    with pytest.raises(GamutError, match="SHA-256"):
        fetch(bundle, dest=dest, url=url)
    assert not dest.exists()


def test_a_tarball_without_the_script_is_named(
    registry: tuple[_Registry, str], tmp_path: Path
) -> None:
    state, url = registry
    state.body = _tarball("package/README.md", b"# readme\n")
    with pytest.raises(GamutError, match=r"cannot read package/plotly-cartesian\.min\.js"):
        fetch(_bundle(state.body), dest=tmp_path / "x.js", url=url)


def test_an_unreachable_registry_says_so(tmp_path: Path) -> None:
    bundle = _bundle(b"")
    with pytest.raises(GamutError, match="cannot download"):
        fetch(bundle, dest=tmp_path / "x.js", url="http://127.0.0.1:9/none.tgz", timeout=5)


def test_a_missing_or_tampered_bundle_stops_the_build_with_the_fix(tmp_path: Path) -> None:
    bundle = _bundle(b"")
    path = tmp_path / "plotly-cartesian.min.js"
    with pytest.raises(GamutError, match="make vendor"):
        verified(bundle, path)
    path.write_bytes(SCRIPT + b"// changed\n")
    with pytest.raises(GamutError, match="does not match the checksum"):
        verified(bundle, path)


def test_the_pinned_bundle_is_an_exact_version_on_the_npm_registry() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", PLOTLY.version)
    assert PLOTLY.tarball_url == (
        "https://registry.npmjs.org/plotly.js-cartesian-dist-min/-/"
        f"plotly.js-cartesian-dist-min-{PLOTLY.version}.tgz"
    )
    assert PLOTLY.integrity.startswith("sha512-") and len(PLOTLY.sha256) == 64
    # the file set-up fetched (tests run after `make`, which fetches it) is the pinned one
    assert verified().read_bytes()[:200].decode().count(f"v{PLOTLY.version}") == 1


def test_every_pinned_script_is_an_exact_version_with_both_checksums() -> None:
    for bundle in (*SHIPPED, *TESTING):
        assert re.fullmatch(r"\d+\.\d+\.\d+", bundle.version), bundle.package
        assert bundle.tarball_url.startswith(f"https://registry.npmjs.org/{bundle.package}/-/")
        assert bundle.integrity.startswith("sha512-") and len(bundle.sha256) == 64
        # set-up (`make`, `python -m generator.vendor`) fetched each one, and it is the pinned one
        assert hashlib.sha256(verified(bundle).read_bytes()).hexdigest() == bundle.sha256
    assert f"axe v{AXE.version}" in verified(AXE).read_bytes()[:100].decode()
    # the theme's offline plugin adds a CDN copy of the shim unless a polyfill is named so
    assert "iframe-worker" in IFRAME_WORKER.asset
    assert AXE not in SHIPPED and IFRAME_WORKER in SHIPPED
