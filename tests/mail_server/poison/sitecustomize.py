"""Loaded by the `pbem serve` processes of the poison-mail test (through PYTHONPATH): the game
service's handler kills its own process with SIGKILL when a mail's subject says POISON, as an
unknown bug in the service might.  Nothing of this is in pbem itself."""

import os
import signal

import pbem.service

_real_handle_mail = pbem.service.handle_mail


def _deadly_handle_mail(session, raw, inbound, config, **kwargs):
    if b"Subject: POISON" in raw:
        os.kill(os.getpid(), signal.SIGKILL)
    return _real_handle_mail(session, raw, inbound, config, **kwargs)


pbem.service.handle_mail = _deadly_handle_mail
