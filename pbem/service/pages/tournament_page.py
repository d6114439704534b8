"""A knockout tournament's read-only page (``BASE_URL/t/<code>``): the bracket, the scores, and on
a player's own copy (with their page token) links to their games.
"""

from __future__ import annotations

from sqlmodel import Session, select

from pbem.config import Config
from pbem.render.views import BracketMatch, TournamentPageView
from pbem.rules import brackets
from pbem.rules.brackets import Bracket
from pbem.service.competitions.tournaments import players_of
from pbem.service.table.tables import Table
from pbem.store.game_records import MatchRecord, Player, TournamentRecord


def page_view(session: Session, config: Config, code: str, page_token: str | None) -> TournamentPageView | None:
    """The tournament's page; with a player's page token, their own matches link to their games.
    None for an unknown code, or a page token that is no player's."""
    record = session.exec(select(TournamentRecord).where(TournamentRecord.code == code)).first()
    viewer = None if page_token is None else session.exec(select(Player).where(Player.page_token == page_token)).first()
    if record is None or (page_token is not None and viewer is None):
        return None
    players = players_of(session, record)
    language = (viewer.language if viewer is not None else None) or config.service.language
    rounds: tuple[tuple[BracketMatch, ...], ...] = ()
    champion = None
    if record.bracket is not None:
        bracket = Bracket.from_dict(record.bracket)
        played = _played(session, config, record, viewer)
        rounds = tuple(tuple(_cell(bracket, round, index, players, played) for index in range(len(row)))
                       for round, row in enumerate(bracket.winners))
        if (winner := brackets.champion(bracket)) is not None:
            champion = players[winner].display_name
    return TournamentPageView(language=language, name=record.name, code=record.code, status=str(record.status),
                              size=record.size, length=record.match_length,
                              entrants=tuple(player.display_name for player in players.values()), rounds=rounds,
                              champion=champion)


def _cell(bracket: Bracket, round: int, index: int, players: dict[int, Player],
          played: dict[tuple[int, int], tuple[dict[int, int], str | None]]) -> BracketMatch:
    pair = bracket.players(round, index)
    names = tuple(None if player is None else players[player].display_name for player in pair)
    winner = bracket.winners[round][index]
    points, link = played.get((round, index), ({}, None))
    first, second = pair
    scores = (points[first], points[second]) if first in points and second in points else None
    return BracketMatch(names=(names[0], names[1]), winner=None if winner is None else pair.index(winner),
                        bye=round == 0 and None in pair, link=link, scores=scores)


def _played(session: Session, config: Config, record: TournamentRecord,
            viewer: Player | None) -> dict[tuple[int, int], tuple[dict[int, int], str | None]]:
    """The matches of the bracket played or being played, by place: the points of each player (by
    id) and, on the viewer's own copy, the viewer's seat link of their own matches."""
    played = {}
    for match in session.exec(select(MatchRecord).where(MatchRecord.tournament_id == record.id)).all():
        if match.tournament_round is None or match.tournament_index is None:
            continue
        table = Table.load(session, match)
        points = {player.id: table.score.points[seat] for seat, player in enumerate(table.players)
                  if player.id is not None}
        seat = None if viewer is None else table.seat_of(viewer)
        link = None if seat is None or config.web is None else config.web.link(table.token(seat))
        played[match.tournament_round, match.tournament_index] = (points, link)
    return played
