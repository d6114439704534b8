"""Posting: the letters a conversation (a mail, a job, the web board) made, queued in the
transaction that made them and threaded into their recipients' threads."""

from __future__ import annotations

import logging

from pbem.mail.composing import compose
from pbem.mail.replies import SentTexts
from pbem.service.competitions import tournaments
from pbem.service.table import clocks
from pbem.service.table.conversation import Conversation
from pbem.service.table.letters import undeliverable
from pbem.service.watching import watchers
from pbem.store.game_records import MatchStatus
from pbem.store.mail_records import queue_mail

log = logging.getLogger(__name__)

TEXTS_KEPT = 2048
"""How many texts (and HTML parts) of our own recent mails are kept, to spare parsing them again
when a reply quotes one (about 5 kB each)."""
SENT_TEXTS = SentTexts(TEXTS_KEPT)
"""The texts of the letters this process posted lately: what a reply to one may quote."""


def send_letters(talk: Conversation) -> None:
    """Start the clocks of the turns this mail (or the clock job) began, then queue every letter
    in this transaction and thread it into its recipient's thread."""
    config = talk.config
    for news in list(talk.news.values()):  # a tournament's next pairings add news of their own
        if news.table.record.tournament_id is not None and news.table.status is MatchStatus.FINISHED:
            tournaments.match_finished(talk, news.table)
    for news in talk.news.values():
        clocks.sync(news.table, config, talk.now)
    for player, table, letter in talk.letters():
        asks_proof = player.id == talk.sender.id and talk.reply_token is not None and letter.token == talk.reply_token
        if undeliverable(player, config) and not asks_proof:
            # A "please confirm" still goes: it is how the address's owner, writing a new mail,
            # proves it reads it again (at most [limits] confirmations_per_day of them).
            log.info("no mail to %s: it bounced %d times since its owner last wrote", player.address, player.bounces)
            continue
        message = compose(letter, config.service.address, config.service.name, talk.now)
        queue_mail(talk.session, message, None if table is None else table.id)
        SENT_TEXTS.keep(str(message["Message-ID"]), letter.text, letter.html)
        seat = None if table is None else table.seat_of(player)
        if table is not None and seat is not None:
            table.add_to_thread(seat, str(message["Message-ID"]))
    watchers.send_watch_letters(talk)
    for news in talk.news.values():
        news.table.save(talk.session)
