"""A ladder's read-only page (``BASE_URL/l/<ladder code>``), linked from the ladder mails.

It shows the standing, the open challenges and the latest results by name only: no address,
no game token and no link to a game, so that anyone the link reaches learns nothing that acts.
It reads without locking anything, so a reader holds up no mail.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbem.config import Config
from pbem.render.views import LadderPageView
from pbem.service.games.ladder_standing import open_challenges
from pbem.service.table.letters import shown_name
from pbem.store.game_records import Ladder, MatchStatus, Player, Seat


def ladder_page(config: Config, engine: Engine, code: str) -> LadderPageView | None:
    """The page of the ladder with this code; None for any other string."""
    language = config.service.language
    with Session(engine) as session:
        ladder = session.exec(select(Ladder).where(Ladder.code == code)).first()
        if ladder is None:
            return None
        challenges = [(record, [seat.player_id for seat in session.exec(
            select(Seat).where(Seat.match_id == record.id).order_by(col(Seat.number))).all()])
            for record in open_challenges(session, ladder)]
        wanted = ({*ladder.standing} | {player_id for _, seated in challenges for player_id in seated}
                  | {result[key] for result in ladder.results for key in ("challenger", "defender")})
        names = {player.id: shown_name(player, language)
                 for player in session.exec(select(Player).where(col(Player.id).in_(wanted))).all()}
        return LadderPageView(
            language=language, name=ladder.name, match_length=ladder.match_length, reach=ladder.reach,
            answer_days=ladder.answer_days,
            standing=tuple(names[player_id] for player_id in ladder.standing if player_id in names),
            challenges=tuple((names[seated[0]], names[seated[1]], record.status == MatchStatus.RUNNING)
                             for record, seated in challenges),
            results=tuple((result["at"][:10], names[result["winner"]],
                           names[result["defender" if result["winner"] == result["challenger"] else "challenger"]],
                           result["how"]) for result in reversed(ladder.results)),
        )
