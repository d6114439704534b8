"""The operator's view of the database, as ``pbem export GAME``, ``games``, ``players`` and
``status`` print it (``pbem/cli/reports.py``).  Players are shown by address here: the operator
runs the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TextIO, cast

from sqlalchemy.orm import QueryableAttribute, defer
from sqlmodel import Session, col, select
from sqlmodel.sql.expression import SelectOfScalar

from pbem.config import Config
from pbem.rules import matfile
from pbem.rules.game import Phase
from pbem.rules.prizes import Prize, PrizeKind
from pbem.rules.scoring import Format, MatchRules, Score
from pbem.mail.bounce_reasons import SERVICE_SIDE
from pbem.service.table import clocks
from pbem.service.table.tables import Table
from pbem.store.attempts import FileJournal
from pbem.store.db import head_revision, schema_revision, utc_now
from pbem.rules import brackets
from pbem.rules.brackets import Bracket
from pbem.store.game_records import (FinishedGame, MatchRecord, MatchStatus, Player, ReviewJob, Seat, TournamentEntry,
                                     TournamentRecord, TournamentStatus)
from pbem.store.mail_records import (SUPERSEDED, DeliveryFailure, InboundMail, InboundState, OutboundGivenUp,
                                     OutboundMail)

EXIT_NEEDS_OPERATOR = 1
NEXT_ALARMS = 5
FAILURES_SHOWN_FOR = timedelta(days=7)
REFUSALS_ALERT_FOR = timedelta(days=3)
"""How long a receiving server's refusal of the service keeps ``pbem status`` failing: long
enough to be seen after a weekend, short enough to clear once the cause is fixed."""
FAILURES_LISTED = 20
"""Clock alarms (reminders, timeouts) ``pbem status`` shows, the soonest first."""


def match_file(session: Session, match_id: int) -> str | None:
    """The ``.mat`` text of a match: its finished games and the one in progress; None if unknown."""
    record = session.get(MatchRecord, match_id)
    if record is None:
        return None
    table = Table.load(session, record)
    games = table.finished_games(session)
    if table.game is not None and table.game.phase is not Phase.OVER:
        games.append(table.game)
    return matfile.match_text(games, (table.players[0].display_name, table.players[1].display_name))


def match_filename(table: Table) -> str:
    """The name of a match's ``.mat`` file on its page, the one its last mail attaches it under
    (:func:`pbem.service.games.play._finish_match`)."""
    return f"pbem-{table.id}-{table.players[0].display_name}-{table.players[1].display_name}.mat".replace(" ", "_")


def revealed_seeds(session: Session, match_id: int) -> list[str | None]:
    """The dice seeds of a match's finished games, in order (None: a game begun before seeds);
    the game in progress keeps its seed secret."""
    return list(session.exec(select(FinishedGame.dice_seed).where(FinishedGame.match_id == match_id)
                             .order_by(col(FinishedGame.number))).all())


def format_name(rules: MatchRules) -> str:
    if rules.format is Format.MATCH:
        return f"match {rules.length}"
    if rules.format is Format.GAMES:
        return f"games {rules.length}"
    if rules.format is Format.MONEY:
        return f"money {rules.stake}" if rules.stake != 1 else "money"
    return "single"


def prize_name(prize: Prize | None) -> str:
    """What a prize game plays for, as the invitation wrote it (``, prize stake 2.50``)."""
    if prize is None:
        return ""
    if prize.kind is PrizeKind.SINGLE:
        return f", prize rate {prize.rate} limit {prize.limit}"
    return f", prize stake {prize.stake}"


@dataclass(frozen=True)
class GamesWanted:
    """Which matches ``pbem games`` lists: newest first, ``limit`` of them with an id below
    ``before`` (the page after one that ended at ``before``), in one state, of one player."""

    status: MatchStatus | None = None
    player: str | None = None
    before: int | None = None
    limit: int = 50
    """As ``pbem.cli.GAMES_PAGE``."""


_GAME_COLUMN = cast(QueryableAttribute[Any], MatchRecord.game)


def games_query(wanted: GamesWanted, player_id: int | None) -> SelectOfScalar[int | None]:
    """The ids of a page of matches, ``limit + 1`` of them (the last one only shows that there
    are more), read in order from the primary key, ``ix_matches_status`` or ``ix_seats_player_id``
    so that the LIMIT ends the search: never a scan or a sort of every match.  The page's rows
    are then read by id (a join here would let SQLite's planner scan every seat first)."""
    query = select(col(MatchRecord.id))
    if wanted.status is not None:
        query = query.where(MatchRecord.status == wanted.status.value)
    if player_id is not None:
        query = query.where(col(MatchRecord.id).in_(select(Seat.match_id).where(Seat.player_id == player_id)))
    if wanted.before is not None:
        query = query.where(col(MatchRecord.id) < wanted.before)
    return query.order_by(col(MatchRecord.id).desc()).limit(wanted.limit + 1)


def games_rows(session: Session, config: Config,
               wanted: GamesWanted = GamesWanted()) -> tuple[list[list[str]], int | None]:
    """One row per match wanted, newest first (id, players, format, score, status, who must act
    and until when), under a header row; and the id to list on ``before``, None if no more."""
    rows = [["id", "players", "format", "score", "status", "to act", "clock runs out"]]
    player_id = None
    if wanted.player is not None:
        player_id = session.exec(select(Player.id).where(Player.address == wanted.player.lower())).first()
        if player_id is None:
            return rows, None
    found = [match_id for match_id in session.exec(games_query(wanted, player_id)).all() if match_id is not None]
    page = found[:wanted.limit]
    # The page's rows by primary key, without the game in progress (the biggest column).
    records = session.exec(select(MatchRecord).where(col(MatchRecord.id).in_(page)).options(defer(_GAME_COLUMN))
                           .order_by(col(MatchRecord.id).desc())).all()
    seats = {(seat.match_id, seat.number): seat
             for seat in session.exec(select(Seat).where(col(Seat.match_id).in_(page))).all()}
    players = {player.id: player for player in session.exec(
        select(Player).where(col(Player.id).in_({seat.player_id for seat in seats.values()}))).all()}
    for record in records:
        assert record.id is not None
        pair = (seats[record.id, 0], seats[record.id, 1])
        table = Table(record, pair, (players[pair[0].player_id], players[pair[1].player_id]),
                      Score.from_dict(record.score), None)
        acting = record.clock_seat
        running = clocks.running_clock(table, config)
        rows.append([
            str(table.id),
            f"{table.players[0].address} – {table.players[1].address}",
            format_name(table.score.rules) + prize_name(table.prize)
            + ("" if record.options.get("rated", True) else ", unrated"),
            "{}-{}".format(*table.score.points),
            table.status.value,
            table.players[acting].address if acting is not None else "-",
            clocks.moment(running.timeout_at) if running is not None else "-",
        ])
    return rows, (page[-1] if len(found) > wanted.limit else None)


def players_rows(session: Session, now: datetime) -> list[list[str]]:
    """One row per player: ratings and experience of the three kinds, vacation days used this year."""
    rows = [["id", "address", "name", "match rating", "exp", "casual rating", "exp", "prize rating", "exp", "vacation",
             "invitations"]]
    for player in session.exec(select(Player).order_by(col(Player.id))).all():
        rows.append([
            str(player.id), player.address, player.name,
            f"{player.rating_match:.1f}", str(player.experience_match),
            f"{player.rating_casual:.1f}", str(player.experience_casual),
            f"{player.rating_prize:.1f}", str(player.experience_prize),
            str(player.vacation_days.get(str(now.year), 0)),
            "refused" if player.refuses_invitations else "yes",
        ])
    return rows


def tournament_rows(session: Session) -> list[list[str]]:
    """One row per tournament, newest first: code, name, organiser, status, players and size,
    the round under way with its matches still open, and the champion."""
    rows = [["code", "name", "organiser", "status", "players", "round", "open matches", "champion"]]
    for record in session.exec(select(TournamentRecord).order_by(col(TournamentRecord.id).desc())).all():
        organiser = session.get(Player, record.organiser_id)
        entrants = len(session.exec(select(TournamentEntry.player_id)
                                    .where(TournamentEntry.tournament_id == record.id)).all())
        round_text, open_text, champion_text = "-", "-", "-"
        if record.bracket is not None:
            bracket = Bracket.from_dict(record.bracket)
            current = brackets.current_round(bracket)
            round_text = f"{min(current + 1, bracket.rounds)} of {bracket.rounds}"
            open_text = str(sum(winner is None for winner in bracket.winners[current])) if current < bracket.rounds \
                else "0"
            champion = brackets.champion(bracket)
            if champion is not None and (found := session.get(Player, champion)) is not None:
                champion_text = found.address
        rows.append([record.code, record.name, organiser.address if organiser else "?", str(record.status),
                     f"{entrants}/{record.size}", round_text, open_text, champion_text])
    return rows


def running_tournaments(session: Session) -> tuple[list[str], int]:
    """For ``pbem status``: a line per running tournament (its round, the matches it waits for,
    the one unchanged longest), and the pairings that are stuck, whose two players are known but
    whose match never started (a result and the next pairing are one transaction, so this
    shows a fault); and how many are stuck."""
    lines, stuck = [], 0
    for record in session.exec(select(TournamentRecord)
                               .where(TournamentRecord.status == TournamentStatus.RUNNING.value)).all():
        if record.bracket is None:
            continue
        bracket = Bracket.from_dict(record.bracket)
        matches = {(match.tournament_round, match.tournament_index): match for match in session.exec(
            select(MatchRecord).options(defer(_GAME_COLUMN)).where(MatchRecord.tournament_id == record.id)).all()}
        current = brackets.current_round(bracket)
        waiting = [match for match in matches.values() if match.status == MatchStatus.RUNNING.value]
        oldest = min(waiting, key=lambda match: match.updated_at, default=None)
        lines.append(f"tournament {record.code} ({record.name}): round {current + 1} of {bracket.rounds}, "
                     f"{len(waiting)} match(es) running" + (
                         f", the oldest unchanged since {oldest.updated_at:%Y-%m-%d %H:%M} UTC (match {oldest.id})"
                         if oldest is not None else ""))
        for pairing in brackets.ready(bracket):
            if (pairing.round, pairing.index) not in matches:
                stuck += 1
                lines.append(f"  STUCK: round {pairing.round + 1}, match {pairing.index + 1}: both players known, "
                             "no match started")
    return lines, stuck


def write_table(rows: list[list[str]], out: TextIO) -> None:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    out.writelines("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n" for row in rows)


def status_report(session: Session, out: TextIO, config: Config) -> int:
    """``pbem status``: what of the mail needs the operator — answers failing or given up,
    incoming mails shunted or interrupted by a crash — and the schema version; returns the exit
    status, EXIT_NEEDS_OPERATOR when a mail was given up or shunted, or a receiving domain
    refused the service's mail lately."""
    print(f"schema revision: {schema_revision(session.connection())} (this program: {head_revision()})", file=out)
    stopped = session.exec(select(OutboundGivenUp, OutboundMail)
                           .join(OutboundMail, col(OutboundMail.id) == OutboundGivenUp.outbound_id)
                           .order_by(col(OutboundGivenUp.given_up_at))).all()
    given_up_ids = {row.outbound_id for row, _ in stopped}
    given_up = [(row, mail) for row, mail in stopped if not row.reason.startswith(SUPERSEDED)]
    superseded = len(stopped) - len(given_up)  # dropped as a newer mail showed a later state: nothing to fix
    unsent = [mail for mail in session.exec(select(OutboundMail).where(col(OutboundMail.sent_at).is_(None))
                                            .order_by(col(OutboundMail.id))).all() if mail.id not in given_up_ids]
    failing = [mail for mail in unsent if mail.attempts]
    shunted = session.exec(select(InboundMail).where(InboundMail.state == InboundState.FAILED)
                           .order_by(col(InboundMail.id))).all()
    attempts = FileJournal(config.applying_dir).interrupted() if config.applying_dir.is_dir() else []
    print(f"outbox: {len(unsent)} unsent ({len(failing)} failing), {len(given_up)} given up"
          + (f", {superseded} superseded" if superseded else ""), file=out)
    for mail in failing:
        print(f"  failing {mail.message_id} to {', '.join(mail.recipients)}: {mail.attempts} attempts, "
              f"next at {mail.next_attempt_at:%Y-%m-%d %H:%M} UTC; {mail.last_error}", file=out)
    for row, mail in given_up:
        print(f"  given up {mail.message_id} to {', '.join(mail.recipients)} at {row.given_up_at:%Y-%m-%d %H:%M} "
              f"UTC: {row.reason}", file=out)
    print(f"inbox: {len(shunted)} shunted, {len(attempts)} being applied or interrupted", file=out)
    for inbound in shunted:
        print(f"  shunted {inbound.message_id} from {inbound.sender or '?'}: {inbound.reason}", file=out)
    for attempt in attempts:
        print(f"  interrupted {attempt.message_id}: started {attempt.starts} time(s), last at "
              f"{attempt.last_start:%Y-%m-%d %H:%M} UTC", file=out)
    _delivery_failures(session, config, out)
    refusing = _refusing_domains(session, out)
    tournament_lines, stuck = running_tournaments(session)
    print(f"tournaments: {sum(not line.startswith(' ') for line in tournament_lines)} running, "
          f"{stuck} pairing(s) stuck", file=out)
    for line in tournament_lines:
        print(f"  {line}", file=out)
    waiting = session.exec(select(ReviewJob.id).where(col(ReviewJob.done_at).is_(None))).all()
    reviews_given_up = session.exec(select(ReviewJob).where(col(ReviewJob.done_at).is_not(None),
                                                            ReviewJob.error != "")).all()
    print(f"reviews: {len(waiting)} waiting, {len(reviews_given_up)} given up", file=out)
    alarms = session.exec(select(MatchRecord).where(col(MatchRecord.deadline_at).is_not(None))
                          .order_by(col(MatchRecord.deadline_at)).limit(NEXT_ALARMS)).all()
    print(f"next clock alarms: {len(alarms) or 'none'}", file=out)
    for record in alarms:
        print(f"  match {record.id}: seat {record.clock_seat}'s clock at {record.deadline_at:%Y-%m-%d %H:%M} UTC",
              file=out)
    for job in reviews_given_up:
        print(f"  given up: match {job.match_id}, game {job.game_number}: {job.error}", file=out)
    return EXIT_NEEDS_OPERATOR if given_up or shunted or stuck or refusing else 0


def _delivery_failures(session: Session, config: Config, out: TextIO) -> None:
    """The bounces of the last FAILURES_SHOWN_FOR (the newest first), and the addresses that get no
    more mail until their owners write."""
    since = utc_now() - FAILURES_SHOWN_FOR
    failures = session.exec(select(DeliveryFailure).where(col(DeliveryFailure.reported_at) > since)
                            .order_by(col(DeliveryFailure.reported_at).desc())).all()
    permanent = sum(failure.permanent for failure in failures)
    limit = config.limits.bounce_limit
    stopped = session.exec(select(Player).where(col(Player.bounces) >= limit).order_by(col(Player.address))).all() \
        if limit else []
    print(f"bounces in {FAILURES_SHOWN_FOR.days} days: {permanent} permanent, {len(failures) - permanent} delayed; "
          f"{len(stopped)} address(es) get no mail", file=out)
    for failure in failures[:FAILURES_LISTED]:
        game = f" (match {failure.match_id})" if failure.match_id is not None else ""
        kind = (failure.reason or "failed") if failure.permanent else "delayed"
        print(f"  {kind} {failure.address}{game} at "
              f"{failure.reported_at:%Y-%m-%d %H:%M} UTC: {failure.status} {failure.diagnostic}".rstrip(), file=out)
    for player in stopped:
        print(f"  no mail to {player.address}: {player.bounces} bounces since it last wrote", file=out)


def _refusing_domains(session: Session, out: TextIO) -> int:
    """The receiving domains that refused the service itself (a block list, reputation, SPF or
    DKIM, policy, spam) in the last REFUSALS_ALERT_FOR: the operator must act, not the players.
    Returns how many."""
    since = utc_now() - REFUSALS_ALERT_FOR
    refusals = session.exec(select(DeliveryFailure).where(
        col(DeliveryFailure.reported_at) > since, col(DeliveryFailure.reason).in_(sorted(SERVICE_SIDE)))
        .order_by(col(DeliveryFailure.reported_at).desc())).all()
    by_domain: dict[str, list[DeliveryFailure]] = {}
    for failure in refusals:
        by_domain.setdefault(failure.address.rpartition("@")[2], []).append(failure)
    print(f"refused by receiving servers in {REFUSALS_ALERT_FOR.days} days: {len(by_domain)} domain(s)", file=out)
    for domain, failures in sorted(by_domain.items()):
        last = failures[0]
        print(f"  {domain} refuses the service's mail ({last.reason}), {len(failures)} time(s), last at "
              f"{last.reported_at:%Y-%m-%d %H:%M} UTC: {last.status} {last.diagnostic}".rstrip(), file=out)
    return len(by_domain)
