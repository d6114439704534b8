"""The inbox and outbox the configuration asks for: the `[imap]` mailbox and the `[smtp]` server,
else the local Maildir folders under the data directory (SPEC §5)."""

from __future__ import annotations

from pbem.config import Config
from pbem.mail.dkim import signer_of
from pbem.mail.imap import ImapSource
from pbem.mail.sinks import DkimSigningSink, MaildirSink, OutboundSink
from pbem.mail.smtp import SmtpSink
from pbem.mail.sources import InboundSource, MaildirSource


def open_inbound_source(config: Config) -> InboundSource:
    return ImapSource(config.imap) if config.imap is not None else MaildirSource(config.inbox_dir)


def open_outbound_sink(config: Config) -> OutboundSink:
    """The SMTP server (signing each mail with DKIM when ``[smtp]`` asks for it), else the local
    outbox; raises ``pbem.mail.dkim.DkimKeyError`` for a key that cannot sign."""
    if config.smtp is None:
        return MaildirSink(config.outbox_dir)
    signer = signer_of(config)
    sink = SmtpSink(config.smtp)
    return sink if signer is None else DkimSigningSink(sink, signer)
