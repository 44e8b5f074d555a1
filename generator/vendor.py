"""Third-party scripts fetched once at set-up from the npm registry, by exact version and checksum.

- plotly.js's cartesian bundle, the site's charting library (shipped);
- iframe-worker's shim, which lets the theme's search run on a site opened from a folder
  (file://), where browsers refuse web workers (shipped; it replaces nothing over HTTP);
- axe-core, the accessibility engine of the browser tests (tests only, never shipped).

The site draws scatter, bar and heatmap traces only, so it ships plotly.js's cartesian bundle
(about a third of the full library) of the same plotly.js version as the Python ``plotly``
package of this release. Set-up (``make``, or ``python -m generator.vendor``) downloads the
package tarball by exact version, checks it against the npm integrity hash committed here,
extracts the one script and checks that too; the site build copies the verified files and never
fetches anything. Pages load plotly.js only when they hold a chart (``assets/gamut.js``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from scoring.errors import GamutError
from scoring.storage import atomic_write_bytes

REPO = Path(__file__).resolve().parents[1]
#: Where set-up keeps fetched files: ignored by git, kept by ``make clean``.
CACHE = REPO / ".cache" / "vendor"
MAX_TARBALL = 16 << 20
FIX = "run `make vendor` (or `.venv/bin/python -m generator.vendor`) once, with network access"


@dataclass(frozen=True)
class Bundle:
    """One npm package file, pinned by version and by two checksums."""

    package: str
    version: str
    member: str
    #: The registry's ``dist.integrity`` of the tarball (``npm view PACKAGE@VERSION dist``).
    integrity: str
    #: SHA-256 of the extracted ``member``.
    sha256: str
    #: The file name the site serves it under (``assets/<name>``).
    asset: str
    #: The largest tarball accepted, in bytes.
    max_bytes: int = MAX_TARBALL

    @property
    def tarball_url(self) -> str:
        """The tarball's address on the npm registry."""
        name = self.package.rsplit("/", 1)[-1]
        return f"https://registry.npmjs.org/{self.package}/-/{name}-{self.version}.tgz"

    @property
    def cached(self) -> Path:
        """Where set-up stores the verified file."""
        return CACHE / f"{self.package}-{self.version}" / Path(self.member).name


PLOTLY = Bundle(
    package="plotly.js-cartesian-dist-min",
    version="4.1.1",
    member="package/plotly-cartesian.min.js",
    integrity="sha512-o8GrFeusncwBIxbBynRJpY4pkgVB6caM+JLpwrLYbbsO7dZ8FJ+SVN2Fr+L7kiG/Z6w4P5O0Jus/Qr5EefHVeg==",
    sha256="79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a",
    asset="plotly-cartesian.min.js",
)


IFRAME_WORKER = Bundle(
    package="iframe-worker",
    version="1.0.4",
    member="package/shim/index.js",
    integrity="sha512-roeaaI+Lg1LJNfgpCjoRe/+WzEjy9+Z08LoEvu85MCPbBjwm+qXz8Ag5U05lHa6V1CysZyGzE0SOkAtSUA5q7Q==",
    sha256="e8e412dbcfea9b7e31b5ffa288d7b6035915e714c542f4176a0cdbe262fc9609",
    # the theme's offline plugin adds a CDN copy unless a polyfill's name says "iframe-worker"
    asset="iframe-worker-shim.js",
)

#: Tests only: the version axe-playwright-python bundles, so its rules are the ones pinned here.
AXE = Bundle(
    package="axe-core",
    version="4.12.1",
    member="package/axe.min.js",
    integrity="sha512-s7iGf5GaVMxEG0ENN9x+xTr7GFZCb1ZP/1uATUpCEK2X78nDB3RwbtFCo9pGAf9ru+VwoQ464DkaLEeRM08wJA==",
    sha256="66a8aaa95a8b044a7fd74a5435873bf04ff65a1ca75567c921b7509742085a14",
    asset="axe.min.js",
)

#: Copied into every built site (``assets/<asset>``).
SHIPPED = (PLOTLY, IFRAME_WORKER)
#: Fetched by set-up for the browser tests; never part of a site.
TESTING = (AXE,)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _integrity_ok(data: bytes, integrity: str) -> bool:
    algo, _, want = integrity.partition("-")
    if algo not in ("sha512", "sha384", "sha256"):
        return False
    return base64.b64encode(hashlib.new(algo, data).digest()).decode() == want


def verified(bundle: Bundle = PLOTLY, path: Path | None = None) -> Path:
    """The fetched bundle, after checking its checksum (a :class:`GamutError` when it was never
    fetched or does not match)."""
    path = path or bundle.cached
    if not path.is_file():
        raise GamutError(f"{bundle.package}@{bundle.version} is not set up ({path} missing); {FIX}")
    if _sha256(path.read_bytes()) != bundle.sha256:
        raise GamutError(
            f"{path} does not match the checksum committed in generator/vendor.py; delete it "
            f"and {FIX.removeprefix('run ')}"
        )
    return path


def _download(url: str, timeout: float, bundle: Bundle) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            data: bytes = resp.read(bundle.max_bytes + 1)
    except (urllib.error.URLError, OSError) as exc:
        raise GamutError(f"cannot download {url} ({exc}); check the network and retry") from None
    if len(data) > bundle.max_bytes:
        raise GamutError(
            f"{url} is larger than {bundle.max_bytes >> 20} MiB; not {bundle.package}'s tarball"
        )
    return data


def fetch(
    bundle: Bundle = PLOTLY,
    *,
    dest: Path | None = None,
    url: str | None = None,
    timeout: float = 60,
) -> Path:
    """Make sure the verified bundle is at ``dest`` (default: the set-up cache), downloading it
    from ``url`` (default: the npm registry) when needed; returns the stored file. A
    :class:`GamutError` when the download fails or the tarball or file fails its checksum."""
    dest = dest or bundle.cached
    if dest.is_file() and _sha256(dest.read_bytes()) == bundle.sha256:
        return dest
    url = url or bundle.tarball_url
    tarball = _download(url, timeout, bundle)
    if not _integrity_ok(tarball, bundle.integrity):
        raise GamutError(
            f"{url} does not match the integrity hash committed in generator/vendor.py "
            f"({bundle.package}@{bundle.version}); refusing to use it"
        )
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
            info = tar.getmember(bundle.member)
            handle = tar.extractfile(info) if info.isfile() else None
            data = handle.read() if handle is not None else b""
    except (tarfile.TarError, KeyError, OSError) as exc:
        raise GamutError(f"{url}: cannot read {bundle.member} from the tarball ({exc})") from None
    if _sha256(data) != bundle.sha256:
        raise GamutError(f"{bundle.member} in {url} does not match the committed SHA-256")
    atomic_write_bytes(dest, data)
    return dest


def main() -> int:
    """``python -m generator.vendor``: fetch and verify every pinned script."""
    for bundle in (*SHIPPED, *TESTING):
        try:
            path = fetch(bundle)
        except GamutError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"{bundle.package}@{bundle.version}: {path} (sha256 verified)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
