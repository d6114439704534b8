"""The Assistant: a built-in opponent backed by the ``bgsage`` engine, and the end-of-game review.

bgsage is an optional dependency (the ``assistant`` extra): :func:`engine` returns None when it
cannot be imported or loaded, and the service then says that the Assistant is not available on
this server, while everything else keeps working.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

from pbem.assistant.engine import Engine

log = logging.getLogger(__name__)

_engines: dict[int, Engine | None] = {}


def load_bgsage() -> ModuleType:
    """Import bgsage (its C++ core and network weights load with it); tests replace this."""
    return importlib.import_module("bgsage")


def engine(plies: int = 1) -> Engine | None:
    """The shared engine at ``plies``, loaded once per process; None when bgsage is unusable."""
    if plies not in _engines:
        try:
            _engines[plies] = Engine(load_bgsage(), plies)
        except Exception as exc:  # an ImportError, a missing weights file, a broken C++ module
            log.warning("the Assistant is not available: bgsage could not be loaded: %s", exc)
            _engines[plies] = None
    return _engines[plies]
