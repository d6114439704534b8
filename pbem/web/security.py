"""What keeps the web board safe besides the token: the forms' CSRF tokens, the limits per link
and per address, the headers of every answer, and paths with the token cut out for the log."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import time
from collections import OrderedDict, deque
from collections.abc import Callable

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
"""Scripts and styles only from our own files (no inline script), nothing from elsewhere."""
HEADERS = {
    "Content-Security-Policy": CSP,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
"""Sent with every answer: ``no-referrer`` so that no link on the page passes the token on."""

_TOKEN_IN_PATH = re.compile(r"/([gpulw])/[^/?#]*")
_PAGE_TOKEN_OF_TOURNAMENT = re.compile(r"^(/t/[^/?#]*)/[^/?#]+")


def redacted(path: str) -> str:
    """``path`` with the game token, a player's page or unsubscribe token, a ladder's or a
    watch code left out, for logs (a tournament's code is no secret; a player's own copy of its
    page is)."""
    return _PAGE_TOKEN_OF_TOURNAMENT.sub(r"\1/…", _TOKEN_IN_PATH.sub(r"/\1/…", path))


def csrf_token(token: str, version: str) -> str:
    """The CSRF token of the forms of one page: an HMAC of the page's state version under the
    seat's token, the secret the link itself carries.  Every daemon computes the same (no
    secret of a process), it changes with every move, and without the seat's token nobody
    can make one."""
    return hmac.new(token.encode(), b"pbem-web-form\0" + version.encode(), hashlib.sha256).hexdigest()[:32]


def csrf_valid(token: str, version: str, given: str) -> bool:
    """Compared as bytes: ``compare_digest`` refuses a non-ASCII ``str``, and a form may send anything."""
    return hmac.compare_digest(csrf_token(token, version).encode(), given.encode("utf-8", "surrogatepass"))


class RateLimiter:
    """At most ``limit`` requests per key in any ``window`` seconds (a sliding window, in this
    process's memory: each daemon behind a proxy counts its own).

    At most ``max_keys`` keys are kept: the keys are held in the order of their last request,
    and a new key pushes out those whose window is over, else the one idle longest, so that
    guessed tokens or rotating addresses fill no memory and never wipe the other counters."""

    def __init__(self, limit: int, window: float = 60.0, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 100_000) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.max_keys = max_keys
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def allow(self, key: str) -> bool:
        """Count a request of ``key``; False when it is over the limit (then it is not counted)."""
        now = self.clock()
        times = self._seen.get(key)
        if times is None:
            self._make_room(now)
            times = self._seen[key] = deque()
        else:
            self._seen.move_to_end(key)
        while times and times[0] <= now - self.window:
            times.popleft()
        if len(times) >= self.limit:
            return False
        times.append(now)
        return True

    def _make_room(self, now: float) -> None:
        """Drop the keys idle for a whole window (they are first), then the longest idle one."""
        while self._seen:
            oldest = next(iter(self._seen.values()))
            if len(self._seen) < self.max_keys and oldest and oldest[-1] > now - self.window:
                return
            self._seen.popitem(last=False)


def address_key(address: str) -> str:
    """The key a client address is counted under: an IPv6 client by its /64 (one end network,
    whose host may take a new address for every request), anything else as it is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)
