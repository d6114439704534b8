"""A ladder's standing in the store, and what a challenge's end does to it.

Called from the game flow (a ladder match ends, :mod:`pbem.service.games.play`), from a declined
challenge (:mod:`pbem.service.people.invitations`) and from the ladder job (a challenge not answered in
time): each takes the ladder row's lock after the match's own, as every lock of a match and its
ladder is taken, so that two results at once are applied one after the other and none is lost.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from pbem.config import Config
from pbem.render.views import EventKind
from pbem.rules import ladder as ladder_rules
from pbem.rules import scoring
from pbem.service.table.conversation import Conversation
from pbem.service.table.letters import shown_name
from pbem.service.table.tables import Table
from pbem.store.game_records import Ladder, MatchRecord, MatchStatus, Player

RESULTS_KEPT = 20
"""The latest results a ladder keeps for its page."""
STANDING_SHOWN = 50
"""A mail about a challenge shows the standing down to this place (``ladder NAME`` shows it all)."""


class HowDecided:
    """How a challenge ended (the ``how`` of a ladder result)."""

    PLAYED = "played"
    DECLINED = "declined"
    REFUSED = "refused"
    """The one challenged takes no invitations (``stop``, or mail to them bounces)."""
    UNANSWERED = "unanswered"


def locked_ladder(session: Session, ladder_id: int) -> Ladder | None:
    """The ladder row, read afresh and locked until the transaction ends (as
    :func:`pbem.service.table.tables.locked_match` locks a match)."""
    return session.get(Ladder, ladder_id, with_for_update=True, populate_existing=True)


def ladder_named(session: Session, name: str, *, lock: bool = False) -> Ladder | None:
    """The ladder of this name, locked when it is to be changed."""
    query = select(Ladder).where(Ladder.name == name)
    if lock:
        query = query.with_for_update().execution_options(populate_existing=True)
    return session.exec(query).first()


def ladder_link(ladder: Ladder, config: Config) -> str | None:
    """The ladder's read-only page, when the web board is on."""
    return None if config.web is None else f"{config.web.public_url}/l/{ladder.code}"


def standing_names(session: Session, ladder: Ladder, language: str) -> list[str]:
    """The names of the standing, place 1 first (names only: never an address)."""
    players = {player.id: player for player in session.exec(
        select(Player).where(col(Player.id).in_(ladder.standing))).all()}
    return [shown_name(players[player_id], language) for player_id in ladder.standing if player_id in players]


def open_challenges(session: Session, ladder: Ladder) -> list[MatchRecord]:
    """The ladder's challenges not yet decided: waiting for the answer, or being played."""
    return list(session.exec(select(MatchRecord).where(
        MatchRecord.ladder_id == ladder.id,
        col(MatchRecord.status).in_([MatchStatus.INVITED.value, MatchStatus.RUNNING.value]))
        .order_by(col(MatchRecord.id))).all())


def standing_event_data(session: Session, ladder: Ladder, config: Config) -> dict[str, Any]:
    """What a mail about the ladder shows of it: its name, the top of its standing (names), how
    many more stand below, and its page."""
    names = standing_names(session, ladder, config.service.language)
    return {"ladder": ladder.name, "standing": names[:STANDING_SHOWN], "more": max(0, len(names) - STANDING_SHOWN),
            "link": ladder_link(ladder, config)}


def match_over(talk: Conversation, table: Table) -> None:
    """A ladder match has ended: its winner takes the higher place."""
    winner = scoring.winner(table.score)
    if winner is not None:
        record_result(talk, table, challenger_won=winner == 0, how=HowDecided.PLAYED)


def apply_result(talk: Conversation, ladder: Ladder, challenger: int, defender: int, *, challenger_won: bool,
                 how: str) -> ladder_rules.Standing:
    """Change the standing of the ladder (locked by the caller) and remember the result; returns
    the new standing."""
    after = ladder_rules.result(tuple(ladder.standing), challenger, defender, challenger_won)
    ladder.standing = list(after)
    winner = challenger if challenger_won else defender
    ladder.results = [*ladder.results, {"at": talk.now.isoformat(timespec="minutes"), "challenger": challenger,
                                        "defender": defender, "winner": winner, "how": how}][-RESULTS_KEPT:]
    talk.session.add(ladder)
    return after


def record_result(talk: Conversation, table: Table, *, challenger_won: bool, how: str) -> None:
    """Apply a challenge's result to the standing (under the ladder's lock), remember it for the
    ladder's page, and tell both players the new standing."""
    assert table.record.ladder_id is not None
    ladder = locked_ladder(talk.session, table.record.ladder_id)
    if ladder is None:
        return
    challenger, defender = (player.id for player in table.players)
    assert challenger is not None and defender is not None
    before = tuple(ladder.standing)
    after = apply_result(talk, ladder, challenger, defender, challenger_won=challenger_won, how=how)
    places = [ladder_rules.place(after, player_id) for player_id in (challenger, defender)]
    talk.event(table, EventKind.LADDER_RESULT, 0 if challenger_won else 1, how=how, places=places,
               moved=before != after, **standing_event_data(talk.session, ladder, talk.config))
