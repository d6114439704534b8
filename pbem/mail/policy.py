"""The email policy the service reads and writes mail with.

It is the standard library's ``email.policy.default`` but for one thing: the stock header
registry builds a new class for every header it parses or sets (``type(...)`` on each call,
some 40 µs), dozens of times per mail; this one builds each header class once and keeps it.
The header objects, their parsing and folding are the stock ones.
"""

from __future__ import annotations

from email.headerregistry import BaseHeader, HeaderRegistry
from email.policy import default


class _KeptHeaderClasses(HeaderRegistry):
    """A header registry that makes each header's class once per field name."""

    def __init__(self) -> None:
        super().__init__()
        self._made: dict[str, type[BaseHeader]] = {}

    def __getitem__(self, name: str) -> type[BaseHeader]:
        key = name.lower()
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = super().__getitem__(name)
        return made


MAIL_POLICY = default.clone(header_factory=_KeptHeaderClasses())
"""``email.policy.default`` with header classes kept (see the module docstring)."""
