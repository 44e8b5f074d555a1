"""The Hugging Face Hub: references, access, and held rubrics in (publishing is ``gamut.publish``).

Held rubrics live in a private dataset, ``hf://datasets/ORG/NAME@<commit sha>[/folder]``;
:func:`snapshot_path` fetches only the rubric files at that commit into ``store.private``.
The endpoint and token are read at call time and passed explicitly, because ``huggingface_hub``
reads ``HF_ENDPOINT`` only once, at import.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gamut.config import PLACEHOLDER
from scoring.errors import GamutError, PlaceholderError

if TYPE_CHECKING:
    from huggingface_hub import HfApi

DEFAULT_ENDPOINT = "https://huggingface.co"
ENDPOINT_ENV = ("GAMUT_HF_ENDPOINT", "HF_ENDPOINT")
TOKEN_ENV = "HF_TOKEN"

_HF_URI = re.compile(
    r"^hf://datasets/(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)"
    r"@(?P<rev>[^/\s]+)(?:/(?P<sub>[^\s]*))?$"
)
_SHA = re.compile(r"^[0-9a-f]{40}$")
#: A dataset id, ORG/NAME.
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


def check_published(key: str, value: str, config_file: Path | str) -> None:
    """Refuse (PlaceholderError) a config value that still holds :data:`PLACEHOLDER`."""
    if PLACEHOLDER not in value:
        return
    raise PlaceholderError(
        "submissions are not open yet: the GAMUT question set is not published. What works "
        "now: fill in and check your metadata (`gamut submission validate` checks it), and "
        "rehearse the whole path offline on the demo benchmark, with --config demo/gamut.toml "
        "on each command (`gamut submission new ID`, `gamut generate`, `gamut submission "
        "validate`, `gamut run`). (Maintainers: "
        f"{config_file}: {key} = {value!r} is the placeholder {PLACEHOLDER}; replace "
        f"{PLACEHOLDER}/<name>@{PLACEHOLDER} with the dataset's ORG/NAME and the full commit sha "
        "to pin, as site_src/maintainers.md, 'Publishing the datasets', says.)"
    )


@dataclass(frozen=True)
class HubRef:
    """A parsed ``hf://datasets/ORG/NAME@REVISION[/folder]`` reference."""

    repo_id: str
    revision: str
    subfolder: str = ""

    @property
    def allow_patterns(self) -> list[str]:
        """Glob patterns that match the rubric files only (inside the subfolder, if any)."""
        from scoring.rubric_io import RUBRIC_SUFFIXES

        prefix = f"{self.subfolder}/" if self.subfolder else ""
        return [f"{prefix}*{suffix}" for suffix in sorted(RUBRIC_SUFFIXES)]


def is_hub_uri(value: str) -> bool:
    """True when a config value names a Hub location rather than a local path."""
    return value.startswith("hf://")


def parse_hub_uri(uri: str, key: str = "benchmark.rubrics") -> HubRef:
    """Parse ``hf://datasets/ORG/NAME@<sha>[/path]`` (the config's ``key``); the revision must
    be a full commit sha."""
    m = _HF_URI.match(uri.strip())
    if m is None:
        raise GamutError(
            f"{key} = {uri!r} is not a Hub reference; "
            "write it as hf://datasets/ORG/NAME@<40-hex commit sha>[/path]"
        )
    rev = m["rev"]
    if not _SHA.match(rev):
        raise GamutError(
            f"{key} revision {rev!r} is not a full commit sha; pin the dataset to one commit "
            "(40 lowercase hex digits) so every score names the data it used"
        )
    sub = (m["sub"] or "").strip("/")
    if any(part in {"", ".", ".."} for part in sub.split("/")) and sub:
        raise GamutError(f"{key} path {sub!r} must be a plain relative path")
    return HubRef(repo_id=m["repo"], revision=rev, subfolder=sub)


def hub_endpoint() -> str:
    """The Hub endpoint, read from the environment now (not at import)."""
    for name in ENDPOINT_ENV:
        value = os.environ.get(name, "").strip()
        if value:
            return value.rstrip("/")
    return DEFAULT_ENDPOINT


def hub_token(env: str = TOKEN_ENV) -> str | None:
    """The Hub token from the environment variable ``env``, or None when unset."""
    value = os.environ.get(env, "").strip()
    return value or None


def hub_api(token: str | Literal[False]) -> HfApi:
    """A Hub client of :func:`hub_endpoint`; ``token`` False sends none (not a saved login)."""
    from huggingface_hub import HfApi

    return HfApi(endpoint=hub_endpoint(), token=token)


def private_cache(private: Path, published: dict[str, Path]) -> Path:
    """The folder for held rubrics (``store.private``), checked to lie outside the published
    folders (config key -> folder: the results and the site)."""
    private = private.resolve()
    for name, other in published.items():
        public = other.resolve()
        if private == public or public in private.parents:
            raise GamutError(
                f"store.private ({private}) lies inside {name} ({public}); held rubrics must not "
                "be published: point store.private somewhere else, e.g. .gamut/private"
            )
    return private


def http_status(exc: Any) -> int | str:
    """The HTTP status of a ``huggingface_hub`` error, or "?" when it carries no response."""
    return exc.response.status_code if getattr(exc, "response", None) is not None else "?"


@contextmanager
def hub_errors(what: str, where: str, key: str, retry: str) -> Iterator[None]:
    """Turn ``huggingface_hub`` errors into one :class:`GamutError` naming ``what`` (at
    ``where``, configured by ``key``) and the fix."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        yield
    except RevisionNotFoundError:
        raise GamutError(f"{what}: no revision {where}; check the commit sha in {key}") from None
    except (RepositoryNotFoundError, GatedRepoError):
        raise GamutError(
            f"{what}: {where} not found or not accessible; check the name in {key} (a private "
            f"dataset needs {TOKEN_ENV}: a token with read access)"
        ) from None
    except HfHubHTTPError as exc:
        raise GamutError(
            f"{what}: the Hub answered HTTP {http_status(exc)} for {where}; check that "
            f"{TOKEN_ENV} holds a valid read token, or {retry} later"
        ) from None
    except (LocalEntryNotFoundError, OSError) as exc:
        raise GamutError(
            f"{what}: cannot download {where} ({type(exc).__name__}: {str(exc)[:200]}); {retry} "
            "(check the network and GAMUT_HF_ENDPOINT if it keeps failing)"
        ) from None


def snapshot_path(value: str, cache: Path) -> Path:
    """The local copy of the Hub reference ``value`` (rubrics or audit labels): its rubric-like
    files at the pinned commit, downloaded once into ``cache`` (under ``store.private``)."""
    from huggingface_hub import snapshot_download

    ref = parse_hub_uri(value)
    endpoint = hub_endpoint()
    token = hub_token()
    where = f"{ref.repo_id}@{ref.revision[:12]} on {endpoint}"
    with hub_errors("held rubrics", where, "benchmark.rubrics", "run the command again"):
        folder = snapshot_download(
            ref.repo_id,
            repo_type="dataset",
            revision=ref.revision,
            allow_patterns=ref.allow_patterns,
            cache_dir=cache,
            token=token if token else False,
            endpoint=endpoint,
        )
    from scoring.rubric_io import rubric_files

    path = Path(folder)
    if not rubric_files(path):
        raise GamutError(
            f"held rubrics: {where} holds no .json/.jsonl files under "
            f"{ref.subfolder or 'its root'}; check the folder in benchmark.rubrics"
        )
    return path / ref.subfolder if ref.subfolder else path
