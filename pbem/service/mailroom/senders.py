"""What of a mail's sender the service may take on: the name they give, and a note for their
opponent, so that no mail reads as if someone else wrote it and no note hands on a reply address."""

from __future__ import annotations

import re
from collections.abc import Collection
from urllib.parse import unquote

from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from pbem import names
from pbem.config import Config
from pbem.mail.headers import TOKEN_PATTERN
from pbem.service.table.assistant import NAMES as ASSISTANT_NAMES
from pbem.store.game_records import Player, Seat

MAX_NOTE_CHARS = 2000
"""A personal note is passed on up to this length."""
_TOKEN_WORD = re.compile(rf"(?<![a-z0-9]){TOKEN_PATTERN}(?![a-z0-9])")


def safe_note(text: str, service_address: str, tokens: Collection[str] = ()) -> str:
    """A note without any line that holds a service address (with any +tag) or a token: a quote
    line the reader did not recognise must never hand a player's reply address to the opponent.

    Lines are read percent- and quoted-printable-decoded; a note that holds one of ``tokens``
    (the writer's) anywhere, even split over lines or glued to other letters, is dropped whole.
    """
    local, _, domain = service_address.lower().rpartition("@")
    address = re.compile(rf"(?<![\w.+-]){re.escape(local)}(?:\+[^@\s]*)?@{re.escape(domain)}")
    flat = re.sub(r"[\s=]", "", unquote(text).lower())
    if any(token in flat for token in tokens):
        return ""
    kept = [line for line in text.split("\n")
            if not (address.search(decoded := unquote(line).lower()) or _TOKEN_WORD.search(decoded))]
    note = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return note if len(note) <= MAX_NOTE_CHARS else note[: MAX_NOTE_CHARS - 1] + "…"


def honest_name(session: Session, player: Player, name: str, config: Config) -> bool:
    """Whether ``player`` may show ``name``: not when it passes for the service, the Assistant,
    or a player (name or address) of any of ``player``'s games, so that nobody's mails read as
    if someone else wrote them (:mod:`pbem.names`).  A name refused is ignored: the player keeps
    the name they had, or, without one, their address's local part is shown."""
    service_local = config.service.address.split("@", 1)[0]
    taken = {names.skeleton(text) for text in (config.service.name, config.service.address, service_local,
                                               *ASSISTANT_NAMES.values())}
    opponent_seat, own_seat = aliased(Seat), aliased(Seat)
    opponents = session.exec(
        select(Player.name, Player.address).distinct()
        .join(opponent_seat, col(opponent_seat.player_id) == Player.id)
        .join(own_seat, col(own_seat.match_id) == col(opponent_seat.match_id))
        .where(col(own_seat.player_id) == player.id, col(Player.id) != player.id)).all()
    for other_name, other_address in opponents:
        taken |= {names.skeleton(text) for text in (other_name, other_address, other_address.split("@", 1)[0]) if text}
    return not names.passes_for(name, taken)
