"""A plain static file server for previewing the built site on this machine."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves files without logging every request."""

    def log_message(self, format: str, *args: Any) -> None:
        return


def make_server(directory: Path, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """An HTTP server for ``directory`` (port 0 picks a free port; see ``server_address``)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    return ThreadingHTTPServer((host, port), handler)


__all__ = ["make_server"]
