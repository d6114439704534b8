"""Random sequences of prize games through the real mail pipeline: invitations (allowed and not,
covered and not), acceptances, declines, ``$quit``, accepted resignations, agreed draws (ties
of a series), timeouts, the operator's grants, and crashes in the middle of a mail's transaction
(between two entries of a movement).  After every step the ledger is sound (``check_ledger``),
every credit there is came from a starting grant or a grant, and no escrow of a finished game
holds any (issue 14, item 3).  A process killed in the middle of a movement changes nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from post_office import LoadedDice, Player, PostOffice, token_of
from sqlalchemy import func
from sqlmodel import Session, col, select

from pbem.cli import main
from pbem.rules.prizes import from_cents
from pbem.service.jobs.clock_job import check_clocks
from pbem.store import ledger
from pbem.store.db import utc_now
from pbem.store.game_records import MatchRecord, MatchStatus
from pbem.store.ledger import Account, AccountKind, check_ledger

ADDRESSES = ("anna@example.org", "ben@example.org", "cleo@example.org")
PRIZES = ("prize games 3 stake 2.50", "prize games 3 stake 5", "prize match 5 stake 5", "prize match 5 stake 2.50",
          "prize single rate 1 limit 10", "prize single rate 2 limit 20",
          "prize games 3 stake 3", "prize single rate 1 limit 20")  # the last two: not allowed
START = Decimal(100)

steps = st.lists(st.one_of(
    st.tuples(st.just("invite"), st.integers(0, 2), st.integers(1, 2), st.sampled_from(PRIZES)),
    st.tuples(st.just("accept"), st.integers(0, 20)),
    st.tuples(st.just("decline"), st.integers(0, 20)),
    st.tuples(st.just("quit"), st.integers(0, 20), st.integers(0, 1)),
    st.tuples(st.just("resign"), st.integers(0, 20), st.integers(0, 1), st.sampled_from(("single", "gammon"))),
    st.tuples(st.just("draw"), st.integers(0, 20), st.integers(0, 1)),
    st.tuples(st.just("timeout")),
    st.tuples(st.just("grant"), st.integers(0, 2), st.integers(1, 5000)),
    st.tuples(st.just("crash"), st.integers(1, 4), st.integers(0, 20)),
), min_size=1, max_size=12)


class Crash(Exception):
    """Raised inside a mail's transaction, between two entries of a movement."""


class World:
    """One service and three players for all examples; what the operator granted so far."""

    def __init__(self, config, config_file) -> None:
        self.office = PostOffice(config, LoadedDice(seed=5))
        self.config_file = config_file
        self.players = [Player(self.office, address, address.split("@")[0].title()) for address in ADDRESSES]
        self.granted = Decimal(0)
        self.clock = timedelta(0)

    def matches(self, status: MatchStatus) -> list[MatchRecord]:
        return [record for record in self.office.matches() if record.status == status and record.options.get("prize")]

    def seated(self, match_id: int) -> tuple[list[Player], list[str]]:
        table = self.office.table(match_id)
        by_address = {player.address: player for player in self.players}
        return [by_address[player.address] for player in table.players], [table.token(0), table.token(1)]

    def say(self, match_id: int, seat: int, text: str) -> None:
        seated, tokens = self.seated(match_id)
        mail = seated[seat].last_of(tokens[seat])
        if mail is not None:
            seated[seat].reply(text, to=mail)

    def balances(self) -> dict[str, int]:
        with Session(self.office.engine) as session:
            return {key: cents for key, cents in session.exec(select(Account.key, Account.balance_cents)).all()}

    def check(self) -> None:
        with Session(self.office.engine) as session:
            assert check_ledger(session) == []
            accounts = session.exec(select(func.count()).select_from(Account)
                                    .where(Account.kind == AccountKind.PLAYER.value)).one()
            held = session.exec(select(func.coalesce(func.sum(Account.balance_cents), 0))
                                .where(col(Account.kind) != AccountKind.ISSUER.value)).one()
        assert from_cents(held) == START * accounts + self.granted, "credits were created or lost"


def apply(world: World, step: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    office = world.office
    match step:
        case ("invite", inviter, offset, prize):
            host, guest = world.players[inviter], world.players[(inviter + offset) % 3]
            (question,) = host.write(f"invite {guest.address} {prize}")
            host.reply("yes", to=question)
        case ("accept" | "decline" as word, index):
            invited = world.matches(MatchStatus.INVITED)
            if invited:
                world.say(invited[index % len(invited)].id, 1, word)
        case ("quit", index, seat):
            running = world.matches(MatchStatus.RUNNING)
            if running:
                world.say(running[index % len(running)].id, seat, "$quit")
        case ("resign", index, seat, kind):
            running = world.matches(MatchStatus.RUNNING)
            if running:
                match_id = running[index % len(running)].id
                world.say(match_id, seat, f"resign {kind}")
                world.say(match_id, 1 - seat, "accept")
        case ("draw", index, seat):
            running = world.matches(MatchStatus.RUNNING)
            if running:
                match_id = running[index % len(running)].id
                world.say(match_id, seat, "$remis")
                world.say(match_id, 1 - seat, "$remis")
        case ("timeout",):
            world.clock += timedelta(days=30)
            for _ in range(6):  # the reminders first, then the loss on time
                check_clocks(office.engine, office.config, utc_now() + world.clock, office.dice)
            office.file(office.run())
        case ("grant", index, cents):
            value = from_cents(cents)
            world.players[index].write("credits")  # the player exists (and has an account)
            args = ["credits", "grant", ADDRESSES[index], str(value), "--reason", "test", "--config",
                    str(world.config_file)]
            assert main(args) == 0
            world.granted += value
        case ("crash", after, index):
            before = world.balances()
            calls = {"n": 0}
            real_update = ledger.update

            def failing_update(*args, **kwargs):
                calls["n"] += 1
                if calls["n"] == after:
                    raise Crash("between two entries")
                return real_update(*args, **kwargs)

            monkeypatch.setattr(ledger, "update", failing_update)
            try:
                invited = world.matches(MatchStatus.INVITED)
                running = world.matches(MatchStatus.RUNNING)
                if invited and index % 2:
                    world.say(invited[index % len(invited)].id, 1, "accept")
                elif running:
                    world.say(running[index % len(running)].id, index % 2, "$quit")
            finally:
                monkeypatch.setattr(ledger, "update", real_update)
            if calls["n"] >= after:
                assert world.balances() == before, "a crashed transaction left a trace"


@pytest.fixture(scope="module")
def world_holder() -> dict:
    return {}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          derandomize=True)
@given(sequence=steps)
def test_the_ledger_holds_whatever_happens(sequence, config, config_file, world_holder, monkeypatch) -> None:
    world = world_holder.get("world")
    if world is None:
        world = world_holder["world"] = World(config, config_file)
    for step in sequence:
        apply(world, step, monkeypatch)
        world.check()



KILLED = """
import os, signal, sys
from sqlmodel import Session
from pbem.config import load_config
from pbem.store import ledger
from pbem.store.db import make_engine

engine = make_engine(load_config(sys.argv[1]).database.url)
real_update, calls = ledger.update, []

def update_then_die(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # between the first entry and the second
    return real_update(*args, **kwargs)

ledger.update = update_then_die
with Session(engine) as session:
    source = ledger.account_id_of(session, sys.argv[2])
    target = ledger.account_id_of(session, sys.argv[3])
    ledger.post(session, ledger.MovementKind.STAKE, [(source, -250), (target, 250)])
    session.commit()
"""


def test_a_process_killed_in_the_middle_of_a_movement_changes_nothing(config, config_file) -> None:
    office = PostOffice(config, LoadedDice(seed=1))
    anna, ben = Player(office, "anna@example.org", "Anna"), Player(office, "ben@example.org", "Ben")
    anna.write("credits")
    ben.write("credits")
    with Session(office.engine) as session:
        before = session.exec(select(Account.key, Account.balance_cents).order_by(Account.id)).all()
        keys = [key for key, _ in before if key.startswith("player:")]
    killed = subprocess.run([sys.executable, "-c", KILLED, str(config_file), *keys], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with Session(office.engine) as session:
        assert session.exec(select(Account.key, Account.balance_cents).order_by(Account.id)).all() == before
        assert check_ledger(session) == []
    assert token_of(anna.last) is None
