"""Whether the operator's own mail server vouches for a mail's From address (RFC 8601).

A receiving server that checks DKIM and DMARC (OpenDMARC, Rspamd, …) writes what it found into
an ``Authentication-Results`` header that begins with its *authserv-id*, on top of the headers
already there, and removes any header with its own id that came with the mail (forgeries). So
only the topmost header with the trusted id counts: it says ``dmarc=pass`` for the From domain
(``header.from``), or ``dkim=pass`` for a signing domain (``header.d``, else the domain of
``header.i``) aligned with it. Aligned here means the same domain or a parent of it
(``example.org`` signing for ``mail.example.org``), a simple form of DMARC's relaxed alignment
that never trusts a signature of a sibling or a child for its parent. Headers of other ids are
somebody else's claims and are ignored; a header with the trusted id that cannot be parsed
proves nothing. The header is parsed with ``authres``.

This module knows nothing of games: it answers whether an address is authenticated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import authres
import authres.core

MAX_COMMENT_DEPTH = 8
"""Comments nest no deeper than this in a header worth parsing: authres parses them by
recursion, and a hostile mail could nest thousands."""
_AUTHSERV_ID = re.compile(r"\s*(?:\([^()]*\)\s*)*([^\s;()]+)")
"""The authserv-id at the start of a header value, after any comment, before parsing it all:
to tell which header is ours even when the rest does not parse."""


def sender_authenticated(headers: Sequence[str], sender: str, trusted_authserv_id: str) -> bool:
    """True when the topmost of ``headers`` (Authentication-Results values, top first, as the
    mail holds them) whose authserv-id is ``trusted_authserv_id`` proves ``sender``'s domain."""
    domain = sender.rpartition("@")[2].strip().lower().rstrip(".")
    if not domain:
        return False
    trusted = trusted_authserv_id.lower()
    for header in headers:
        unfolded = " ".join(header.split())
        found = _AUTHSERV_ID.match(unfolded)
        if found is None or found.group(1).lower() != trusted:
            continue
        if _comment_depth(unfolded) > MAX_COMMENT_DEPTH:
            return False
        try:
            parsed = authres.all_features().parse_value(unfolded)
        except (authres.core.AuthResError, ValueError, TypeError, IndexError, RecursionError):
            return False
        return any(_proves(result, domain) for result in parsed.results)
    return False


def _comment_depth(text: str) -> int:
    """How deep parentheses nest in ``text`` (escaped ones count too: an upper bound)."""
    depth = deepest = 0
    for character in text:
        if character == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif character == ")":
            depth = max(depth - 1, 0)
    return deepest


def _proves(result: authres.core.AuthenticationResult, domain: str) -> bool:
    """A passing DMARC result for exactly this domain, or a passing DKIM signature aligned with it."""
    if str(result.result).lower() != "pass":
        return False
    method = str(result.method).lower()
    properties = {(str(prop.type).lower(), str(prop.name).lower()): _domain_of(str(prop.value))
                  for prop in result.properties if prop.value is not None}
    if method == "dmarc":
        return properties.get(("header", "from")) == domain
    if method == "dkim":
        signer = properties.get(("header", "d")) or properties.get(("header", "i"))
        return signer is not None and _aligned(signer, domain)
    return False


def _domain_of(value: str) -> str:
    """The domain a property names: ``example.org``, ``@example.org`` or ``user@example.org``."""
    return value.strip().strip('"').rpartition("@")[2].lower().rstrip(".")


def _aligned(signer: str, domain: str) -> bool:
    """The signing domain is the From domain or a parent of it (never a bare top-level domain)."""
    return "." in signer and (domain == signer or domain.endswith("." + signer))
