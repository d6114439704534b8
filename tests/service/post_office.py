"""The game service on the local Maildirs, with players who write like mail clients.

A :class:`PostOffice` runs the real pipeline (Maildir inbox → one transaction per mail →
Maildir outbox) with the real handler; :class:`Player` replies to the last mail it got, and
:meth:`Player.next_command` picks its next command from the identifiers in that mail, as a
player reading the board would.  :func:`check_answers` holds what SPEC §4 promises of every
mail, so that each test step can check it against the state in the database.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from email.message import EmailMessage
from email.utils import parseaddr
from functools import partial
from pathlib import Path

from sqlmodel import Session, select

from pbem.config import Config, load_config
from pbem.daemon.pipeline import MailPipeline
from pbem.mail.composing import parse_game_message_id
from pbem.mail.local_client import compose_mail, compose_reply, deliver_to_maildir, read_mail_file
from pbem.mail.sinks import MaildirSink
from pbem.mail.sources import MaildirSource
from pbem.rules.game import ActionKind, Dice, Game
from pbem.rules.game import match_id_state as match_state
from pbem.rules.gnubg_ids import match_id_state, position_from_id
from pbem.rules.moves import legal_plays
from pbem.rules.notation import Colour, Numbering, format_play
from pbem.service import handle_mail
from pbem.service.jobs.review_job import in_process, run_reviews
from pbem.service.table.tables import Table
from pbem.store.db import create_schema, make_engine
from pbem.store.game_records import FinishedGame, MatchRecord, MatchStatus, Player as PlayerRow, Seat
from pbem.store.mail_records import InboundMail, OutboundMail

_IDS = re.compile(r"^Position ID: (\S+)\nMatch ID: (\S+)$", re.MULTILINE)
_TOKEN_IN_REPLY_TO = re.compile(r"\+([a-z2-7]{26})@")


def text_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    assert body is not None
    return body.get_content()


def prose_of(message: EmailMessage) -> str:
    """The text part with every run of spaces and line ends as one space: a sentence is found in
    it however the text was wrapped (write the sentence with single spaces)."""
    return " ".join(text_of(message).split())


def identifiers(message: EmailMessage) -> tuple[str, str]:
    found = _IDS.search(text_of(message))
    assert found, f"no identifiers in:\n{text_of(message)}"
    return found.group(1), found.group(2)


def token_of(message: EmailMessage) -> str | None:
    """The game token in the Reply-To of a service mail (None: a mail of no game)."""
    found = _TOKEN_IN_REPLY_TO.search(str(message.get("Reply-To", "")))
    return found.group(1) if found else None


class LoadedDice:
    """Reproducible dice: first the scripted rolls, then a seeded generator; the game's dice seed
    is ignored (the service's own dice, :data:`pbem.service.table.dice.SEEDED_DICE`, are used by a
    :class:`PostOffice` without loaded dice)."""

    def __init__(self, seed: int = 0, script: Iterable[Dice] = ()) -> None:
        self.random = random.Random(seed)
        self.script = list(script)

    def load(self, *rolls: Dice) -> None:
        """The next rolls, in order (an opening roll is (inviter's die, invited's die))."""
        self.script.extend(rolls)

    def roll(self, seed: bytes | None = None, number: int = 0) -> Dice:
        if self.script:
            return self.script.pop(0)
        return self.random.randint(1, 6), self.random.randint(1, 6)


class PostOffice:
    def __init__(self, config: Config, dice: LoadedDice | None = None) -> None:
        self.config = config
        self.dice = dice
        self.engine = make_engine(config.database.url)
        create_schema(self.engine)
        handler = partial(handle_mail, config=config) if dice is None else partial(handle_mail, config=config, dice=dice)
        self.pipeline = MailPipeline(self.engine, MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir), handler)
        self.seen: set[Path] = set()
        self.players: list[Player] = []

    def deliver(self, message: EmailMessage) -> list[EmailMessage]:
        """Deliver one mail, run the service once, and return the mails it sent."""
        deliver_to_maildir(self.config.inbox_dir, message)
        return self.run()

    def run(self) -> list[EmailMessage]:
        asyncio.run(self.pipeline.read_inbox())
        asyncio.run(self.pipeline.flush_outbox())
        return self.collect()

    def review(self, **options) -> list[EmailMessage]:
        """Run the daemon's review job once, computing in this process; the review mails it sent
        are filed with their recipients and returned."""
        compute = in_process(self.config.assistant.plies)
        asyncio.run(run_reviews(self.engine, self.config, compute, **options))
        asyncio.run(self.pipeline.flush_outbox())
        sent = self.collect()
        self.file(sent)
        return sent

    def collect(self) -> list[EmailMessage]:
        """The mails put into the outbox since the last look, oldest first (only those are parsed)."""
        outbox = self.config.outbox_dir
        new = [path for sub in ("new", "cur") if (outbox / sub).is_dir() for path in (outbox / sub).iterdir()
               if path not in self.seen]
        self.seen.update(new)
        return [read_mail_file(path) for path in sorted(new, key=lambda path: (path.stat().st_mtime_ns, path.name))]

    def file(self, sent: list[EmailMessage]) -> None:
        """Put each mail sent into its recipient's inbox."""
        for player in self.players:
            player.inbox.extend(mail for mail in sent if recipient(mail) == player.address)

    # -- the database, as the tests look at it ---------------------------------------------

    def matches(self) -> list[MatchRecord]:
        with Session(self.engine) as session:
            return list(session.exec(select(MatchRecord).order_by(MatchRecord.id)).all())

    def table(self, match_id: int | None = None) -> Table:
        """The match (the newest if none is named) with its players, score and game."""
        with Session(self.engine) as session:
            record = session.get(MatchRecord, match_id) if match_id else session.exec(
                select(MatchRecord).order_by(MatchRecord.id.desc())).first()  # type: ignore[union-attr]
            assert record is not None
            return Table.load(session, record)

    def snapshot(self) -> tuple:
        """Everything a mail may change in the game state, to show that it changed nothing."""
        with Session(self.engine) as session:
            notes = {(seat.match_id, seat.number): seat.notes for seat in session.exec(select(Seat)).all()}
            matches = [(m.status, m.score, m.game, m.game_number, notes[m.id, 0], notes[m.id, 1])
                       for m in session.exec(select(MatchRecord).order_by(MatchRecord.id)).all()]
            players = [(p.address, p.language, p.numbering)
                       for p in session.exec(select(PlayerRow).order_by(PlayerRow.id)).all()]
            return matches, players

    def inbound(self, message_id: str) -> InboundMail | None:
        with Session(self.engine) as session:
            return session.exec(select(InboundMail).where(InboundMail.message_id == message_id)).first()

    def outbound_count(self) -> int:
        with Session(self.engine) as session:
            return len(session.exec(select(OutboundMail.id)).all())


@dataclass
class Player:
    office: PostOffice
    address: str
    name: str
    numbering: Numbering = Numbering.OWN
    inbox: list[EmailMessage] = field(default_factory=list)
    outbox: list[EmailMessage] = field(default_factory=list)

    @property
    def sender(self) -> str:
        return f"{self.name} <{self.address}>"

    @property
    def last(self) -> EmailMessage:
        return self.inbox[-1]

    def write(self, text: str, subject: str = "pbem", to: str | None = None) -> list[EmailMessage]:
        return self.post(compose_mail(self.sender, to or self.office.config.service.address, subject, text))

    def write_confirmed(self, text: str, yes: str = "yes") -> list[EmailMessage]:
        """Account commands or an invitation in a new mail (no token): the service asks for
        confirmation by mail to this address, and answering that mail with ``yes`` carries them
        out; returns the answers to that."""
        (question,) = self.write(text)
        assert is_confirmation(question), text_of(question)
        return self.reply(yes, to=question)

    def reply(self, text: str, to: EmailMessage | None = None) -> list[EmailMessage]:
        return self.post(compose_reply(self.sender, to or self.last, text))

    def post(self, message: EmailMessage) -> list[EmailMessage]:
        """Send a mail as this player; every mail the service sends is filed with its recipient."""
        self.outbox.append(message)
        sent = self.office.deliver(message)
        self.office.file(sent)
        return sent

    def answers(self, sent: list[EmailMessage]) -> list[EmailMessage]:
        return [mail for mail in sent if recipient(mail) == self.address]

    def __post_init__(self) -> None:
        self.office.players.append(self)

    def last_of(self, token: str | None) -> EmailMessage | None:
        """The last mail of the game with this token (None: of no game) in the inbox; a review,
        which shows no state and says it asks nothing (its Message-ID names none), is passed over."""
        return next((mail for mail in reversed(self.inbox) if token_of(mail) == token
                     and (token is None or not is_review(mail))), None)

    def next_command(self, seat: int, mail: EmailMessage | None = None) -> str | None:
        """What a simple player answers to a mail: roll, take, or the first legal move."""
        mail = mail or self.last
        text = text_of(mail)
        if "reply  roll  or  double" in text:
            return "roll"
        if "Reply  take  or  drop" in text:
            return "take"
        if "Reply with your move" not in text:
            return None
        pid, mid = identifiers(mail)
        state = match_id_state(mid)
        position = position_from_id(pid)
        plays = legal_plays(position, state.dice)
        play = sorted(plays.values())[0]
        return format_play(position, play, self.numbering, Colour.of_seat(seat))


def office_with_credits(data_dir: Path, database_table: str, start: int, name: str) -> tuple[Path, PostOffice]:
    """A post office (loaded dice) whose players each start with `start` credits, and its config
    file (``NAME.toml`` beside the data directory, for the command-line tools)."""
    config_file = data_dir.parent / f"{name}.toml"
    config_file.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data_dir}"\n'
                           f'{database_table}[credits]\nstart = {start}\n', encoding="utf-8")
    return config_file, PostOffice(load_config(config_file), LoadedDice(seed=1))


def is_review(mail: EmailMessage) -> bool:
    """A review mail: in a game's thread (its token), but its Message-ID names no game state."""
    return token_of(mail) is not None and parse_game_message_id(str(mail["Message-ID"])) is None \
        and not is_confirmation(mail)


def is_confirmation(mail: EmailMessage) -> bool:
    """A mail asking to confirm held commands (its token belongs to no game)."""
    return token_of(mail) is not None and ("Please confirm" in text_of(mail) or "Bitte bestätigen" in text_of(mail))


def set_game(office: PostOffice, match_id: int, **changes: object) -> None:
    """Change the stored game of a match (a board, the cube) as a test arranges a position."""
    with Session(office.engine) as session:
        record = session.get(MatchRecord, match_id)
        assert record is not None and record.game is not None
        record.game = replace(Game.from_dict(record.game), **changes).to_dict()
        session.add(record)
        session.commit()


def side(points: dict[int, int]) -> tuple[int, ...]:
    """A side of a Position from {point: checkers} in its owner's numbering (no bar)."""
    checkers = [0] * 25
    for point, count in points.items():
        checkers[point - 1] += count
    return tuple(checkers)


def recipient(mail: EmailMessage) -> str:
    return parseaddr(str(mail["To"]))[1].lower()


# -- what every mail must show (SPEC §4) -----------------------------------------------------


def check_answers(office: PostOffice, question: EmailMessage, sent: list[EmailMessage],
                  previous: dict[str, EmailMessage | None] | None = None) -> None:
    """Check every mail ``sent`` in answer to ``question`` against the database.

    The sender's answers thread under their mail; a mail to anyone else threads under the
    previous mail of their thread (``previous``: recipient → the last game mail they had).
    Game mails show identifiers that decode to the stored game, from the right seats.
    """
    asker = parseaddr(str(question["From"]))[1].lower()
    if not any(recipient(mail) == asker for mail in sent):
        assert sender_waits(office, asker), "the sender got no answer, and they must act"
    for mail in sent:
        assert mail["Auto-Submitted"] == "auto-replied"
        if recipient(mail) == asker:
            assert mail["In-Reply-To"] == question["Message-ID"]
            assert str(mail["References"]).split()[-1] == question["Message-ID"]
        elif previous is not None and previous.get(recipient(mail)) is not None:
            earlier = previous[recipient(mail)]
            assert earlier is not None
            own = [mine["Message-ID"] for p in office.players if p.address == recipient(mail) for mine in p.outbox]
            # under the last mail of the thread: the last one they got, or their own answer to it
            # when that answer got no mail back (issue 20: a move gets none while the opponent is on turn)
            assert mail["In-Reply-To"] in (earlier["Message-ID"], *own), "not threaded under the previous game mail"
        token = token_of(mail)
        if token is not None:
            check_identifiers(office, mail, token)


def sender_waits(office: PostOffice, address: str) -> bool:
    """Whether a sender may get no answer (issue 20): their mail only made moves in games that
    now wait for the opponent, so their next mail comes when they must act again."""
    with Session(office.engine) as session:
        player = session.exec(select(PlayerRow).where(PlayerRow.address == address)).first()
        assert player is not None
        seats = session.exec(select(Seat).where(Seat.player_id == player.id)).all()
        waiting = False
        for seat in seats:
            record = session.get(MatchRecord, seat.match_id)
            assert record is not None
            if record.status != MatchStatus.RUNNING.value or record.game is None:
                continue
            game = Game.from_dict(record.game)
            offered = game.resign_offer is not None and game.resign_offer[0] == seat.number
            assert offered or game.to_act != seat.number, f"{address} must act in match {record.id} but got no mail"
            waiting = True
        return waiting


def check_identifiers(office: PostOffice, mail: EmailMessage, token: str) -> None:
    """The mail's Position ID and Match ID are the stored game's, with the inviter as player 0."""
    with Session(office.engine) as session:
        seat = session.exec(select(Seat).where(Seat.token == token)).first()
        record = None if seat is None else session.get(MatchRecord, seat.match_id)
    if record is None:
        assert is_confirmation(mail), text_of(mail)
        return
    if record.game is None:
        assert "Position ID:" not in text_of(mail)
        return
    game = Game.from_dict(record.game)
    pid, mid = identifiers(mail)
    state = match_id_state(mid)
    assert position_from_id(pid) == game.board
    assert state.player_on_roll == game.seat
    assert state.turn == match_state(game).turn  # an offer to resign turns it to the one who answers
    assert state.resignation_offered == (0 if game.resign_offer is None or game.phase.value == "double_offered"
                                         else int(game.resign_offer[1]))
    if game.resign_offer is None:
        assert state.turn == (game.to_act if game.to_act is not None else game.seat)
    assert state.score == game.score
    assert state.cube_value == game.cube and state.cube_owner == game.cube_owner
    assert state.dice == tuple(sorted(game.dice or (0, 0), reverse=True))
    assert state.crawford == game.crawford
    assert state.double_offered == (game.phase.value == "double_offered")
    assert state.match_length == (game.rules.length if game.rules.format.value == "match" else 0)


def play_turn(office: PostOffice, players: Sequence[Player], match_id: int | None = None) -> list[EmailMessage]:
    """The player to act in the match (the newest if none is named) answers what their last mail
    of it asks, as a simple player does (roll, take, the first legal move); the mails sent."""
    table = office.table(match_id)
    assert table.game is not None and table.game.to_act is not None
    seat = table.game.to_act
    player = players[seat]
    last = player.last_of(table.token(seat))
    assert last is not None, f"{player.name} got no mail of match {table.id}"
    command = player.next_command(seat, last)
    assert command, f"{player.name} must act but was not told so:\n{text_of(last)}"
    return player.reply(command, to=last)


def play_to_end(office: PostOffice, players: tuple[Player, Player], match_id: int, max_steps: int = 3000) -> int:
    """Both players answer what the service asks until the match is over; returns the steps.

    Every step is checked: the answers (:func:`check_answers`), that the player who must act
    next was told so in the mail they got last, that both hear of a game's end, and that every
    mail a player gets tells each move the opponent made since their previous mail (issue 20:
    no mail for those moves themselves), a move played for the opponent by automove included.
    """
    told_up_to: dict[int, tuple[int, int]] = {}
    """Per seat: (game number, length of the game record) when it got its last mail."""
    for step in range(max_steps):
        table = office.table(match_id)
        if table.status is MatchStatus.FINISHED:
            return step
        game = table.game
        assert game is not None and game.to_act is not None
        seat = game.to_act
        player = players[seat]
        last = player.last_of(table.token(seat))
        assert last is not None
        command = player.next_command(seat, last)
        assert command, f"{player.name} must act but was not told so:\n{text_of(last)}"
        previous = {p.address: p.last_of(table.token(i)) for i, p in enumerate(players)}
        sent = player.reply(command, to=last)
        check_answers(office, player.outbox[-1], sent, previous)
        after = office.table(match_id)
        recipients = {recipient(mail) for mail in sent}
        assert recipients <= {p.address for p in players}
        if after.status is MatchStatus.FINISHED or after.record.game_number != table.record.game_number:
            assert recipients == {p.address for p in players}, "a game ended and a player was not told"
        _check_moves_told(after, players, sent, told_up_to)
        if after.game is not None and after.game.to_act is not None:
            acting = players[after.game.to_act]
            told = acting.last_of(after.token(after.game.to_act))
            assert told is not None and told in sent
            assert "Your turn" in str(told["Subject"]) or "double offered" in str(told["Subject"]), told["Subject"]
    raise AssertionError(f"the match did not end in {max_steps} steps")


def _check_moves_told(table: Table, players: tuple[Player, Player], sent: list[EmailMessage],
                      told_up_to: dict[int, tuple[int, int]]) -> None:
    game = table.game
    assert game is not None
    for seat, player in enumerate(players):
        mails = player.answers(sent)
        if not mails:
            continue
        since = told_up_to.get(seat)
        if since is not None and since[0] == table.record.game_number:
            name = players[1 - seat].name
            made = [action for action in game.record[since[1]:]
                    if action.kind == ActionKind.MOVE and action.seat == 1 - seat]
            text = re.sub(rf"{name} played (?:[\w/()*]+ )+\(\. from, o to\)", "", prose_of(mails[-1]))  # the board's legend
            if not text.startswith("Hello "):
                continue  # the counted phrases are English
            told = text.count(f"{name} played ") + text.count(f"{name}'s only play") + text.count(f"{name} bore off")
            passed = len(re.findall(rf"{name} rolled \d-\d and cannot move", text))
            assert (told, passed) == (sum(1 for action in made if action.play), sum(1 for action in made if not action.play)), \
                f"{len(made)} moves of {name} since {player.name}'s last mail:\n{text}"
        told_up_to[seat] = (table.record.game_number, len(game.record))


def finished_games(office: PostOffice, match_id: int) -> list[Game]:
    with Session(office.engine) as session:
        rows = session.exec(select(FinishedGame).where(FinishedGame.match_id == match_id)
                            .order_by(FinishedGame.number)).all()
        return [Game.from_dict(row.game) for row in rows]


def attachment(mail: EmailMessage, suffix: str) -> str | None:
    """The text of the mail's attachment whose file name ends with ``suffix``."""
    for part in mail.iter_attachments():
        if (part.get_filename() or "").endswith(suffix):
            assert part.get_content_type() == "text/plain" and part.get_param("charset") == "utf-8", part
            return str(part.get_content())
    return None


def invite_and_accept(office: PostOffice, anna: Player, ben: Player, invitation: str) -> int:
    """Anna invites Ben (and confirms), Ben accepts, both answers checked; returns the match id."""
    sent = anna.write_confirmed(invitation)
    check_answers(office, anna.outbox[-1], sent)
    card = ben.last
    assert "Invitation from Anna" in str(card["Subject"]) or "Einladung von Anna" in str(card["Subject"])
    assert f"mailto:backgammon+{token_of(card)}@localhost?subject=accept" in text_of(card)
    assert office.table().status is MatchStatus.INVITED
    anna_before = anna.last
    sent = ben.reply("accept")
    check_answers(office, ben.outbox[-1], sent, {anna.address: anna_before})
    table = office.table()
    assert table.status is MatchStatus.RUNNING and table.game is not None
    return table.id


def refused(office: PostOffice, player: Player, text: str, reason: str,
            to: EmailMessage | None = None) -> EmailMessage:
    """``text`` changes nothing, and its writer alone is told ``reason`` with the board again."""
    before = office.snapshot()
    sent = player.reply(text, to=to)
    assert office.snapshot() == before, "a refused command changed the game"
    check_answers(office, player.outbox[-1], sent)
    (answer,) = sent
    assert recipient(answer) == player.address
    assert reason in prose_of(answer), text_of(answer)
    assert "+------" in text_of(answer) and "Position ID:" in text_of(answer)
    return answer


def acts(office: PostOffice, player: Player, text: str, to: EmailMessage | None = None) -> list[EmailMessage]:
    """``player`` sends ``text``; the answers are checked and both players of the game hear of it."""
    table = office.table()
    previous = {p.address: p.last_of(table.token(seat)) for seat, p in enumerate(_seated(office, table))}
    sent = player.reply(text, to=to)
    check_answers(office, player.outbox[-1], sent, previous)
    return sent


def _seated(office: PostOffice, table: Table) -> list[Player]:
    by_address = {p.address: p for p in office.players}
    return [by_address[seated.address] for seated in table.players]
