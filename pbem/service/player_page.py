"""A player's own page of all their games (``BASE_URL/p/<page token>``), linked from the footer of
every mail to them.

The page token is the player's alone and is never a game's token: it shows their games, each
with the link of their own seat only, their ratings and their credits, and it acts on nothing
(no form), so it needs no CSRF token; the web app gives it the same limits and headers as a
game's page and keeps its token out of the log.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from pbem.config import Config
from pbem.render.views import PlayerPageView
from pbem.rules.rating import RatingKind
from pbem.service import credits, ratings
from pbem.service.account import game_rows
from pbem.service.assistant import is_assistant
from pbem.service.conversation import shown_name
from pbem.store.db import utc_now
from pbem.store.game_records import Player


class PlayerPages:
    """The service behind ``/p/<token>`` (:class:`pbem.web.app.BoardService`'s ``player_page``)."""

    def __init__(self, config: Config, engine: Engine, clock: Callable[[], datetime] = utc_now) -> None:
        self.config = config
        self.engine = engine
        self.clock = clock

    def page(self, page_token: str) -> PlayerPageView | None:
        """The page of the player whose page token this is; None for any other string."""
        with Session(self.engine) as session:
            player = session.exec(select(Player).where(Player.page_token == page_token)).first()
            if player is None or is_assistant(player):
                return None
            language = player.language or self.config.service.language
            return PlayerPageView(
                language=language,
                name=shown_name(player, language),
                games=tuple(game_rows(session, player, self.config, self.clock(), language)),
                ratings=tuple((kind.value, rating.rating, rating.experience)
                              for kind, rating in ((kind, ratings.rating_of(player, kind)) for kind in RatingKind)),
                balance=credits.balance(session, player, self.config),
            )
