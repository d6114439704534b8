"""What the letters are made of, typed: the names of the notices and events the templates word
(``notices.txt``, ``events.txt``), and the view of a game a letter shows.

The service says what happened with these names and fills a :class:`GameView`; the templates
turn them into words.  ``tests/render/test_views.py`` checks every name against the templates
of both languages, so a missing text fails a test, never a player's mail.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pbem.assistant.performance import band, performance_rating
from pbem.config import ServiceConfig
from pbem.render.text_board import BoardView
from pbem.rules.prizes import Prize
from pbem.rules.scoring import MatchRules


class Notice(StrEnum):
    """A text for the sender alone (a macro of ``notices.txt``)."""

    NOTHING_TO_DO = "nothing_to_do"
    NOTHING_TO_DO_GAME = "nothing_to_do_game"
    CANNOT_INVITE_YOURSELF = "cannot_invite_yourself"
    CANNOT_INVITE_SERVICE = "cannot_invite_service"
    INVITEE_REFUSES = "invitee_refuses"
    INVITEE_UNDELIVERABLE = "invitee_undeliverable"
    INVITATION_UNDELIVERABLE = "invitation_undeliverable"
    INVITATION_LIMIT = "invitation_limit"
    INVITEE_NOT_A_PERSON = "invitee_not_a_person"
    INVITEE_LIMIT = "invitee_limit"
    CONFIRM_ACCOUNT = "confirm_account"
    NOT_CONFIRMED = "not_confirmed"
    TWO_GAMES_NAMED = "two_games_named"
    REMATCH_SENT = "rematch_sent"
    TOO_LARGE = "too_large"
    OLDER_MAIL = "older_mail"
    FOREIGN_TOKEN = "foreign_token"
    NOTE_PASSED_ON = "note_passed_on"
    NO_GAME_NAMED = "no_game_named"
    NOT_INVITED = "not_invited"
    MATCH_NOT_OVER = "match_not_over"
    MATCH_NOT_RUNNING = "match_not_running"
    ASSISTANT_UNAVAILABLE = "assistant_unavailable"
    SETTLE_UNAVAILABLE = "settle_unavailable"
    MOVE_REMINDER = "move_reminder"
    BANK_REMINDER = "bank_reminder"
    VACATION_CONFIRMED = "vacation_confirmed"
    VACATION_REFUSED = "vacation_refused"
    RATINGS_LIST = "ratings_list"
    LANGUAGE_SET = "language_set"
    NUMBERING_SET = "numbering_set"
    AUTOROLL_SET = "autoroll_set"
    COPIES_SET = "copies_set"
    AUTOMOVE_SET = "automove_set"
    GREEDY_SET = "greedy_set"
    STOP_CONFIRMED = "stop_confirmed"
    GAMES_LIST = "games_list"
    HELP = "help"
    HELP_SHORT = "help_short"
    CREDITS = "credits"
    PRIZE_NOT_ALLOWED = "prize_not_allowed"
    PRIZE_NOT_WITH_ASSISTANT = "prize_not_with_assistant"
    PRIZE_NOT_COVERED = "prize_not_covered"
    TOURNAMENT_OPENED = "tournament_opened"
    TOURNAMENT_JOINED = "tournament_joined"
    TOURNAMENT_JOINED_LAST = "tournament_joined_last"
    TOURNAMENT_LEFT = "tournament_left"
    TOURNAMENT_UNKNOWN = "tournament_unknown"
    TOURNAMENT_NOT_OPEN = "tournament_not_open"
    TOURNAMENT_ALREADY_IN = "tournament_already_in"
    TOURNAMENT_NOT_IN = "tournament_not_in"
    TOURNAMENT_NOT_ORGANISER = "tournament_not_organiser"
    TOURNAMENT_TOO_FEW = "tournament_too_few"
    TOURNAMENT_OVER_ALREADY = "tournament_over_already"
    TOURNAMENT_STARTED = "tournament_started"
    TOURNAMENT_WITHDRAWN = "tournament_withdrawn"
    TOURNAMENT_ROUND_OVER = "tournament_round_over"
    TOURNAMENT_OVER = "tournament_over"
    TOURNAMENT_BRACKET = "tournament_bracket"
    TOURNAMENT_INVITATION = "tournament_invitation"
    TOURNAMENT_INVITED = "tournament_invited"
    TOURNAMENT_PAGE = "tournament_page"
    TOURNAMENT_OUT_ALREADY = "tournament_out_already"
    LADDER_LIST = "ladder_list"
    LADDER_STANDING = "ladder_standing"
    LADDER_JOINED = "ladder_joined"
    LADDER_ALREADY_ON = "ladder_already_on"
    LADDER_LEFT = "ladder_left"
    LADDER_EXISTS = "ladder_exists"
    LADDER_UNKNOWN = "ladder_unknown"
    LADDER_NOT_ON = "ladder_not_on"
    LADDER_WHICH = "ladder_which"
    LADDER_NO_SUCH_PLAYER = "ladder_no_such_player"
    LADDER_OUT_OF_REACH = "ladder_out_of_reach"
    LADDER_BUSY = "ladder_busy"
    LADDER_WON_UNCHALLENGEABLE = "ladder_won_unchallengeable"
    WATCHERS_NEED_GAME = "watchers_need_game"
    WATCHERS_SET = "watchers_set"
    WATCH_STARTED = "watch_started"
    WATCH_NOT_ALLOWED = "watch_not_allowed"
    WATCH_STOPPED = "watch_stopped"
    WATCH_OWN_GAME = "watch_own_game"
    WATCH_LIMIT_GAME = "watch_limit_game"
    WATCH_LIMIT_ADDRESS = "watch_limit_address"
    WATCHER_CANNOT_ACT = "watcher_cannot_act"
    REFUSED = "refused"


class EventKind(StrEnum):
    """Something that happened in a match, told to both seats (a macro of ``events.txt``)."""

    INVITED = "invited"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    GAME_STARTED = "game_started"
    DICE_COMMITTED = "dice_committed"
    DICE_REVEALED = "dice_revealed"
    ROLLED = "rolled"
    CANNOT_MOVE = "cannot_move"
    MOVED = "moved"
    AUTOMOVED = "automoved"
    DOUBLED = "doubled"
    TOOK = "took"
    DROPPED = "dropped"
    BEAVERED = "beavered"
    RESIGNED = "resigned"
    RESIGN_OFFERED = "resign_offered"
    RESIGN_REJECTED = "resign_rejected"
    DRAW_OFFERED = "draw_offered"
    DRAW_AGREED = "draw_agreed"
    DRAW_DECLINED = "draw_declined"
    GAME_DRAWN = "game_drawn"
    GAME_WON = "game_won"
    TIMED_OUT = "timed_out"
    SETTLED = "settled"
    SETTLE_FAILED = "settle_failed"
    RATINGS_CHANGED = "ratings_changed"
    MATCH_OVER = "match_over"
    GAME_REVIEW = "game_review"
    REVIEW_FOLLOWS = "review_follows"
    MATCH_REVIEW = "match_review"
    PRIZE_NOT_COVERED = "prize_not_covered"
    PRIZE_ESCROWED = "prize_escrowed"
    PRIZE_PAID = "prize_paid"
    TOURNAMENT_MATCH = "tournament_match"
    LADDER_CHALLENGED = "ladder_challenged"
    LADDER_RESULT = "ladder_result"
    WATCHERS_ALLOWED = "watchers_allowed"
    """The opponent turned ``watchers on``/``off``: told in the other seat's next mail."""


@dataclass(frozen=True)
class GameView:
    """Everything a game letter shows, from one seat's side; the fields are the names the game
    templates use.  The fields after ``clock`` are None (False) while no game is on the board."""

    numbering: str
    colour: str
    me: str
    opponent: str
    names: list[str]
    seat: int
    status: str
    rules: MatchRules
    score: tuple[int, int]
    game_number: int
    next: str
    """What the letter asks of the seat (a key of the ``next`` texts in ``game.txt``)."""
    winner: int | None
    service: ServiceConfig
    reply_to: str
    clock: dict[str, Any] | None
    web_link: str | None = None
    rematch: bool = True
    """Whether a finished match offers a rematch (a tournament's does not: its round mail says what comes next)."""
    """The seat's link to the game on the web board (None: the board is off, ``[web] enabled = false``)."""
    example: str | None = None
    board: str | None = None
    board_view: BoardView | None = None
    ids: dict[str, str] | None = None
    dice: tuple[int, int] | None = None
    cube: int | None = None
    offered: int | None = None
    """The cube value a pending double or beaver offers (twice the value in force)."""
    beavered: bool = False
    """The pending offer is a beaver (the doubler answers it)."""
    beaver_allowed: bool = False
    crawford: bool = False
    prize: Prize | None = None
    """What a prize game plays for (credits), while it runs."""
    at_stake: Decimal | None = None
    """What the game in progress is worth to its winner now, before the fee (``prizes.at_stake``)."""

    def template_context(self) -> dict[str, Any]:
        """The fields by name, for the templates (not deep-copied, unlike ``dataclasses.asdict``)."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


class PageAction(StrEnum):
    """A button of the web board; each is the game command of the same name in a mail."""

    ROLL = "roll"
    DOUBLE = "double"
    TAKE = "take"
    DROP = "drop"
    BEAVER = "beaver"
    ACCEPT = "accept"
    """Accept the opponent's offer to resign."""
    REJECT = "reject"
    RESIGN = "resign"
    """Offer to resign (with a level: single, gammon, backgammon)."""
    DRAW = "draw"
    MOVE = "move"
    JOIN = "join"
    """Accept the invitation (a mail's ``accept`` to the invitation)."""
    DECLINE = "decline"
    """Decline the invitation."""


@dataclass(frozen=True)
class MoveLine:
    """One entry of the game's moves so far, from the viewer's side and in their numbering."""

    seat: int
    kind: str
    """``pbem.rules.game.ActionKind`` value."""
    dice: tuple[int, int] | None = None
    play: str | None = None
    cube: int | None = None


@dataclass(frozen=True)
class FinishedRow:
    """A finished match on its player's own page, from their side."""

    opponent: str
    rules: MatchRules
    score: tuple[int, int]
    """The final points: the player's, the opponent's."""
    won: bool | None
    """None: a tie (a series or money session drawn level)."""
    day: str
    """When it ended, ``YYYY-MM-DD``."""
    link: str | None
    """The player's own seat's page (the final board, the moves); None with the web board off."""
    mat_link: str | None
    """The match's ``.mat`` file (the same as the attachment of its last mail)."""
    review: tuple[int, int, int] | None = None
    """The engine's review, once done for all its games: (games reviewed, the player's error
    rate, the opponent's), in millipoints per decision as the review mail gives them."""
    review_pending: bool = False
    """Reviews are being computed for it."""
    prize: bool = False
    pr: MatchPR | None = None
    """The performance ratings of its review (``review`` set, and some decision not forced)."""


@dataclass(frozen=True)
class MatchPR:
    """A finished match's performance ratings, from the reviews of all its games
    (``pbem.assistant.performance``): the player's, its band's key, and the opponent's."""

    pr: float
    band: str
    """``pbem.assistant.performance.band`` key: ``world_class`` … ``novice``."""
    opponent_pr: float | None


@dataclass(frozen=True)
class PRPoint:
    """One reviewed match on the page's PR chart and its table, the oldest first."""

    day: str
    opponent: str
    pr: float
    band: str
    average: float
    """The mean PR of this match and the ones before it, up to ``PR_AVERAGE_OVER`` matches."""
    link: str | None
    """The player's own seat's page of the match."""


PR_AVERAGE_OVER = 5
"""How many matches the PR chart's moving average spans."""


@dataclass(frozen=True)
class RatingStep:
    """A rated result on one list: the player's rating after it."""

    day: str
    """``YYYY-MM-DD``."""
    rating: float


@dataclass(frozen=True)
class RatingHistory:
    """One list's rating over time (``pbem.store.game_records.RatingChange``): where it stood before
    the first change kept, then after each; the history starts with schema revision 0025."""

    kind: str
    """``pbem.rules.rating.RatingKind`` value."""
    start: float
    steps: tuple[RatingStep, ...]
    more: int = 0
    """Older changes not drawn (``pbem.service.pages.player_history.HISTORY_SHOWN``)."""


@dataclass(frozen=True)
class FormatRecord:
    """Wins and losses of the player's finished matches of one format, e.g. matches to 5."""

    format: str
    """``pbem.rules.scoring.Format`` value."""
    length: int
    """Points of a match, games of a series; 1 for a single game, 0 for money."""
    won: int
    lost: int
    tied: int


@dataclass(frozen=True)
class TournamentRow:
    """A tournament the player entered, on their own page."""

    name: str
    link: str | None
    """Their own copy of its bracket page."""
    status: str
    """``pbem.store.game_records.TournamentStatus`` value."""
    size: int
    rounds: int
    """Rounds of its bracket (0 while it is open)."""
    reached: int
    """The last round (from 1) they are drawn in; 0 while it is open."""
    places: tuple[int, int] | None
    """Their final place (shared by all who went out in one round), None while they are in."""
    withdrawn: bool = False


@dataclass(frozen=True)
class LadderRow:
    """A ladder the player stands on."""

    name: str
    link: str | None
    place: int
    of: int


@dataclass(frozen=True)
class PlayerPageView:
    """A player's own page of all their games (``/p/<token>``): their running games and open
    invitations, each with the link of their own seat only, their finished matches, tournaments
    and ladders, their ratings and their credits."""

    language: str
    name: str
    games: tuple[dict[str, Any], ...]
    """As the ``games`` mail lists them (``pbem.service.people.account.game_rows``)."""
    ratings: tuple[tuple[str, float, int], ...]
    """(kind, rating, experience) for the match, casual and prize lists."""
    balance: Decimal
    finished: tuple[FinishedRow, ...] = ()
    """The newest first, at most ``pbem.service.pages.player_page.FINISHED_SHOWN``."""
    more_finished: int = 0
    """Finished matches not listed (older ones)."""
    tournaments: tuple[TournamentRow, ...] = ()
    ladders: tuple[LadderRow, ...] = ()
    history: tuple[RatingHistory, ...] = ()
    """The lists the player has a rating change kept on, in ``RatingKind`` order."""
    prs: tuple[PRPoint, ...] = ()
    """The listed finished matches that have a PR, the oldest first."""
    records: tuple[FormatRecord, ...] = ()
    """Every finished match of the player, by format: matches by length, then series, single
    games, money."""


@dataclass(frozen=True)
class LadderPageView:
    """A ladder's read-only page (``/l/<code>``): names only, never an address or a game token."""

    language: str
    name: str
    match_length: int
    reach: int
    answer_days: int
    standing: tuple[str, ...]
    """Place 1 first."""
    challenges: tuple[tuple[str, str, bool], ...]
    """Open challenges: (challenger, defender, accepted and being played)."""
    results: tuple[tuple[str, str, str, str], ...]
    """Latest results, newest first: (date, winner, loser, how: played, declined or unanswered)."""


@dataclass(frozen=True)
class MoveRow:
    """One numbered line of the moves so far, as gnubg lists a game: what player 0 did in the
    left cell, what player 1 did in the right one (a roll and its play, a double, a take …)."""

    number: int
    cells: tuple[tuple[MoveLine, ...], tuple[MoveLine, ...]]


def move_rows(lines: tuple[MoveLine, ...]) -> tuple[MoveRow, ...]:
    """The record in numbered lines of two cells, a new line whenever player 0 acts after player 1
    in it, or a player acts again after a play of theirs in it."""
    rows: list[tuple[list[MoveLine], list[MoveLine]]] = []
    for line in lines:
        cells = rows[-1] if rows else None
        if (cells is None or (line.seat == 0 and cells[1])
                or (cells[line.seat] and cells[line.seat][-1].kind == "move")):
            cells = ([], [])
            rows.append(cells)
        cells[line.seat].append(line)
    return tuple(MoveRow(number, (tuple(left), tuple(right))) for number, (left, right) in enumerate(rows, start=1))


@dataclass(frozen=True)
class PageView:
    """Everything the web board shows one player: the game view of their mails, plus what the
    page needs to play (the one-die steps of the legal plays, the buttons allowed) and the
    ``version`` of the state it shows, which every form sends back."""

    token: str
    language: str
    version: str
    game: GameView
    board_svg: str | None
    actions: tuple[PageAction, ...]
    moves: tuple[MoveLine, ...] = ()
    last_move: str | None = None
    pips: tuple[int, int] | None = None
    play_data: dict[str, Any] | None = None
    """For the page's script: the board layout, the checker counts and the graph of steps."""
    outcome: tuple[str, ...] = ()
    """Once the match is over: who won the last game and the match, with the points."""
    terms: str | None = None
    """While the invitation is open: its terms, as its mail stated them."""
    undelivered: tuple[str, ...] = ()
    """The players of the match whose mails bounced for good, each with the newest reason."""
    review: PageReview | None = None
    """The newest finished game's review, once done: its text and its chart."""


@dataclass(frozen=True)
class PageReview:
    """A finished game's review on the game's page: the text of its mail and the same chart,
    drawn as SVG (escaped text only, nothing the page's CSP would refuse)."""

    number: int
    text: str
    svg: str
    caption: str


class PageResult(StrEnum):
    DONE = "done"
    REFUSED = "refused"
    STALE = "stale"
    GONE = "gone"


@dataclass(frozen=True)
class PageOutcome:
    """What a form of the web board did: ``texts`` say why in the player's language."""

    result: PageResult
    texts: tuple[str, ...] = ()
    page: PageView | None = None
    """The page as the game stands after the form (None: to be read afresh)."""


@dataclass(frozen=True)
class UnsubscribeView:
    """The page of an address's ``List-Unsubscribe`` link, in the address's language."""

    language: str
    service: ServiceConfig
    done: bool
    """The POST came (one-click or the button): the address gets no more invitations."""


@dataclass(frozen=True)
class BracketMatch:
    """One match of a tournament's bracket as its page shows it."""

    names: tuple[str | None, str | None]
    """The two players' names (None: not known yet); a bye has one name and ``bye``."""
    winner: int | None
    """0 or 1: which of the two went through; None while undecided."""
    bye: bool = False
    link: str | None = None
    """The viewer's own seat's page of this match: only on their own page of the tournament."""
    scores: tuple[int, int] | None = None
    """The points of the two players, in the order of ``names``, once the match has begun."""


@dataclass(frozen=True)
class TournamentPageView:
    """A tournament's page (``/t/<code>``): the bracket with names and results, no addresses, no
    tokens; on a player's own copy (``/t/<code>/<page token>``) their matches link to their games."""

    language: str
    name: str
    code: str
    status: str
    size: int
    length: int
    entrants: tuple[str, ...]
    rounds: tuple[tuple[BracketMatch, ...], ...]
    champion: str | None


@dataclass(frozen=True)
class WatchView:
    """What a watcher is shown of a match, in a mail or on its page ``/w/<code>``: the board from
    the inviter's side (``BoardView.spectator``), names, score and what happened, and nothing of
    the players' own (no token, no address, no note, no clock)."""

    language: str
    code: str
    """The match's watch code (the watcher's only key; never a game token)."""
    names: tuple[str, str]
    rules: MatchRules
    score: tuple[int, int]
    """The points of the players 0 and 1 before the game on the board (the final ones at the end)."""
    status: str
    """``pbem.store.game_records.MatchStatus`` value."""
    service: ServiceConfig
    page_link: str | None = None
    """The watch page (None: the web board is off)."""
    to_act: int | None = None
    """The player who must act now (None: nobody, as between invitation and start, or at the end)."""
    board: str | None = None
    """The text board; None while no game is on the board."""
    board_view: BoardView | None = None
    ids: dict[str, str] | None = None
    events: tuple[str, ...] = ()
    """What happened since the watcher's last mail, worded for an onlooker."""
    moves: tuple[MoveLine, ...] = ()
    """The game's moves so far (the page), in the own numbering of each mover."""
    allowed: bool = True
    """False: no such code, or its players do not allow watching (now): the page says only that."""

    def template_context(self) -> dict[str, Any]:
        """The fields by name but ``language`` (which ``render`` gives every template)."""
        return {field.name: getattr(self, field.name) for field in fields(self) if field.name != "language"}


@dataclass(frozen=True)
class FrontView:
    """The web board's front page ``/``: what the service is, its address, the first mail to
    write, in the visitor's language (their browser's ``Accept-Language``)."""

    language: str
    service: ServiceConfig
    assistant: bool
    """``play assistant`` works here (the engine loads), so the page offers it."""


class VerifyProblem(StrEnum):
    """Why an upload to ``/verify`` could not be checked (``verify.html`` words each)."""

    NO_FILE = "no_file"
    NOT_MAT = "not_mat"
    NO_ROLLS = "no_rolls"
    """Its games ended before a move (a resignation at the first turn): a ``.mat`` writes no roll
    without its move, so only the seed's SHA-256 is left to compare."""
    NO_SEED = "no_seed"
    TOO_BIG = "too_big"
    EXPIRED = "expired"


@dataclass(frozen=True)
class SeedVerdict:
    """What one pasted seed proves of the uploaded ``.mat``."""

    seed: str
    """64 lowercase hex digits."""
    commitment: str
    """The seed's SHA-256: the ``Dice commitment:`` of its game's first mail."""
    games: tuple[int, ...]
    """The games of the file (from 1) whose every roll is the one the seed gives."""
    rolls: int = 0
    """How many rolls of the (first such) game were checked."""
    ties: int = 0
    """Tied opening rolls rolled again before it (the record shows none of them)."""
    first_wrong: tuple[int, tuple[int, int], tuple[int, int]] | None = None
    """When the file has one game and the seed is not its seed: the first roll that differs
    (its place in the file from 1, the dice written, the dice the seed gives)."""
    committed: bool | None = None
    """Whether the seed's SHA-256 is one of the ``Dice commitment:`` lines pasted with it (None:
    none was pasted)."""


@dataclass(frozen=True)
class VerifyView:
    """The page ``/verify``: its form, and after an upload what was found."""

    language: str
    csrf: str
    problem: VerifyProblem | None = None
    games: int = 0
    """Games in the uploaded file (0: nothing checked)."""
    verdicts: tuple[SeedVerdict, ...] = ()
    commitments: tuple[tuple[str, str], ...] = ()
    """(seed, its SHA-256) of each pasted seed, where the file has no roll to compare them with."""


@dataclass(frozen=True)
class ReviewedPlayer:
    """One player's figures in a review (millipoints; see :mod:`pbem.assistant.review`) and the
    performance rating they make, with its band (``None``: nothing to decide, every play forced)."""

    decisions: int
    error_rate: int
    lost: int
    luck: int
    rating: float | None
    band: str | None

    @classmethod
    def of(cls, figures: Mapping[str, Any]) -> ReviewedPlayer:
        rating = performance_rating(figures["lost"], figures["decisions"])
        return cls(figures["decisions"], figures["error_rate"], figures["lost"], figures["luck"], rating,
                   None if rating is None else band(rating))


@dataclass(frozen=True)
class ReviewMark:
    """One of the worst decisions on the chart: whose (``seat``), its place in their list
    (``rank``, 1 for the worst), its move and the reader's winning chance there (percent; None
    where the chart has no point at that move)."""

    seat: int
    rank: int
    number: int
    chance: float | None


@dataclass(frozen=True)
class WinningChances:
    """The chart of a reviewed game for the reader in ``seat``: their winning chance after every
    roll, in percent, by move number, and every decision the review's text lists as one of the
    worst, marked at its move."""

    seat: int
    points: tuple[tuple[int, float], ...]
    marks: tuple[ReviewMark, ...]


@dataclass(frozen=True)
class ReviewView:
    """A stored review (``review_jobs.result``) as the mail's text and its chart both show it:
    built once, so the figures, the listed worst decisions and the marks never disagree."""

    players: tuple[ReviewedPlayer, ...]
    mistakes: tuple[tuple[dict[str, Any], ...], ...]
    chances: tuple[tuple[int, int], ...]
    """Seat 0's winning chance after every roll, per mille, by move number (a review stored
    before the chart has none)."""

    @classmethod
    def of(cls, review: Mapping[str, Any]) -> ReviewView:
        return cls(tuple(ReviewedPlayer.of(figures) for figures in review["players"]),
                   tuple(tuple(listed) for listed in review.get("mistakes", ())),
                   tuple((number, chance) for number, chance in review.get("chances", ())))

    def event_data(self) -> dict[str, Any]:
        """What the review's event gives ``events.txt`` (plain data, as every event's)."""
        return {"players": [asdict(player) for player in self.players],
                "mistakes": [list(listed) for listed in self.mistakes]}

    def winning_chances(self, seat: int) -> WinningChances | None:
        """The chart for the reader in ``seat`` (None: the review has no chances to show)."""
        if not self.chances:
            return None
        points = tuple((number, (chance if seat == 0 else 1000 - chance) / 10) for number, chance in self.chances)
        at = dict(points)
        marks = tuple(ReviewMark(owner, rank, mistake["number"], at.get(mistake["number"]))
                      for owner in (seat, 1 - seat)
                      for rank, mistake in enumerate(self.mistakes[owner], start=1))
        return WinningChances(seat, points, marks)
