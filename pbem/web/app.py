"""The web board: a small Starlette app that ``pbem serve`` runs in its event loop (uvicorn).

Routes (all relative, so that a reverse proxy may publish them under any prefix):

* ``GET /g/<token>``: the page of the game (board, facts, forms); ``POST /g/<token>``: one
  form (a move, or a button), answered with the page and what became of it;
* ``GET /g/<token>/state``: ``{"version": …}``, which the page's script polls to notice a move;
* ``GET /g/<token>/match.mat``: the match's ``.mat`` file so far (the finished games and the one
  being played), as its last mail attaches it;
* ``GET /p/<page token>``: a player's own page of all their games (no form, no script);
* ``GET /t/<code>``: a tournament's bracket (names and results, no links); ``GET /t/<code>/<page
  token>``: a player's own copy, whose matches link to that player's games;
* ``GET /u/<unsubscribe token>``: the page of an invitation's ``List-Unsubscribe`` link, with a
  button; ``POST`` there (RFC 8058 one-click, ``List-Unsubscribe=One-Click``) does what ``stop``
  does.  The unguessable token is the proof, as a reply token is: no CSRF token or origin check,
  since a mailbox provider's server sends it, and doing it twice changes nothing;
* ``GET /l/<ladder code>``: a ladder's standing, open challenges and latest results, read-only
  (names only: no address, no game token), linked from the ladder mails;
* ``GET /w/<watch code>``: the read-only page of a game its players let friends watch (no form,
  no script); a code that names no such game gets a 404 page that says only that;
* ``GET /``: the front page: what the service is, its address and the first mail to write;
  ``GET /help``: every command, the text the ``help`` mail brings;
* ``GET /verify``: a form to check the dice of a finished game; ``POST /verify`` (a ``.mat``
  file and the game's ``Dice seed:``, at most MAX_UPLOAD_BYTES) says what the seed proves of the
  file (:mod:`pbem.web.verify`).  Its CSRF token is a random one kept in a ``SameSite=Strict``
  cookie and repeated in the form (nothing secret is at stake: the check changes nothing);
* ``GET /static/…``: the style sheet and the script (no third-party files, no fonts).

The front page, ``/help`` and ``/verify`` speak the visitor's language (``Accept-Language``: German or
English, else the service's).

A token that names no seat gets a bare 404, the same for every wrong token, and so does every
path that is not one of these.  The game itself is the service's (:class:`BoardService`); the
app only speaks HTTP: limits, CSRF, headers, and the log without tokens.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import secrets
import time
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Protocol

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pbem.config import WebConfig
from pbem.mail.headers import TOKEN_PATTERN
from pbem.commands import TOURNAMENT_CODE, WATCH_CODE_PATTERN
from pbem.render.templating import LANGUAGES
from pbem.render.views import (FrontView, LadderPageView, PageAction, PageOutcome, PageResult, PageView,
                               PlayerPageView, TournamentPageView, UnsubscribeView, VerifyProblem, VerifyView,
                               WatchView)
from pbem.render.web_page import (render_front_page, render_help_page, render_ladder_page, render_page,
                                  render_player_page, render_tournament_page, render_unsubscribe_page, render_verify_page,
                                  render_watch_page, web_text)
from pbem.web.security import HEADERS, RateLimiter, address_key, csrf_token, csrf_valid, redacted
from pbem.web.verify import verify_upload

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
MAX_FORM_BYTES = 4096
"""A form of the page is a few hundred bytes; a bigger body is refused unread."""
_STATUS = {PageResult.DONE: 200, PageResult.REFUSED: 422, PageResult.STALE: 409}
_MESSAGES = {PageResult.STALE: "warning", PageResult.REFUSED: "error", PageResult.DONE: "done"}
MAX_UPLOAD_BYTES = 512 * 1024
"""The whole body of an upload to ``/verify``: a ``.mat`` of a long match is some 100 KB."""
VERIFY_COOKIE = "pbem_verify"


class BoardService(Protocol):
    """What the app needs of the game service (``pbem.service.pages.web_board.WebBoard``)."""

    def page(self, token: str) -> PageView | None: ...

    def version(self, token: str) -> str | None: ...

    def act(self, token: str, version: str, action: PageAction, argument: str = "") -> PageOutcome: ...

    def language(self, token: str) -> str | None: ...

    def player_page(self, page_token: str) -> PlayerPageView | None: ...

    def unsubscribe(self, unsubscribe_token: str, apply: bool) -> UnsubscribeView | None: ...

    def tournament_page(self, code: str, page_token: str | None) -> TournamentPageView | None: ...

    def ladder_page(self, code: str) -> LadderPageView | None: ...

    def watch_page(self, code: str) -> WatchView: ...

    def front_page(self, language: str | None) -> FrontView:
        """In ``language``; None: in the service's own."""
        ...

    def match_file(self, token: str) -> tuple[str, str] | None:
        """The ``.mat`` of the seat's match so far: (file name, text)."""
        ...


def board_app(config: WebConfig, service: BoardService) -> Starlette:
    """The web board's ASGI app."""
    board = _Board(config, service)
    routes = [
        Route("/g/{token}", board.page, methods=["GET", "POST"]),
        Route("/g/{token}/state", board.state, methods=["GET"]),
        Route("/g/{token}/match.mat", board.match_file, methods=["GET"]),
        Route("/p/{token}", board.player_page, methods=["GET"]),
        Route("/u/{token}", board.unsubscribe, methods=["GET", "POST"]),
        Route("/t/{code}", board.tournament, methods=["GET"]),
        Route("/t/{code}/{token}", board.tournament, methods=["GET"]),
        Route("/l/{token}", board.ladder_page, methods=["GET"]),
        Route("/w/{code}", board.watch_page, methods=["GET"]),
        Route("/", board.front_page, methods=["GET"]),
        Route("/help", board.help_page, methods=["GET"]),
        Route("/verify", board.verify, methods=["GET", "POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(_Guard, config=config, language_of=board.language_of)],
                    exception_handlers={404: _not_found, 405: _not_found})
    # No "add/remove the slash" redirect: its absolute Location would drop a proxy's path
    # prefix, and a wrong path gets the same bare 404 as a wrong token.
    app.router.redirect_slashes = False
    return app


async def _not_found(request: Request, exc: Exception) -> Response:
    return PlainTextResponse("Not Found", status_code=404)


class _Board:
    def __init__(self, config: WebConfig, service: BoardService) -> None:
        self.config = config
        self.service = service
        self.per_token = RateLimiter(config.requests_per_minute)
        self.polls_per_token = RateLimiter(config.polls_per_minute)

    async def language_of(self, token: str) -> str | None:
        """The language of the seat ``token`` names (None: no seat), for a 429 in it."""
        return await asyncio.to_thread(self.service.language, token) if self._plausible(token) else None

    async def page(self, request: Request) -> Response:
        token = request.path_params["token"]
        if not self._plausible(token):
            return await _not_found(request, LookupError())
        if request.method == "POST":
            return await self._post(request, token)
        if not self.per_token.allow(token):
            return _too_many(await self.language_of(token))
        page = await asyncio.to_thread(self.service.page, token)
        if page is None:
            return await _not_found(request, LookupError())
        return HTMLResponse(render_page(page, csrf_token(token, page.version)))

    async def match_file(self, request: Request) -> Response:
        """The match's ``.mat`` file, as a download (text only: GNU Backgammon reads it)."""
        token = request.path_params["token"]
        if not self._plausible(token):
            return await _not_found(request, LookupError())
        if not self.per_token.allow(token):
            return _too_many(await self.language_of(token))
        found = await asyncio.to_thread(self.service.match_file, token)
        if found is None:
            return await _not_found(request, LookupError())
        name, text = found
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
        return PlainTextResponse(text, headers={"Content-Disposition": f'attachment; filename="{safe}"'})

    async def player_page(self, request: Request) -> Response:
        token = request.path_params["token"]
        if not self._plausible(token):
            return await _not_found(request, LookupError())
        if not self.per_token.allow(f"p/{token}"):
            return _too_many()
        page = await asyncio.to_thread(self.service.player_page, token)
        if page is None:
            return await _not_found(request, LookupError())
        return HTMLResponse(render_player_page(page))

    async def tournament(self, request: Request) -> Response:
        code, token = request.path_params["code"], request.path_params.get("token")
        if TOURNAMENT_CODE.fullmatch(code) is None or (token is not None and not self._plausible(token)):
            return await _not_found(request, LookupError())
        if not self.per_token.allow(f"t/{code}"):
            return _too_many()
        page = await asyncio.to_thread(self.service.tournament_page, code, token)
        if page is None:
            return await _not_found(request, LookupError())
        return HTMLResponse(render_tournament_page(page, own_copy=token is not None))
    async def ladder_page(self, request: Request) -> Response:
        code = request.path_params["token"]
        if not self._plausible(code):
            return await _not_found(request, LookupError())
        if not self.per_token.allow(f"l/{code}"):
            return _too_many()
        page = await asyncio.to_thread(self.service.ladder_page, code)
        if page is None:
            return await _not_found(request, LookupError())
        return HTMLResponse(render_ladder_page(page))

    async def unsubscribe(self, request: Request) -> Response:
        token = request.path_params["token"]
        if not self._plausible(token):
            return await _not_found(request, LookupError())
        if not self.per_token.allow(f"u/{token}"):
            return _too_many()
        apply = request.method == "POST"
        if apply:
            form = await _small_form(request)
            if form is None:
                return PlainTextResponse("Request Entity Too Large", status_code=413)
            if form.get("List-Unsubscribe") != "One-Click":
                return PlainTextResponse("Bad Request: List-Unsubscribe=One-Click expected", status_code=400)
        page = await asyncio.to_thread(self.service.unsubscribe, token, apply)
        if page is None:
            return await _not_found(request, LookupError())
        return HTMLResponse(render_unsubscribe_page(page))

    async def watch_page(self, request: Request) -> Response:
        code = request.path_params["code"]
        if _WATCH_CODE.fullmatch(code) is None:
            return await _not_found(request, LookupError())
        if not self.per_token.allow(f"w/{code}"):
            return _too_many()
        page = await asyncio.to_thread(self.service.watch_page, code)
        return HTMLResponse(render_watch_page(page), status_code=200 if page.allowed else 404)

    async def front_page(self, request: Request) -> Response:
        page = await self._front(request)
        return HTMLResponse(render_front_page(page)) if isinstance(page, FrontView) else page

    async def help_page(self, request: Request) -> Response:
        page = await self._front(request)
        return HTMLResponse(render_help_page(page)) if isinstance(page, FrontView) else page

    async def _front(self, request: Request) -> FrontView | Response:
        """The front page's facts in the visitor's language, or a 429 (counted per address)."""
        if not self.per_token.allow(f"front/{address_key(client_address(request.scope, self.config))}"):
            return _too_many()
        language = visitor_language(request.headers.get("accept-language"))
        return await asyncio.to_thread(self.service.front_page, language)

    async def verify(self, request: Request) -> Response:
        """The form, or an upload checked (same origin, the cookie's CSRF token, the size bound)."""
        if not self.per_token.allow(f"verify/{address_key(client_address(request.scope, self.config))}"):
            return _too_many()
        language = visitor_language(request.headers.get("accept-language")) or \
            (await asyncio.to_thread(self.service.front_page, None)).language
        known = request.cookies.get(VERIFY_COOKIE, "")
        csrf = known if re.fullmatch(r"[0-9a-f]{32}", known) else secrets.token_hex(16)
        page, status = VerifyView(language, csrf), 200
        if request.method == "POST":
            if not _same_origin(request, self.config):
                return PlainTextResponse("Forbidden", status_code=403)
            form = await _small_form(request, MAX_UPLOAD_BYTES, files=1)
            if form is None:
                page, status = VerifyView(language, csrf, VerifyProblem.TOO_BIG), 413
            elif not known or not hmac.compare_digest(known.encode(), str(form.get("csrf", "")).encode(
                    "utf-8", "surrogatepass")):
                page, status = VerifyView(language, csrf, VerifyProblem.EXPIRED), 403
            else:
                upload = form.get("mat")
                content = await upload.read() if isinstance(upload, UploadFile) else b""
                if not content:
                    page, status = VerifyView(language, csrf, VerifyProblem.NO_FILE), 422
                else:
                    page = await asyncio.to_thread(verify_upload, language, csrf,
                                                   content.decode("utf-8", errors="replace"), str(form.get("seed", "")))
                    status = 422 if page.problem is not None else 200
        answer = HTMLResponse(render_verify_page(page), status_code=status)
        answer.set_cookie(VERIFY_COOKIE, csrf, httponly=True, samesite="strict",
                          secure=self.config.public_url.startswith("https://"))
        return answer

    async def state(self, request: Request) -> Response:
        token = request.path_params["token"]
        if not self._plausible(token):
            return await _not_found(request, LookupError())
        if not self.polls_per_token.allow(token):
            return _too_many(await self.language_of(token))
        version = await asyncio.to_thread(self.service.version, token)
        if version is None:
            return await _not_found(request, LookupError())
        return JSONResponse({"version": version})

    async def _post(self, request: Request, token: str) -> Response:
        if not _same_origin(request, self.config):
            return PlainTextResponse("Forbidden", status_code=403)
        form = await _small_form(request)
        if form is None:
            return PlainTextResponse("Request Entity Too Large", status_code=413)
        version, csrf = str(form.get("version", "")), str(form.get("csrf", ""))
        action_name, argument = str(form.get("action", "")), str(form.get("move") or form.get("argument") or "")
        if not self.per_token.allow(token):  # the page again, the move typed kept in its field
            page = await asyncio.to_thread(self.service.page, token)
            if page is None:
                return await _not_found(request, LookupError())
            answer = self._answer(page, token, web_text(page.language, "too_many"), "warning", 429,
                                  typed=str(form.get("move") or ""))
            answer.headers["Retry-After"] = str(RETRY_AFTER)
            return answer
        known = action_name in PageAction.__members__.values()
        if not csrf_valid(token, version, csrf) or not known:
            page = await asyncio.to_thread(self.service.page, token)
            if page is None:
                return await _not_found(request, LookupError())
            if not csrf_valid(token, version, csrf):
                return self._answer(page, token, web_text(page.language, "expired"), "warning", 403)
            return self._answer(page, token, web_text(page.language, "unknown_action"), "error", 400)
        outcome = await asyncio.to_thread(self.service.act, token, version, PageAction(action_name), argument)
        page = outcome.page
        if page is None and outcome.result is not PageResult.GONE:
            page = await asyncio.to_thread(self.service.page, token)
        if page is None:
            return await _not_found(request, LookupError())
        texts = outcome.texts or ((web_text(page.language, "done"),) if outcome.result is PageResult.DONE else ())
        return self._answer(page, token, " ".join(texts), _MESSAGES[outcome.result], _STATUS[outcome.result])

    @staticmethod
    def _answer(page: PageView, token: str, message: str, kind: str, status: int, typed: str = "") -> Response:
        return HTMLResponse(render_page(page, csrf_token(token, page.version), message, kind, typed),
                            status_code=status)

    @staticmethod
    def _plausible(token: str) -> bool:
        """Only a string that could be a token goes to the database."""
        return _TOKEN.fullmatch(token) is not None


_TOKEN = re.compile(TOKEN_PATTERN)
_WATCH_CODE = re.compile(WATCH_CODE_PATTERN)
_SEAT_PATH = re.compile(r"/g/([^/]+)(?:/state)?")


RETRY_AFTER = 60
"""Seconds a client over a limit is asked to wait (the limits' window)."""


def _too_many(language: str | None = None) -> Response:
    """A 429: in the player's language where the path names a seat, else bare."""
    text = "Too Many Requests" if language is None else web_text(language, "too_many")
    return PlainTextResponse(text, status_code=429, headers={"Retry-After": str(RETRY_AFTER)})


async def _small_form(request: Request, limit: int = MAX_FORM_BYTES, files: int = 0) -> FormData | None:
    """The posted form, read only up to ``limit`` bytes, whether the client declared its length or
    sent it in chunks (HTTP/1.1 allows both); None for a bigger body, which is never read whole."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    request._body = bytes(body)  # Starlette parses the form from the body it already holds
    return await request.form(max_files=files, max_fields=10)


def visitor_language(accept_language: str | None) -> str | None:
    """The language of ours the browser prefers most (``Accept-Language``, by its q-values);
    None when it names neither."""
    best: tuple[float, int, str] | None = None
    for index, item in enumerate((accept_language or "").split(",")[:20]):
        tag, _, parameters = item.strip().partition(";")
        language = tag.strip().lower().split("-")[0]
        if language not in LANGUAGES:
            continue
        quality = 1.0
        for parameter in parameters.split(";"):
            name, _, value = parameter.strip().partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality > 0 and (best is None or (quality, -index) > best[:2]):
            best = (quality, -index, language)
    return None if best is None else best[2]


def _same_origin(request: Request, config: WebConfig) -> bool:
    """A form posted from a page of another site is refused, where the browser says so: by
    ``Sec-Fetch-Site``, else by ``Origin`` (which ``no-referrer`` turns into ``null`` for our
    own forms)."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return True
    allowed = {f"{request.url.scheme}://{request.headers.get('host', '')}", _origin_of(config.public_url)}
    return origin in allowed


def _origin_of(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


class _Guard:
    """Around every request: the limit per client address, the security headers, and one log
    line per request with the token cut out of the path (uvicorn's own access log is off)."""

    def __init__(self, app: ASGIApp, config: WebConfig,
                 language_of: Callable[[str], Awaitable[str | None]]) -> None:
        self.app = app
        self.config = config
        self.language_of = language_of
        self.per_address = RateLimiter(config.address_requests_per_minute)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        address = client_address(scope, self.config)
        status = 500

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [(name, value) for name, value in message.get("headers", [])
                           if name.decode().lower() not in {key.lower() for key in HEADERS}]
                headers += [(name.lower().encode(), value.encode()) for name, value in HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        try:
            if not self.per_address.allow(address_key(address)):
                seat = _SEAT_PATH.fullmatch(scope["path"])
                language = await self.language_of(seat.group(1)) if seat else None
                await _too_many(language)(scope, receive, send_with_headers)
            else:
                await self.app(scope, receive, send_with_headers)
        finally:
            log.info("web %s %s %s %.1f ms", scope["method"], redacted(scope["path"]), status,
                     (time.perf_counter() - started) * 1000)


def client_address(scope: Scope, config: WebConfig) -> str:
    """The client's address: the peer's, or, from a trusted proxy, the last address its
    ``X-Forwarded-For`` names that is not a trusted proxy itself."""
    peer = scope.get("client")
    address = peer[0] if peer else "unknown"
    if not config.trusts(address):
        return address
    forwarded = [value.decode("latin-1") for name, value in scope.get("headers", []) if name == b"x-forwarded-for"]
    hops = [hop.strip() for line in forwarded for hop in line.split(",") if hop.strip()]
    while hops and config.trusts(hops[-1]):
        hops.pop()
    return hops[-1] if hops else address
