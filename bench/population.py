"""A simulated population that plays the whole service by mail, checked against issue 33's
invariants after every mail.

    python bench/population.py [--players 40] [--seed 1] [--small] [--strict] [--dump FILE]

Through the real pipeline (the tests' post office: Maildir in, one transaction per mail, Maildir
out, SQLite), with a clock the bench moves: N players, half of them German (``lang de``, German
commands), each writing as a mail client does (Gmail, Outlook, Thunderbird, Apple Mail, mutt;
signatures), play at once, interleaved (a random player with something to do acts next):
invitations confirmed with ``yes``, single games, matches, money, a series, prize games, the
Assistant, knockouts, a ladder with challenges (one declined, one left to lapse), watchers,
draws, resignations, a vacation.  Every few mails the clock jumps ahead and the daemon's jobs
run (clocks, lapsed challenges, reviews).  A player acts only on the newest mail of each game
and the newest confirmation, by copying what it says to write (its example move, ``roll``,
``take``, the join line); a move is worked out from the mail's Position and Match ID only when
the mail shows no example.  Nothing a player does comes from the database:
``bench/population_checks.py`` alone reads it, and says what broke.

Printed: the mails per player mail, the examples copied and accepted, the invariant violations
by kind with one example each (goal 0), and the wall time until everything ended.  The exit
status is 0 whatever was found, unless ``--strict``.  ``--small``: 8 players, for CI.
``--dump FILE`` starts the clock at a fixed hour and writes every mail sent (recipient, subject,
text) to FILE, its tokens drawn from a seeded generator: two runs of one seed give the same file, so a
refactoring shows that no mail's text changed by diffing the dumps before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import secrets
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from pathlib import Path

from population_checks import Checker, call_of, flat, ids_of, recipient, text_of, token_of
from rig import scratch, scratch_office
from sqlmodel import Session, col, select

from mail_clients import CLIENTS, _quoted, _reply_headers  # (tests/service: the rig puts it on the path)
from pbem.mail.local_client import compose_mail
from pbem.rules.gnubg_ids import match_id_state, position_from_id
from pbem.rules.moves import legal_plays
from pbem.rules.notation import Colour, Numbering, format_play
from pbem.service import handle_mail
from pbem.service.jobs.clock_job import check_clocks
from pbem.service.jobs.ladder_job import expire_challenges
from pbem.service.jobs.review_job import in_process, run_reviews
from pbem.store.db import utc_now
from pbem.store.game_records import MatchRecord, MatchStatus, TournamentRecord

STYLES = {"en": ("gmail", "outlook_html_only", "thunderbird", "apple_mail", "mutt"),
          "de": ("gmail_de", "outlook_html_only_de", "outlook_desktop_de", "thunderbird_de", "apple_mail_de", "mutt")}
SIGNED = ("gmail", "gmail_de", "outlook_html_only", "outlook_html_only_de", "mutt")
WORDS = {"en": {"lang": "lang de", "invite": "invite", "assistant": "play assistant", "vacation": "vacation 2",
                "resign": "resign single", "quit": "$quit", "watchers": "watchers on", "ladder": "ladder join",
                "challenge": "ladder challenge", "tournament": "tournament new {name} knockout {size} match {length}"},
         "de": {"lang": "sprache de", "invite": "einladen", "assistant": "gegen assistent", "vacation": "urlaub 2",
                "resign": "aufgeben einfach", "quit": "$aufgeben", "watchers": "zuschauer an", "ladder": "leiter beitreten",
                "challenge": "leiter fordern", "tournament": "turnier neu {name} ko {size} partie {length}"}}
FORMATS = {"en": ("", "match 3", "money", "games 3", "match 5", "prize games 3 stake 2.50", "match 3 clock 2d/5d", "single"),
           "de": ("", "partie 3", "geld", "spiele 3", "partie 5", "preis spiele 3 einsatz 2,50", "partie 3 uhr 2t/5t", "einzel")}
JOIN_LINE = re.compile(r"^\s*((?:tournament join|turnier teilnehmen) [a-z0-9]{6})\s*$", re.MULTILINE)
WATCH_LINE = re.compile(r"^\s+((?:watch|zuschauen) [a-z0-9]{10})\s*$", re.MULTILINE)
YES = re.compile(r"(?:answer this mail with|diese Mail daher mit)\s+(\S+)")
EXAMPLE_MOVE = re.compile(r"(?:Write it like this|Schreiben Sie ihn so) \([^)]*\):\s*\n +(\S[^\n]*)")
DECLINE = re.compile(r"(?:If you do not want to play, reply|Wenn Sie nicht spielen möchten, antworten Sie):\s+(\S+)")
MAX_STEPS = 100_000
IDLE_DAYS = 20
"""When nobody has anything to do, the clock moves a day at a time, this many at most."""


def mutt(sender: str, original: EmailMessage, new: str) -> EmailMessage:
    """mutt's reply: the new text on top, then the attribution and the '> ' quote."""
    message = _reply_headers(sender, original)
    message.set_content(f"{new}\n\nOn Sat, Nov 21, 2026 at 09:42:00PM +0100, {original['From']} wrote:\n"
                        f"{_quoted(text_of(original))}")
    return message


class Clock:
    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or utc_now().replace(microsecond=0)


def seed_secrets(seed: int) -> None:
    """Draw the service's tokens and codes (``secrets``) from a seeded generator: for ``--dump``
    only, so that two runs write the same mails."""
    generator = random.Random(seed)
    secrets.token_bytes = lambda count=32: generator.randbytes(count)  # type: ignore[assignment]
    secrets.token_hex = lambda count=32: generator.randbytes(count).hex()  # type: ignore[assignment]


@dataclass
class Plan:
    """A new mail a player means to write, once ``text()`` gives it (None: not yet)."""

    text: Callable[[], str | None]
    then: Callable[[Plan], None] = lambda plan: None
    fallback: str | None = None
    """Written instead when the service refuses ``text`` (a natural name it cannot read yet)."""
    written: str = ""
    setting: bool = False
    """A setting (``lang``): carried out when confirmed, though it may already have been so."""


@dataclass
class Member:
    """A player: what they got, and what they mean to do; no knowledge of the database."""

    address: str
    name: str
    language: str
    style: str
    quirks: dict[str, str | None] = field(default_factory=dict)
    """What this player does beyond copying: quirk → the opponent's name in whose game (None: any)."""
    plans: list[Plan] = field(default_factory=list)
    threads: dict[str, tuple[EmailMessage, tuple[str, list[str]] | None]] = field(default_factory=dict)
    """Per game token, its newest mail and what it asks."""
    confirmation: EmailMessage | None = None
    in_flight: Plan | None = None
    done: set[str] = field(default_factory=set)
    moves: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    refused: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    """Per game token, the copied examples refused in a row: after two the player works out a
    move, after three gives up on that game (it is then reported as not ended)."""
    away_until: datetime | None = None
    written: int = 0
    received: int = 0
    watching: int = 0
    """Of the mails received, those of games watched (a board, and no game token)."""

    @property
    def sender(self) -> str:
        return f"{self.name} <{self.address}>"

    def quirk(self, name: str, mail: EmailMessage) -> bool:
        """Whether this player has the quirk in the game of this mail (its subject names the opponent)."""
        return name in self.quirks and (self.quirks[name] is None or str(self.quirks[name]) in str(mail["Subject"]))

    def sign(self, text: str) -> str:
        return f"{text}\n\n-- \n{self.name}" if self.style in SIGNED else text


class Population:
    def __init__(self, directory: Path, players: int, seed: int, dump: Path | None = None) -> None:
        self.office = scratch_office(directory, seed, credits={"start": 20}, assistant={"plies": 1})
        self.config = self.office.config
        self.clock = Clock(datetime(2026, 11, 21, 9, tzinfo=timezone.utc) if dump else None)
        self.dump = dump.open("w", encoding="utf-8") if dump else None
        self.office.pipeline.handler = lambda session, raw, inbound: handle_mail(
            session, raw, inbound, self.config, self.office.dice, now=self.clock.now)
        self.office.pipeline.clock = lambda: self.clock.now
        self.checker = Checker(self.office.engine)
        self.rng = random.Random(seed)
        self.board: dict[str, list[str]] = defaultdict(list)
        """What players tell each other: join lines, watch lines, the ladder's name, who joined."""
        self.members = [self._member(number) for number in range(players)]
        self.by_address = {member.address: member for member in self.members}

    def _member(self, number: int) -> Member:
        language = "de" if number % 2 else "en"
        names = ("Anna", "Ben", "Clara", "Dieter", "Emma", "Felix", "Greta", "Hans", "Ida", "Jonas")
        member = Member(f"p{number}@example.org", f"{names[number % 10]} {number:02}", language,
                        STYLES[language][number // 2 % len(STYLES[language])])
        if language == "de":
            member.plans.append(Plan(lambda: WORDS["de"]["lang"] if number % 4 == 1 else WORDS["en"]["lang"], setting=True))
        return member

    # -- the mails ----------------------------------------------------------------------

    def deliver(self, member: Member, message: EmailMessage) -> tuple[list[EmailMessage], bool, bool]:
        """Send ``message`` as ``member``; the mails sent (checked and filed), whether it changed
        the games or settings, and whether it changed anything (a confirmation answered too)."""
        member.written += 1
        before = self.checker.fingerprint()
        sent = self.office.deliver(message)
        self.file(sent)
        after = self.checker.fingerprint()
        return sent, after[0] != before[0], after != before

    def file(self, sent: list[EmailMessage]) -> None:
        self.checker.sent(sent)
        for mail in sent:
            if self.dump:
                self.dump.write(f"=== to {mail['To']}: {mail['Subject']}\n{text_of(mail)}\n")
            member = self.by_address.get(recipient(mail))
            if member is None:
                continue
            member.received += 1
            text = text_of(mail)
            if "Please confirm" in text or "Bitte bestätigen" in text:
                member.confirmation = mail
            elif token_of(mail) is not None:
                member.threads[token_of(mail)] = (mail, call_of(mail))  # type: ignore[index]
            elif ids_of(mail) is not None:
                member.watching += 1
            for line in JOIN_LINE.findall(text)[:1]:
                self.board[f"join {member.address}"] = [line]
            self.board["watch"].extend(WATCH_LINE.findall(text)[:1])

    def reply(self, member: Member, mail: EmailMessage, text: str) -> tuple[list[EmailMessage], bool, bool]:
        new = member.sign(text)
        message = mutt(member.sender, mail, new) if member.style == "mutt" else CLIENTS[member.style](member.sender, mail, new)
        member.done.add(str(mail["Message-ID"]))
        self.checker.acting(member.address, mail)
        return self.deliver(member, message)

    # -- what a player does next ----------------------------------------------------------

    def choices(self, member: Member) -> list[Callable[[], None]]:
        if member.away_until is not None and self.clock.now < member.away_until:
            return []
        if member.confirmation is not None and str(member.confirmation["Message-ID"]) not in member.done:
            return [lambda: self.confirm(member)]
        found: list[Callable[[], None]] = []
        for token, (mail, call) in member.threads.items():
            if call is not None and str(mail["Message-ID"]) not in member.done and member.refused[token] < 3:
                if call[0] == "accept" and member.quirk("ignore", mail):
                    continue
                found.append(lambda token=token, mail=mail, call=call: self.play(member, token, mail, call))
        ready = next((plan for plan in member.plans if plan.text() is not None), None)
        if ready is not None and member.in_flight is None:
            found.append(lambda: self.write_plan(member, ready))
        return found

    def write_plan(self, member: Member, plan: Plan) -> None:
        member.plans.remove(plan)
        text = plan.text()
        assert text is not None
        plan.written = text
        sent, changed, _ = self.deliver(member, compose_mail(member.sender, self.config.service.address, "Backgammon",
                                                          member.sign(text)))
        if any(recipient(mail) == member.address and mail is member.confirmation for mail in sent):
            member.in_flight = plan
        else:
            self.settled(member, plan, changed, sent)

    def confirm(self, member: Member) -> None:
        mail = member.confirmation
        assert mail is not None
        found = YES.search(flat(mail))
        word = found.group(1) if found else "yes"
        sent, changed, answered = self.reply(member, mail, word)
        self.checker.example_copied(member.address, word, mail, answered, [m for m in sent if recipient(m) == member.address])
        plan, member.in_flight = member.in_flight, None
        if plan is not None:
            self.settled(member, plan, changed or (plan.setting and answered), sent)

    def settled(self, member: Member, plan: Plan, changed: bool, sent: list[EmailMessage]) -> None:
        """The plan was carried out (its sequel follows) or refused (its fallback is written instead)."""
        if changed:
            plan.then(plan)
            return
        answer = next((mail for mail in sent if recipient(mail) == member.address), None)
        self.checker.flag(f"(b) a command written as a player would was refused: {plan.written.split()[0]} …",
                          member.address, answer, f"wrote {plan.written!r}")
        if plan.fallback is not None:
            member.plans.insert(0, Plan(lambda: plan.fallback, plan.then))

    def play(self, member: Member, token: str, mail: EmailMessage, call: tuple[str, list[str]]) -> None:
        """Answer what the newest mail of a game asks, with the words it offers."""
        if member.quirk("watchers", mail):
            del member.quirks["watchers"]
            self.reply(member, mail, WORDS[member.language]["watchers"])
            return
        kind, words = call
        command, copied = words[0] if words else "", True
        member.moves[token] += 1
        if kind == "accept" and member.quirk("decline", mail):
            found = DECLINE.search(flat(mail))
            command = found.group(1) if found else "decline"
        elif kind == "roll" and member.quirk("double", mail) and self.rng.random() < 0.2:
            command = words[1]
        elif kind == "take" and self.rng.random() < 0.2:
            command = words[1]
        elif kind == "move":
            command, copied = self.move(member, token, mail)
        sent, changed, _ = self.reply(member, mail, command)
        if copied:
            self.checker.example_copied(member.address, command, mail, changed,
                                        [m for m in sent if recipient(m) == member.address])
        member.refused[token] = 0 if changed else member.refused[token] + 1

    def move(self, member: Member, token: str, mail: EmailMessage) -> tuple[str, bool]:
        """The example move as printed, else one worked out from the mail's IDs; or a quirk's offer."""
        words = WORDS[member.language]
        for quirk, command, after in (("draw", "$remis", 3), ("resign", words["resign"], 5), ("quit", words["quit"], 8)):
            if member.quirk(quirk, mail) and member.moves[token] >= after:
                del member.quirks[quirk]
                return command, False
        found = EXAMPLE_MOVE.search(text_of(mail))
        if found and member.refused[token] < 2:
            return found.group(1).strip(), True
        ids = ids_of(mail)
        assert ids is not None, text_of(mail)
        state, position = match_id_state(ids[1]), position_from_id(ids[0])
        play = sorted(legal_plays(position, state.dice).values())[0]
        return format_play(position, play, Numbering.OWN, Colour.of_seat(state.turn)), False

    # -- the daemon's jobs and the clock ---------------------------------------------------

    def jobs(self, ahead: timedelta) -> None:
        """The clock jumps ``ahead``; the clock, ladder and review jobs run as the daemon's would.

        The reviews are queued and sent with the next mail's answers, as the daemon's outbox
        sends what its jobs queued while it goes on applying mails (its own answers first)."""
        self.clock.now += ahead
        check_clocks(self.office.engine, self.config, self.clock.now, self.office.dice)
        expire_challenges(self.office.engine, self.config, self.clock.now)
        self.file(self.office.run())
        asyncio.run(run_reviews(self.office.engine, self.config, in_process(self.config.assistant.plies),
                                clock=lambda: self.clock.now))

    def unfinished(self) -> bool:
        with Session(self.office.engine) as session:
            return bool(session.exec(select(MatchRecord.id).where(col(MatchRecord.status).in_(
                (MatchStatus.INVITED.value, MatchStatus.RUNNING.value)))).first()
                or session.exec(select(TournamentRecord.id).where(TournamentRecord.status != "finished")).first())

    def run(self) -> int:
        """Play until nobody has anything left to do; returns the steps."""
        idle = 0
        for step in range(MAX_STEPS):
            if step % 30 == 29:
                self.jobs(self.rng.choice((timedelta(minutes=30), timedelta(hours=3), timedelta(hours=10), timedelta(days=1))))
            ready = [(member, found) for member in self.members for found in [self.choices(member)] if found]
            if ready:
                idle = 0
                member, found = self.rng.choice(ready)
                self.rng.choice(found)()
                continue
            if idle >= IDLE_DAYS or not (self.unfinished() or any(m.plans or m.in_flight for m in self.members)):
                self.jobs(timedelta(hours=1))  # the last reviews
                self.file(self.office.run())
                return step
            idle += 1
            self.jobs(timedelta(days=1))
        return MAX_STEPS


PARTS = 16 + 8 + 4 + 6 + 2 * len(FORMATS["en"]) + 4 + 2 + 1
"""The parts :func:`cast` hands out outside ``--small`` (three knockouts, the ladder, the pairs,
the Assistant's players, the watchers, one away); each player takes at most three."""


def cast(population: Population, small: bool) -> None:
    """Give the players their parts: who organises, joins, invites, challenges, watches."""
    members = list(population.members)
    population.rng.shuffle(members)
    pool = iter(members * 3)
    board = population.board

    def group(size: int) -> list[Member]:
        return [next(pool) for _ in range(size)]

    knockouts = [(4, 1, "Spring Cup", "SpringCup")] if small else [
        (16, 1, "Winter Open", "WinterOpen"), (8, 1, "Autumn Cup", "AutumnCup"), (4, 3, "Herbstpokal", None)]
    for size, length, name, fallback in knockouts:
        organiser, *joiners = group(size)
        words = WORDS[organiser.language]["tournament"]
        organiser.plans.append(Plan(lambda w=words, n=name, s=size, l=length: w.format(name=n, size=s, length=l),
                                    fallback=fallback and words.format(name=fallback, size=size, length=length)))
        for joiner in joiners:
            joiner.plans.append(Plan(lambda o=organiser: next(iter(board[f"join {o.address}"]), None)))
    ladder = group(2 if small else 6)

    def ladder_name() -> str:
        return board["ladder name"][0]

    def opening(member: Member, name: str) -> str:
        """The first joiner opens the ladder: with the default terms, or matches to 1 in the small mode."""
        if not small:
            return f"{WORDS[member.language]['ladder']} {name}"
        return f"ladder new {name} match 1" if member.language == "en" else f"leiter neu {name} partie 1"

    for place, member in enumerate(ladder):
        def joined(plan: Plan, m: Member = member) -> None:
            board["ladder joined"].append(m.address)
            if not board["ladder name"]:
                board["ladder name"].append("Thursday Club" if "Thursday Club" in plan.written else "thursday-club")

        member.plans.append(Plan(lambda p=place, m=member: (opening(m, "Thursday Club") if p == 0 else
                                                             f"{WORDS[m.language]['ladder']} {ladder_name()}")
                                 if len(board["ladder joined"]) == p else None,
                                 joined, fallback=opening(member, "thursday-club") if place == 0 else None))
    for challenger in range(1, len(ladder), 2):
        words = WORDS[ladder[challenger].language]["challenge"]
        defender = ladder[challenger - 1]
        ladder[challenger].plans.append(Plan(lambda w=words, d=defender: f"{w} {ladder_name()} {d.address}"
                                             if len(board["ladder joined"]) == len(ladder) else None))
    if not small:
        ladder[0].quirks["decline"] = ladder[1].name
        ladder[2].quirks["ignore"] = ladder[3].name
    pairs = range(2) if small else range(len(FORMATS["en"]))
    for number in pairs:
        inviter, invited = group(2)
        options = FORMATS[inviter.language][number]
        inviter.plans.append(Plan(lambda i=inviter, d=invited, o=options: f"{WORDS[i.language]['invite']} {d.address} {o}".strip()))
        quirks = ({"watchers"}, {"draw", "double"}, {"quit", "double"}, set(), {"resign", "double"})[number % 5]
        for quirk in quirks:
            if quirk in ("watchers", "double", "resign"):
                invited.quirks[quirk] = inviter.name
            if quirk != "resign":
                inviter.quirks[quirk] = invited.name
    for number, member in enumerate(group(1 if small else 4)):
        member.plans.append(Plan(lambda m=member, n=number: WORDS[m.language]["assistant"]
                                 + ("" if n % 2 == 0 else " match 3" if m.language == "en" else " partie 3")))
    for watcher in group(1 if small else 2):
        watcher.plans.append(Plan(lambda: next((line for line in board["watch"] if board["watch"].count(line) >= 2), None)))
    away = next(pool)
    away.plans.append(Plan(lambda m=away: WORDS[m.language]["vacation"],
                           lambda plan, m=away: setattr(m, "away_until", population.clock.now + timedelta(days=2))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--small", action="store_true", help="8 players, for CI")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 when an invariant is violated")
    parser.add_argument("--dump", type=Path, help="write every mail sent to this file (tokens seeded: runs of one seed compare equal)")
    options = parser.parse_args()
    if options.small:
        options.players = 8
    elif options.players * 3 < PARTS:
        parser.error(f"--players: at least {-(-PARTS // 3)} (each takes at most three of the {PARTS} parts), or --small")
    if options.dump:
        seed_secrets(options.seed)
    with scratch() as directory:
        population = Population(directory, options.players, options.seed, options.dump)
        cast(population, options.small)
        started, clock_start = time.perf_counter(), population.clock.now
        steps = population.run()
        elapsed = time.perf_counter() - started
        checker = population.checker
        checker.finish()
        for member in population.members:
            for plan in member.plans + [plan for plan in [member.in_flight] if plan]:
                pending = member.confirmation is not None and str(member.confirmation["Message-ID"]) not in member.done
                checker.flag("(c) a player could never write what they meant to", member.address, member.confirmation,
                             f"{plan.written or plan.text() or 'waiting for a line to copy (a join or watch line)'}; "
                             f"in flight: {member.in_flight.written if member.in_flight else 'nothing'}; "
                             f"a confirmation unanswered: {pending}")
        with Session(population.office.engine) as session:
            matches = session.exec(select(MatchRecord.status)).all()
            tournaments = len(session.exec(select(TournamentRecord.id)).all())
    members = population.members
    written, received = sum(m.written for m in members), sum(m.received for m in members)
    watching = sum(m.watching for m in members)
    print(f"population of {len(members)} players (seed {options.seed}), by mail through the real pipeline, SQLite:")
    print(f"  {elapsed:.1f} s wall to finish everything ({steps} steps; the clock moved "
          f"{(population.clock.now - clock_start) / timedelta(days=1):.1f} days)")
    print(f"  {len(matches)} matches ({sum(s == MatchStatus.FINISHED for s in matches)} finished, "
          f"{sum(s == MatchStatus.DECLINED for s in matches)} declined), {tournaments} tournaments")
    print(f"  mails per player mail: {received / max(written, 1):.2f} ({received} sent for {written} written; goal at most 1.15); "
          f"{(received - watching) / max(written, 1):.2f} without the {watching} mails to watchers")
    print(f"  examples copied: {checker.copied}, accepted: {checker.accepted}")
    print(f"  invariant violations: {len(checker.violations)} (goal 0)")
    for line in checker.report():
        print(line)
    return 1 if options.strict and checker.violations else 0


if __name__ == "__main__":
    sys.exit(main())
