"""The kept counts behind the ``ratings`` answer (issue 23, growth): the rated players per band
of ratings (``rating_counts``) change with every rated result, in its transaction, and the
total and every place read from them are what a count over all the players gives."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor

from post_office import Player as MailPlayer
from post_office import acts, invite_and_accept, text_of
from sqlmodel import Session, select

from pbem.rules.rating import RatingKind
from pbem.service.games import ratings
from pbem.store.db import make_engine, session_scope
from pbem.store.game_records import (RATING_BAND, RATING_COLUMNS, MatchStatus, Player, RatingCount,
                                     count_rating_bands, move_rating_counts, move_rating_counts_at_commit,
                                     rating_band)


def kept_counts(session: Session) -> dict[tuple[str, int], int]:
    return {(row.kind, row.band): row.players for row in session.exec(select(RatingCount)).all() if row.players}


def counted_again(session: Session) -> dict[tuple[str, int], int]:
    """The counts made afresh from the players, as revision 0020 makes them."""
    count_rating_bands(session.connection())
    return kept_counts(session)


def test_the_total_and_every_place_are_those_of_a_count_over_every_player(session):
    rng = random.Random(23)
    players = [Player(address=f"player{number}@example.org") for number in range(40)]
    session.add_all(players)
    session.flush()
    for _ in range(150):  # results as record_result writes them: first rated games, and ratings up and down
        kind, player = rng.choice(list(RatingKind)), rng.choice(players)
        rating_field, experience_field = RATING_COLUMNS[kind]
        before = getattr(player, rating_field) if getattr(player, experience_field) else None
        after = rng.choice([RATING_BAND * rng.randint(185, 190),  # on a band's lower edge
                            RATING_BAND * rng.randint(185, 190) - 1e-9,  # just under it
                            rng.gauss(1500, 30), before or 1500.0])  # or the same as before: ties
        setattr(player, rating_field, after)
        setattr(player, experience_field, getattr(player, experience_field) + 1)
        move_rating_counts(session.connection(), kind, [(before, after)])
    session.flush()
    for kind in RatingKind:
        rating_field, experience_field = RATING_COLUMNS[kind]
        rated = [getattr(player, rating_field) for player in players if getattr(player, experience_field)]
        assert 0 < len(rated) < len(players)
        for player in players:
            standing = ratings.standings(session, player, kind)
            mine = getattr(player, rating_field)
            expected = 1 + sum(other > mine for other in rated) if getattr(player, experience_field) else None
            assert (standing["total"], standing["place"]) == (len(rated), expected), (kind, mine)
    assert kept_counts(session) == counted_again(session)


def test_rated_results_by_mail_keep_the_counts(office, anna, ben):
    carl = MailPlayer(office, "carl@example.org", "Carl")
    for invitation, loser in (("invite ben@example.org", ben), ("invite carl@example.org", anna),
                              ("invite carl@example.org match 3", carl), ("invite ben@example.org unrated", ben)):
        invite_and_accept(office, anna, ben if "ben@" in invitation else carl, invitation)
        acts(office, loser, "$quit")
        assert office.table().status is MatchStatus.FINISHED
    with Session(office.engine) as session:
        kept = kept_counts(session)
        assert sum(kept.values()) == 5  # Anna, Ben and Carl in casual play, Anna and Carl in matches
        assert kept == counted_again(session)
    (answer,) = carl.write("ratings")  # Anna went from 1510 to 1500, a band down, when Carl won
    assert "You are in place 2 of 2 with 1482.7 (experience 3)" in text_of(answer)  # matches
    assert "You are in place 1 of 3 with 1510.1 (experience 1)" in text_of(answer)  # casual play


def test_results_at_once_on_several_connections_all_count(config, engine):
    """Rated games ending at the same moment (several daemons on PostgreSQL): each change of a
    band's count is made once, also when they make the same band's row at once."""
    engines = [make_engine(config.database.url) for _ in range(4)]
    together = threading.Barrier(len(engines))

    def result(engine) -> None:
        with session_scope(engine) as session:
            connection = session.connection()
            together.wait()
            move_rating_counts(connection, RatingKind.PRIZE, [(None, 1601.0), (None, 1399.0)])

    with ThreadPoolExecutor(len(engines)) as threads:
        list(threads.map(result, engines))
    with Session(engines[0]) as session:
        assert kept_counts(session) == {("prize", rating_band(1601.0)): 4, ("prize", rating_band(1399.0)): 4}
    for engine in engines:
        engine.dispose()


def test_the_bands_change_when_the_result_commits_and_not_after_a_rollback(engine):
    with Session(engine) as session:
        move_rating_counts_at_commit(session, RatingKind.CASUAL, [(None, 1510.0)])
        assert kept_counts(session) == {}  # nothing locked before the commit
        session.rollback()  # the mail is applied again from the start
        session.commit()
        assert kept_counts(session) == {}
        move_rating_counts_at_commit(session, RatingKind.CASUAL, [(None, 1510.0)])
        session.commit()
        assert kept_counts(session) == {("casual", rating_band(1510.0)): 1}
