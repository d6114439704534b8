"""The invariant checker of ``bench/population.py`` flags what it exists to catch: a stale mail,
an older state after a newer one, a call to act acted on after it was superseded, a copied
example refused, a join confirmation of a running tournament, a match that did not end, a
broken ledger and a rating without a match.  So
the population's "0 violations" cannot come from a checker that sees nothing."""

from __future__ import annotations

import sys
from pathlib import Path

from post_office import Player, acts, text_of
from sqlmodel import Session, select

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from population_checks import Checker  # noqa: E402

from pbem.store.game_records import Player as PlayerRow  # noqa: E402
from pbem.store.ledger import Account, AccountKind, ensure_account  # noqa: E402


def kinds(checker: Checker) -> set[str]:
    return {violation.kind for violation in checker.violations}


def test_a_mail_true_when_sent_passes_and_the_same_mail_once_superseded_is_flagged(accepted_game):
    office, anna, ben = accepted_game
    checker = Checker(office.engine)
    your_turn = anna.last  # "Your turn (3-1)"
    checker.sent([your_turn])
    assert checker.violations == []
    acts(office, anna, "8/5 6/5")
    checker.sent([your_turn])  # sent again after her move, as a review that read the state before it
    assert kinds(checker) == {"(a) game mail calling to act not true when sent", "(d) game mail: a second call to act for the same turn"}
    (stale, _) = checker.violations
    assert "seat 1 to act, dice not rolled" in stale.state and "seat 0 to act, dice 3-1" in stale.state


def test_a_later_mail_showing_an_older_state_is_flagged(accepted_game):
    office, anna, ben = accepted_game
    checker = Checker(office.engine)
    checker.observe()
    waiting = ben.last  # Ben waits while Anna moves
    acts(office, anna, "8/5 6/5")
    checker.sent([ben.last])  # roll or double
    assert checker.violations == []
    checker.sent([waiting])
    assert "(d) game mail shows an older state than an earlier mail" in kinds(checker)


def test_acting_on_a_superseded_call_to_act_is_flagged_and_on_the_newest_is_not(accepted_game):
    office, anna, ben = accepted_game
    checker = Checker(office.engine)
    your_turn = anna.last
    acts(office, anna, "8/5 6/5")
    checker.acting(ben.address, ben.last)
    assert checker.violations == []
    checker.acting(anna.address, your_turn)
    assert kinds(checker) == {"(a) acted on a call to act that was superseded"}


def test_a_copied_example_that_changed_nothing_is_flagged(accepted_game):
    office, anna, ben = accepted_game
    checker = Checker(office.engine)
    before = checker.fingerprint()
    sent = anna.reply("13/10 13/12")  # refused: not her 3-1
    assert checker.fingerprint() == before
    checker.example_copied(anna.address, "13/10 13/12", anna.outbox[-1], False, sent)
    checker.example_copied(ben.address, "roll", ben.last, True, [])
    assert (checker.copied, checker.accepted) == (2, 1)
    assert kinds(checker) == {"(b) a copied example was refused"}


def test_an_unfinished_match_a_broken_ledger_and_a_rating_without_a_match_are_flagged(accepted_game):
    office, anna, ben = accepted_game
    with Session(office.engine) as session:
        ensure_account(session, "player:lost", AccountKind.PLAYER)
        account = session.exec(select(Account).where(Account.key == "player:lost")).one()
        account.balance_cents = 250  # credits from nowhere: no entry, no issuer
        player = session.exec(select(PlayerRow).where(PlayerRow.address == anna.address)).one()
        player.experience_casual = 1
        session.add_all([account, player])
        session.commit()
    checker = Checker(office.engine)
    checker.finish()
    assert {"(c) a match did not end", "(e) the ledger check fails",
            "(e) an account's balance is not the sum of its entries", "(e) the ledger does not sum to zero",
            "(e) the rating counts do not match the players' ratings",
            "(e) a rating moved without a finished rated match"} <= kinds(checker)


def test_a_join_confirmation_read_once_the_tournament_runs_is_flagged(office):
    players = [Player(office, f"p{number}@example.org", f"Player {number}") for number in range(4)]
    checker = Checker(office.engine)
    (opened,) = players[0].write_confirmed("tournament new Cup knockout 4 match 1")
    code = text_of(opened).split("tournament join ")[1].split()[0]
    (joined,) = players[1].write_confirmed(f"tournament join {code}")  # "2 of 4 players so far"
    checker.sent([joined])
    assert checker.violations == []
    for player in players[2:]:
        player.write_confirmed(f"tournament join {code}")
    checker.sent([joined])  # the same words, once the field is full and the first round runs
    assert kinds(checker) == {"(a) a join confirmation says the tournament has not begun, but it runs"}


def test_a_round_mail_after_the_readers_next_match_began_is_flagged_unless_it_says_so(office):
    """A round's results that reach a player already playing the next round must tell their next
    match, truly (issue 33: "a round mail says what the reader plays next and whether it has
    begun"); without it, or told wrongly, they are flagged."""
    from email.message import EmailMessage

    from pbem.store.game_records import TournamentRecord

    players = [Player(office, f"p{number}@example.org", f"Player {number}") for number in range(4)]
    (opened,) = players[0].write_confirmed("tournament new Cup knockout 4 match 1")
    code = text_of(opened).split("tournament join ")[1].split()[0]
    for player in players[1:]:
        player.write_confirmed(f"tournament join {code}")
    with Session(office.engine) as session:
        tournament = session.exec(select(TournamentRecord).where(TournamentRecord.code == code)).one()

    def round_mail(text: str) -> EmailMessage:
        mail = EmailMessage()
        mail["To"], mail["Subject"] = players[1].address, "[Backgammon] Tournament Cup: round 1 is over"
        mail.set_content(text)
        return mail

    over = f"Tournament Cup ({code}): the semi-finals are over."
    late, wrong = "(d) a round's results come after the reader's game mail of a later round", \
        "(a) a round mail tells the reader's next match wrongly"
    for text, flagged in ((over, {late}), (over + " Your next match has begun: the final against Player 2.", set()),
                          (over + " Your next match is the final; it begins with a game mail of its own as soon as"
                                  " your opponent is known.", {wrong})):  # the reader's first-round match runs
        checker = Checker(office.engine)
        checker.rounds[players[1].address, tournament.id] = 2  # the reader got a game mail of the final
        checker.sent([round_mail(text)])
        assert kinds(checker) == flagged, text
