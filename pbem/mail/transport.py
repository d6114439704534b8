"""The inbox and outbox the configuration asks for: the `[imap]` mailbox and the `[smtp]` server,
else the local Maildir folders under the data directory (SPEC §5)."""

from __future__ import annotations

from pbem.config import Config
from pbem.mail.imap import ImapSource
from pbem.mail.sinks import MaildirSink, OutboundSink
from pbem.mail.smtp import SmtpSink
from pbem.mail.sources import InboundSource, MaildirSource


def open_inbound_source(config: Config) -> InboundSource:
    return ImapSource(config.imap) if config.imap is not None else MaildirSource(config.inbox_dir)


def open_outbound_sink(config: Config) -> OutboundSink:
    return SmtpSink(config.smtp) if config.smtp is not None else MaildirSink(config.outbox_dir)
