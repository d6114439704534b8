"""Several `pbem serve` processes on one PostgreSQL database and one IMAP mailbox (Dovecot), with
answers by SMTP (aiosmtpd): every mail is applied once, every answer is sent once, and of two
different mails for the same turn exactly one is played (the other is answered as a reply to an
older mail).  The mails come in bursts, so that the daemons really read the same mails together."""

from __future__ import annotations

import subprocess
import sys
from email.message import EmailMessage
from pathlib import Path

import pytest
from conftest import SERVICE, write_config
from live_office import SERVICE_USER, LivePostOffice
from post_office import Player, identifiers, is_confirmation, text_of
from sqlmodel import Session, select
from test_games_by_mail import assert_every_answer_sent_once, assert_every_mail_put_away

from pbem.config import load_config
from pbem.mail.local_client import compose_mail, compose_reply
from pbem.rules.gnubg_ids import match_id_state, position_from_id
from pbem.rules.moves import legal_plays
from pbem.rules.notation import Colour, format_play
from pbem.store.db import create_schema, head_revision, make_engine, schema_revision
from pbem.store.game_records import MatchRecord, MatchStatus

pytestmark = pytest.mark.postgresql_only

DAEMONS = 3
PAIRS = 4
SETTLE_SECONDS = 60.0


def start_daemons(config_file: Path, count: int) -> list[subprocess.Popen[str]]:
    return [subprocess.Popen([sys.executable, "-m", "pbem.cli", "serve", "--config", str(config_file)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for _ in range(count)]


def stop_daemons(daemons: list[subprocess.Popen[str]]) -> list[str]:
    """Stop them (SIGTERM) and return their logs."""
    for daemon in daemons:
        daemon.terminate()
    return [daemon.communicate(timeout=30)[1] for daemon in daemons]


def burst(office: LivePostOffice, mails: list[tuple[Player, EmailMessage]]) -> None:
    """Put all the mails into the mailbox at once, then wait until every one is answered; the
    answers are filed with their recipients."""
    for player, mail in mails:
        player.outbox.append(mail)
        office.dovecot.deliver(SERVICE_USER, mail)
    office.settle(SETTLE_SECONDS)
    office.file(office.collect())


def two_different_moves(player: Player, seat: int, mail: EmailMessage) -> tuple[str, str]:
    position_id, match_id = identifiers(mail)
    position = position_from_id(position_id)
    plays = sorted(legal_plays(position, match_id_state(match_id).dice).values())
    assert len(plays) >= 2
    return tuple(format_play(position, play, player.numbering, Colour.of_seat(seat)) for play in plays[:2])  # type: ignore[return-value]


def test_three_daemons_apply_each_mail_once_and_play_one_of_two_moves_for_a_turn(
        data_dir, dovecot, smtp_server, database_table):
    config_file = write_config(data_dir, dovecot, smtp_server, database_table,
                               imap={"idle": True, "poll_interval": 5})
    office = LivePostOffice(load_config(config_file), dovecot, smtp_server)
    pairs = [(Player(office, f"anna{n}@example.org", f"Anna {n}"), Player(office, f"ben{n}@example.org", f"Ben {n}"))
             for n in range(PAIRS)]
    daemons = start_daemons(config_file, DAEMONS)
    try:
        # Invitations, their confirmations and the acceptances, each in one burst.
        burst(office, [(anna, compose_mail(anna.sender, SERVICE[0], "pbem", f"invite {ben.address}"))
                       for anna, ben in pairs])
        assert all(is_confirmation(anna.last) for anna, _ in pairs)
        burst(office, [(anna, compose_reply(anna.sender, anna.last, "yes")) for anna, _ in pairs])
        accepts = [(ben, compose_reply(ben.sender, ben.last, "accept")) for _, ben in pairs]
        again = [(ben, compose_reply(ben.sender, ben.last, "accept")) for _, ben in pairs]  # a second accept
        burst(office, accepts + again)
        with Session(office.engine) as session:
            matches = session.exec(select(MatchRecord)).all()
        assert len(matches) == PAIRS and all(match.status == MatchStatus.RUNNING for match in matches)

        # Two different moves for the same turn, sent together: exactly one is played.
        moves, decisions = [], {}
        for match in matches:
            table = office.table(match.id)
            assert table.game is not None and table.game.to_act is not None
            seat = table.game.to_act
            player = next(p for anna, ben in pairs for p in (anna, ben) if p.address == table.players[seat].address)
            turn_mail = player.last_of(table.token(seat))
            assert turn_mail is not None
            decisions[match.id] = len(table.game.record)
            moves += [(player, compose_reply(player.sender, turn_mail, move))
                      for move in two_different_moves(player, seat, turn_mail)]
        burst(office, moves)
        for match_id, before in decisions.items():
            game = office.table(match_id).game
            assert game is not None and len(game.record) == before + 1, game.record
        answers = [mail for anna, ben in pairs for mail in (*anna.inbox, *ben.inbox)
                   if mail["In-Reply-To"] in {str(move["Message-ID"]) for _, move in moves}]
        # The move that lost the race answers the newest mail its player got (a move brings no
        # copy), so it is not an older mail: it is refused as a move out of turn.
        refused = [mail for mail in answers if "It is not your turn" in text_of(mail)]
        assert len(refused) == PAIRS, [text_of(mail) for mail in answers]
    finally:
        logs = stop_daemons(daemons)
        print("\n\n".join(logs))  # shown when the test fails
    assert all(daemon.returncode == 0 for daemon in daemons), logs
    assert_every_mail_put_away(office, [player for pair in pairs for player in pair])
    assert_every_answer_sent_once(office)
    assert sum(1 for log in logs if ": applied" in log) >= 2, logs  # the daemons shared the work


def test_daemons_started_together_on_an_empty_database_create_the_schema_once(database_table):
    url = database_table.split('"')[1]
    starters = [subprocess.Popen([sys.executable, "-c", "import sys; from pbem.store.db import create_schema, "
                                  "make_engine; create_schema(make_engine(sys.argv[1]))", url],
                                 stderr=subprocess.PIPE, text=True) for _ in range(6)]
    errors = [starter.communicate(timeout=60)[1] for starter in starters]
    assert all(starter.returncode == 0 for starter in starters), errors
    engine = make_engine(url)
    with engine.connect() as connection:
        assert schema_revision(connection) == head_revision()
    create_schema(engine)
    engine.dispose()
