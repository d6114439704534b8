"""The web board's process wiring: uvicorn serving the app in the daemon's own event loop.

The daemon keeps the signals (SIGTERM/SIGINT end both the mail work and the web server), the
socket is bound before anything starts (a port in use stops ``pbem serve`` with one line), and
uvicorn's access log stays off: it would print every path, and a path holds a game's token
(the app logs each request itself with the token cut out).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.types import ASGIApp

from pbem.config import WebConfig

log = logging.getLogger(__name__)


class WebServerError(Exception):
    """The web board cannot listen where it is configured to."""


class _Server(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        """The daemon handles the signals and stops the server (``should_exit``)."""
        yield


class WebServer:
    """The board's HTTP server, started and stopped with the daemon."""

    def __init__(self, config: WebConfig, app: ASGIApp) -> None:
        self.config = config
        try:
            self.socket = socket.create_server((config.bind, config.port), reuse_port=False,
                                               family=socket.AF_INET6 if ":" in config.bind else socket.AF_INET)
        except OSError as exc:
            raise WebServerError(f"[web] cannot listen on {config.bind} port {config.port}: {exc.strerror}") from None
        self.server = _Server(uvicorn.Config(app, log_config=None, access_log=False, proxy_headers=False,
                                             server_header=False, lifespan="off", timeout_graceful_shutdown=5))
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    def start(self) -> None:
        log.info("web board on http://%s:%d/ (links: %s/g/…)", self.config.bind, self.port, self.config.public_url)
        self._task = asyncio.create_task(self.server.serve(sockets=[self.socket]))

    async def stop(self) -> None:
        self.server.should_exit = True
        if self._task is not None:
            await self._task
        self.socket.close()


def web_report(config: WebConfig | None) -> str:
    """``pbem check``'s line on the web board: where it listens, where the mails link, the
    proxies and limits, and whether the port is free now (in use is expected while
    ``pbem serve`` runs; else another program holds it and ``pbem serve`` will not start)."""
    if config is None:
        return "Web board: off ([web] enabled = false); the mails carry no link"
    try:
        probe = socket.create_server((config.bind, config.port), family=socket.AF_INET6 if ":" in config.bind
                                     else socket.AF_INET)
    except OSError as exc:
        port = f"port {config.port} is in use ({exc.strerror}): fine if pbem serve runs, else it cannot start"
    else:
        probe.close()
        port = f"port {config.port} is free"
    where = "links work only on this host: set base_url" if not config.base_url and config.bind in (
        "127.0.0.1", "localhost", "::1") else "links as configured"
    proxies = ", ".join(config.trusted_proxies) or "none"
    return (f"Web board: listens on {config.bind} port {config.port}; mails link to {config.public_url}/g/… "
            f"({where}); trusted proxies: {proxies}; limits a minute: {config.requests_per_minute} pages and "
            f"forms and {config.polls_per_minute} polls per link, {config.address_requests_per_minute} per "
            f"address; {port}")
