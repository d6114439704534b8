"""The game service on the local Maildirs, with players who write like mail clients.

A :class:`PostOffice` runs the real pipeline (Maildir inbox → one transaction per mail →
Maildir outbox) with the real handler; :class:`Player` replies to the last mail it got, and
:meth:`Player.play_on` picks its next command from the identifiers in that mail, as a player
reading the board would.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from email.message import EmailMessage
from functools import partial
from pathlib import Path

from pbem.config import Config
from pbem.daemon.pipeline import MailPipeline
from pbem.mail.local_client import compose_mail, compose_reply, deliver_to_maildir, list_outbox
from pbem.mail.sinks import MaildirSink
from pbem.mail.sources import MaildirSource
from pbem.rules.gnubg_ids import match_id_state, position_from_id
from pbem.rules.moves import legal_plays
from pbem.rules.notation import Colour, Numbering, format_play
from pbem.service import handle_mail
from pbem.store.db import create_schema, make_engine

_IDS = re.compile(r"^Position ID: (\S+)\nMatch ID: (\S+)$", re.MULTILINE)


def text_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    assert body is not None
    return body.get_content()


def identifiers(message: EmailMessage) -> tuple[str, str]:
    found = _IDS.search(text_of(message))
    assert found, f"no identifiers in:\n{text_of(message)}"
    return found.group(1), found.group(2)


class PostOffice:
    def __init__(self, config: Config, dice=None) -> None:
        self.config = config
        self.engine = make_engine(config.database.url)
        create_schema(self.engine)
        handler = partial(handle_mail, config=config) if dice is None else partial(handle_mail, config=config, dice=dice)
        self.pipeline = MailPipeline(self.engine, MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir), handler)
        self.seen: set[Path] = set()
        self.players: list[Player] = []

    def deliver(self, message: EmailMessage) -> list[EmailMessage]:
        """Deliver one mail, run the service once, and return the mails it sent."""
        deliver_to_maildir(self.config.inbox_dir, message)
        asyncio.run(self.pipeline.read_inbox())
        asyncio.run(self.pipeline.flush_outbox())
        return self.collect()

    def collect(self) -> list[EmailMessage]:
        new = [entry for entry in list_outbox(self.config.outbox_dir) if entry.path not in self.seen]
        self.seen.update(entry.path for entry in new)
        return [entry.message for entry in new]


@dataclass
class Player:
    office: PostOffice
    address: str
    name: str
    numbering: Numbering = Numbering.OWN
    inbox: list[EmailMessage] = field(default_factory=list)

    @property
    def sender(self) -> str:
        return f"{self.name} <{self.address}>"

    @property
    def last(self) -> EmailMessage:
        return self.inbox[-1]

    def write(self, text: str, subject: str = "pbem", to: str | None = None) -> list[EmailMessage]:
        return self._post(compose_mail(self.sender, to or self.office.config.service.address, subject, text))

    def reply(self, text: str, to: EmailMessage | None = None) -> list[EmailMessage]:
        return self._post(compose_reply(self.sender, to or self.last, text))

    def _post(self, message: EmailMessage) -> list[EmailMessage]:
        sent = self.office.deliver(message)
        for player in self.office.players:
            player.inbox.extend(m for m in sent if player.address in str(m["To"]).lower())
        return sent

    def __post_init__(self) -> None:
        self.office.players.append(self)

    def next_command(self, seat: int) -> str | None:
        """What a simple player answers to the last mail: roll, take, or the first legal move."""
        text = text_of(self.last)
        if "reply  roll  or  double" in text:
            return "roll"
        if "Reply  take  or  drop" in text:
            return "take"
        if "Reply with your move" not in text:
            return None
        pid, mid = identifiers(self.last)
        state = match_id_state(mid)
        position = position_from_id(pid)
        plays = legal_plays(position, state.dice)
        play = sorted(plays.values())[0]
        return format_play(position, play, self.numbering, Colour.of_seat(seat))
