"""Every declared command reaches a handler that takes it: its help line, sent in a mail (and
confirmed where it must be), is carried out without the mail being put aside. The registry's
own checks (tests/test_command_registry.py) see that a handler is registered for each type; this
sees that the room the handler calls has a branch for it."""

from __future__ import annotations

from post_office import LoadedDice, Player, PostOffice, is_confirmation
from sqlmodel import Session, select

from pbem.commands.registry import REGISTRY
from pbem.store.mail_records import InboundMail, InboundState

EXAMPLES = sorted({getattr(declaration.help, language) for declaration in REGISTRY.declarations
                   if declaration.help is not None for language in ("en", "de")})


def test_each_help_line_is_carried_out_by_mail(config):
    office = PostOffice(config, LoadedDice(seed=1))
    for number, example in enumerate(EXAMPLES):  # a sender each: no daily limit of one address in the way
        player = Player(office, f"player{number}@example.org", f"Player {number}")
        questions = [mail for mail in player.write(example) if is_confirmation(mail)]
        if questions:
            player.reply("yes", to=questions[0])
    with Session(office.engine) as session:
        failed = session.exec(select(InboundMail.reason).where(InboundMail.state == InboundState.FAILED)).all()
        applied = session.exec(select(InboundMail).where(InboundMail.state == InboundState.APPLIED)).all()
    assert failed == []
    assert len(applied) >= len(EXAMPLES)
