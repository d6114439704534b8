"""The invariants of issue 33, checked against the database while a population plays by mail.

The players of ``bench/population.py`` read only their mails; this checker alone reads the
database.  After every mail the service sends it asks: (a) is the mail true now, and is a call
to act still current when its reader acts on it; (b) is every example a mail gives accepted when
copied; (d) does any mail contradict an earlier one of the same thread (an older state after a
newer one, or a second call to act for a turn already asked for); and at the end (c) did
everything end, and (e) are the credits ledger and the ratings consistent.  Each breach is a
:class:`Violation` of a kind, with the mail's subject, an excerpt and the database's state.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import parseaddr

from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from pbem.rules import game as game_rules
from pbem.rules.game import Game
from pbem.rules.gnubg_ids import match_id, match_id_state, position_id
from pbem.rules import rating
from pbem.rules.rating import RatingKind
from pbem.service.games.ratings import is_rated
from pbem.service.table.tables import Table
from pbem.store.game_records import (
    RATING_COLUMNS, AccountConfirmation, Ladder, MatchRecord, MatchStatus, Player, RatingCount, Seat, TournamentEntry,
    TournamentRecord, rating_band,
)
from pbem.store.ledger import Account, AccountKind, Entry, check_ledger
from pbem.store.watching import Watcher

IDS = re.compile(r"^Position ID: (\S+)\nMatch ID: (\S+)$", re.MULTILINE)
TOKEN = re.compile(r"\+([a-z2-7]{26})@")

CALLS = {
    # what a mail asks its reader to do, by the words of templates/*/game.txt
    "accept": re.compile(r"(?:with the word|mit dem Wort):\s+(\S+)"),
    "roll": re.compile(r"(?:You may double: reply|dürfen doppeln: antworten Sie)\s+(\S+)\s+(?:or|oder)\s+(\S+)"),
    "move": re.compile(r"(?:Reply with your move|Antworten Sie mit Ihrem Zug)\."),
    "take": re.compile(r"(?:doubles to|doppelt auf|redoubles to|doppelt zurück auf) \d+\.\s+(?:Reply|Antworten Sie)\s+(\S+)\s+(?:or|oder)\s+(\S+)"),
    "resign": re.compile(r"(?:offers to resign: reply|bietet an, aufzugeben: antworten Sie)\s+(\S+)\s+(?:or|oder)\s+(\S+)"),
    "draw": re.compile(r"(?:offers a draw: reply|bietet Remis an: antworten Sie)\s+(\$remis)"),
}
JOINED = re.compile(r"\(([a-z0-9]{6})\)(?:: \d+ of \d+ players so far| beigetreten: bisher \d+ von \d+ Spielern)")
NEXT_BEGUN = re.compile(r"Your next match has begun|Ihre nächste Partie hat begonnen")
NEXT_PENDING = re.compile(r"Your next match is .{1,40}?; it begins|Ihre nächste Partie ist .{1,40}?; sie beginnt"
                          r"|You are out of the tournament|Sie sind aus dem Turnier ausgeschieden")
"""A round mail's words on the reader's next match (begun; waiting for its opponent, or none: out): such a
mail speaks of the present, so it may come after the reader's game mails of a later round, if it
is true when sent."""
ROUND_OVER = re.compile(r"\(([a-z0-9]{6})\): (round \d+|Runde \d+|the semi-finals|the final|die Halbfinals|das Finale) (?:is|are|ist|sind) (?:over|vorbei)")


def text_of(mail: EmailMessage) -> str:
    body = mail.get_body(preferencelist=("plain",))
    return "" if body is None else str(body.get_content())


def flat(mail: EmailMessage) -> str:
    """The text with line ends as spaces (a wrapped sentence found whole), spaces kept."""
    return text_of(mail).replace("\n", " ")


def call_of(mail: EmailMessage) -> tuple[str, list[str]] | None:
    """What the mail asks its reader to do now, and the words it offers for it; None: nothing."""
    text = flat(mail)
    for kind, pattern in CALLS.items():
        found = pattern.search(text)
        if found:
            return kind, list(found.groups())
    return None


def ids_of(mail: EmailMessage) -> tuple[str, str] | None:
    found = IDS.search(text_of(mail))
    return (found.group(1), found.group(2)) if found else None


def token_of(mail: EmailMessage) -> str | None:
    found = TOKEN.search(str(mail.get("Reply-To", "")))
    return found.group(1) if found else None


def recipient(mail: EmailMessage) -> str:
    return parseaddr(str(mail["To"]))[1].lower()


def describe(ids: tuple[str, str] | None) -> str:
    """A Match ID in words: who must act, the dice, the cube, the score."""
    if ids is None:
        return "no game"
    state = match_id_state(ids[1])
    dice = "-".join(map(str, state.dice)) if state.dice != (0, 0) else "not rolled"
    owner = "centre" if state.cube_owner is None else f"seat {state.cube_owner}"
    return (f"seat {state.turn} to act, dice {dice}, cube {state.cube_value} ({owner}){', double offered' if state.double_offered else ''}, "
            f"score {state.score[0]}-{state.score[1]}, {state.game_state.name.lower()}; {ids[0]} {ids[1]}")


def ids_of_game(game: Game) -> tuple[str, str]:
    return position_id(game.board), match_id(game_rules.match_id_state(game))


@dataclass
class Violation:
    kind: str
    who: str
    subject: str
    excerpt: str
    state: str


@dataclass
class Thread:
    """What a reader was last told in one match: the state's place in its history, and the open call."""

    index: int = -1
    call: tuple[str, str] | None = None


@dataclass
class Checker:
    engine: Engine
    violations: list[Violation] = field(default_factory=list)
    copied: int = 0
    accepted: int = 0
    history: dict[int, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    threads: dict[tuple[str, int], Thread] = field(default_factory=lambda: defaultdict(Thread))
    rounds: dict[tuple[str, int], int] = field(default_factory=lambda: defaultdict(int))
    """Per reader and tournament, the latest round (from 1; 0: none) of which they got a game mail."""

    def flag(self, kind: str, who: str, mail: EmailMessage | None, state: str, excerpt: str = "") -> None:
        if mail is not None and not excerpt:
            lines = [line for line in text_of(mail).splitlines() if line.strip()]
            excerpt = " / ".join(lines[1:4])[:240]
        self.violations.append(Violation(kind, who, str(mail["Subject"]) if mail is not None else "", excerpt, state))

    # -- the database's state, as the mails should tell it --------------------------------

    def observe(self) -> None:
        """Note every match's state now: a mail's state is found in this history by its IDs."""
        with Session(self.engine) as session:
            for record in session.exec(select(MatchRecord)).all():
                if record.id is None or record.game is None:
                    continue
                ids = ids_of_game(Game.from_dict(record.game))
                states = self.history[record.id]
                if not states or states[-1] != ids:
                    states.append(ids)

    def _seat(self, session: Session, token: str) -> tuple[MatchRecord, int] | None:
        seat = session.exec(select(Seat).where(Seat.token == token)).first()
        record = None if seat is None else session.get(MatchRecord, seat.match_id)
        return None if seat is None or record is None else (record, seat.number)

    def _place(self, match: int, ids: tuple[str, str]) -> int:
        """The newest place of this state in the match's history; -1: it never was the state."""
        states = self.history[match]
        return next((index for index in range(len(states) - 1, -1, -1) if states[index] == ids), -1)

    # -- (a) and (d): every mail when it is sent ------------------------------------------

    def sent(self, mails: list[EmailMessage]) -> None:
        """Check the mails one delivery or job sent, in the order they were sent."""
        self.observe()
        with Session(self.engine) as session:
            for mail in mails:
                ids, token, who = ids_of(mail), token_of(mail), recipient(mail)
                found = None if token is None else self._seat(session, token)
                if found is None:
                    self._tournament_notice(session, mail, who)
                    match = self._watched(session, who) if ids is not None else None
                    if match is not None:
                        self._check_state(session, mail, who, match, ids, None, "watcher mail")
                    continue
                record, seat = found
                assert record.id is not None
                if record.tournament_id is not None and record.tournament_round is not None:
                    key = (who, record.tournament_id)
                    self.rounds[key] = max(self.rounds[key], record.tournament_round + 1)  # stored from 0
                call = call_of(mail)
                if record.game is None or ids is None:
                    if call is not None and call[0] == "accept" and record.status != MatchStatus.INVITED:
                        self.flag("(a) invitation to accept that no longer stands", who, mail, record.status)
                    continue
                self._check_state(session, mail, who, record.id, ids, (seat, call[0]) if call else None, "game mail")

    def _tournament_notice(self, session: Session, mail: EmailMessage, who: str) -> None:
        """A join confirmation must not say "not begun" of a running tournament, nor come after
        its first game mail; a round mail must tell the reader's next match truly, and one that
        tells nothing of it must not come after the reader's next round began."""
        text = " ".join(text_of(mail).split())
        joined, over = JOINED.search(text), ROUND_OVER.search(text)
        found = joined or over
        tournament = found and session.exec(select(TournamentRecord).where(TournamentRecord.code == found.group(1))).first()
        if not tournament:
            return
        seen = self.rounds[who, tournament.id]
        if joined and (tournament.status != "open" or seen):
            self.flag("(a) a join confirmation says the tournament has not begun, but it runs", who, mail,
                      f"tournament {tournament.name}: {tournament.status}; the reader's game mails so far reach round {seen}")
        if over:
            total = (tournament.size - 1).bit_length()
            word = over.group(2)
            number = int(word.split()[1]) if word[-1].isdigit() else total if word in ("the final", "das Finale") else total - 1
            begun, pending = NEXT_BEGUN.search(text), NEXT_PENDING.search(text)
            if begun or pending:  # it tells the reader's next step: true whenever it comes, if true now
                running = self._running_in(session, who, tournament.id)
                if bool(begun) != running:
                    self.flag("(a) a round mail tells the reader's next match wrongly", who, mail,
                              f"tournament {tournament.name}: the reader's match {'runs' if running else 'does not run'}")
            elif seen > number:
                self.flag("(d) a round's results come after the reader's game mail of a later round", who, mail,
                          f"tournament {tournament.name}: round {number} of {total} over; the reader already got a game mail of round {seen}")

    @staticmethod
    def _running_in(session: Session, address: str, tournament_id: int) -> bool:
        """Whether the player at ``address`` plays a running match of the tournament now."""
        return session.exec(select(MatchRecord.id).join(Seat, col(Seat.match_id) == col(MatchRecord.id))
                            .join(Player, col(Player.id) == col(Seat.player_id))
                            .where(MatchRecord.tournament_id == tournament_id, Player.address == address,
                                   MatchRecord.status == MatchStatus.RUNNING.value)).first() is not None

    def _watched(self, session: Session, address: str) -> int | None:
        player = session.exec(select(Player).where(Player.address == address)).first()
        watched = [] if player is None else session.exec(select(Watcher.match_id).where(Watcher.player_id == player.id)).all()
        return watched[0] if len(watched) == 1 else None

    def _check_state(self, session: Session, mail: EmailMessage, who: str, match: int, ids: tuple[str, str],
                     calling: tuple[int, str] | None, what: str) -> None:
        current = self.history[match][-1] if self.history[match] else None
        if ids != current:
            called = f"{what} calling to act" if calling else f"{what} (no call to act)"
            self.flag(f"(a) {called} not true when sent", who, mail, f"the database: {describe(current)}; the mail: {describe(ids)}")
        thread = self.threads[who, match]
        place = self._place(match, ids)
        if place < thread.index:
            self.flag(f"(d) {what} shows an older state than an earlier mail", who, mail,
                      f"this mail: {describe(ids)}; an earlier one: {describe(self.history[match][thread.index])}")
        thread.index = max(thread.index, place)
        if calling is None:
            return
        seat, kind = calling
        if match_id_state(ids[1]).turn != seat and kind != "draw":  # a draw offer is in no Match ID: the offerer may still move
            self.flag(f"(a) {what} calls to act a player not on turn", who, mail, describe(current))
        reminder = re.search(r"^(?:Reminder|Erinnerung): ", text_of(mail), re.MULTILINE)  # the clock's, on purpose
        if thread.call == ids and not reminder:
            self.flag(f"(d) {what}: a second call to act for the same turn", who, mail, describe(ids))
        thread.call = ids

    # -- (a) when a player acts, (b) when they copied an example --------------------------

    def acting(self, who: str, mail: EmailMessage) -> None:
        """``who`` now acts on ``mail``, the newest of its thread: is what it asks still current?"""
        token = token_of(mail)
        with Session(self.engine) as session:
            found = None if token is None else self._seat(session, token)
            if found is None:
                return
            record, _ = found
            assert record.id is not None
            self.threads[who, record.id].call = None
            call, ids = call_of(mail), ids_of(mail)
            if call is not None and call[0] == "accept" and record.status != MatchStatus.INVITED:
                self.flag("(a) acted on an invitation that no longer stands", who, mail, record.status)
            elif call is not None and ids is not None and record.game is not None:
                current = ids_of_game(Game.from_dict(record.game))
                if ids != current:
                    self.flag("(a) acted on a call to act that was superseded", who, mail,
                              f"the database: {describe(current)}; the mail: {describe(ids)}")

    def example_copied(self, who: str, command: str, mail: EmailMessage, changed: bool,
                       answers: list[EmailMessage]) -> None:
        """``who`` copied ``command`` from ``mail``: it must have been carried out."""
        self.copied += 1
        if changed:
            self.accepted += 1
            return
        answer = answers[-1] if answers else None
        said = " / ".join(line for line in (text_of(answer) if answer else "(no answer)").splitlines()[1:4] if line.strip())
        self.flag("(b) a copied example was refused", who, mail, f"copied {command!r}; the answer: {said[:240]}")

    def fingerprint(self) -> tuple[int, int]:
        """What a carried-out command changes (a refused one changes none of it, though it may
        touch a row): the games, tournaments, ladders, watchers and players' settings; and
        apart, the confirmations answered (a confirmed command may still be refused)."""
        with Session(self.engine) as session:
            state = hash((
                tuple((m.id, m.status, m.game_number, repr(m.score), repr(m.game)) for m in session.exec(select(MatchRecord)).all()),
                tuple((t.id, t.status) for t in session.exec(select(TournamentRecord)).all()),
                tuple((ladder.id, tuple(ladder.standing)) for ladder in session.exec(select(Ladder)).all()),
                # not the rows themselves: a refused first mail still makes its writer a player
                tuple((p.id, p.language, p.vacation_until) for p in session.exec(select(Player)).all()
                      if p.language or p.vacation_until),
                session.exec(select(func.count()).select_from(TournamentEntry)).one(),
                session.exec(select(func.count()).select_from(Watcher)).one()))
            confirmed = session.exec(select(func.count()).select_from(AccountConfirmation)
                                     .where(col(AccountConfirmation.confirmed_at).is_not(None))).one()
            return state, confirmed

    # -- (c) and (e): at the end ----------------------------------------------------------

    def finish(self) -> None:
        with Session(self.engine) as session:
            for record in session.exec(select(MatchRecord).order_by(col(MatchRecord.id))).all():
                if record.status not in (MatchStatus.FINISHED, MatchStatus.DECLINED):
                    what = "ladder challenge" if record.ladder_id else "tournament match" if record.tournament_id else "match"
                    self.flag(f"(c) a {what} did not end", f"match {record.id}", None,
                              f"status {record.status}; {describe(self.history[record.id][-1] if self.history[record.id] else None)}")
            for tournament in session.exec(select(TournamentRecord)).all():
                if tournament.status != "finished":
                    self.flag("(c) a tournament did not end", tournament.name, None, f"status {tournament.status}")
            self._ledger(session)
            self._ratings(session)

    def _ledger(self, session: Session) -> None:
        for problem in check_ledger(session):
            self.flag("(e) the ledger check fails", "ledger", None, problem)
        entries: Counter[int] = Counter()
        for account_id, amount in session.exec(select(Entry.account_id, Entry.amount_cents)).all():
            entries[account_id] += amount
        total = 0
        for account in session.exec(select(Account)).all():
            total += account.balance_cents
            if entries[account.id] != account.balance_cents:
                self.flag("(e) an account's balance is not the sum of its entries", account.key, None,
                          f"balance {account.balance_cents}, entries {entries[account.id]}")
            if account.kind != AccountKind.ISSUER.value and account.balance_cents < 0:
                self.flag("(e) an account is below zero", account.key, None, str(account.balance_cents))
        if total != 0:
            self.flag("(e) the ledger does not sum to zero", "ledger", None, f"{total} cents")

    def _ratings(self, session: Session) -> None:
        """Recount the rating bands, and each player's experience from the finished rated matches."""
        players = session.exec(select(Player)).all()
        stored = {(row.kind, row.band): row.players for row in session.exec(select(RatingCount)).all() if row.players}
        recount: Counter[tuple[str, int]] = Counter()
        for player in players:
            for kind, (rating_field, experience_field) in RATING_COLUMNS.items():
                if getattr(player, experience_field):
                    recount[kind.value, rating_band(getattr(player, rating_field))] += 1
        if dict(recount) != stored:
            self.flag("(e) the rating counts do not match the players' ratings", "ratings", None,
                      f"stored {sorted(stored.items())}, recounted {sorted(recount.items())}")
        played: dict[tuple[int, str], int] = Counter()
        for record in session.exec(select(MatchRecord).where(MatchRecord.status == MatchStatus.FINISHED.value)).all():
            table = Table.load(session, record)
            if not is_rated(table) or table.prize is not None:
                continue
            for player in table.players:
                played[player.id, rating.kind_of(table.score.rules).value] += 1
        for player in players:
            for kind, (_, experience_field) in RATING_COLUMNS.items():
                if kind is not RatingKind.PRIZE and getattr(player, experience_field) and not played[player.id, kind.value]:
                    self.flag("(e) a rating moved without a finished rated match", player.address, None,
                              f"{kind.value}: experience {getattr(player, experience_field)}")

    def report(self) -> list[str]:
        """The violations by kind, each with its count and its first example."""
        by_kind: dict[str, list[Violation]] = defaultdict(list)
        for violation in self.violations:
            by_kind[violation.kind].append(violation)
        lines = []
        for kind, found in sorted(by_kind.items()):
            lines.append(f"  {len(found):4}  {kind}")
            for example in found[:10 if kind.startswith("(c)") else 1]:  # what is stuck, each of it
                lines.append(f"        e.g. to {example.who}: {example.subject!r}")
                if example.excerpt:
                    lines.append(f"        mail: {example.excerpt}")
                lines.append(f"        state: {example.state}")
        return lines
