"""The web board's page as HTML, from a :class:`~pbem.render.views.PageView`
(``templates/<language>/page.html``), and its short texts (``web.txt``)."""

from __future__ import annotations

import json
from typing import Any

from pbem.render.templating import environment, render
from pbem.render.text_board import shorten
from pbem.render.board_svg import render_board_svg
from pbem.render.bracket_svg import render_bracket_svg
from pbem.render.player_charts import player_charts
from pbem.render.views import (PR_AVERAGE_OVER, FrontView, LadderPageView, PageView, PlayerPageView, TournamentPageView,
                               UnsubscribeView, VerifyView, WatchView, move_rows)


def render_page(page: PageView, csrf: str, message: str | None = None, message_kind: str = "info",
                typed: str = "") -> str:
    """The whole page; ``csrf`` goes into every form, ``message`` above the board, ``typed``
    (a move sent but not applied) back into the move's field."""
    view = page.game
    board = view.board_view
    score_line = None
    if board is not None:
        module: Any = environment().get_template(f"{page.language}/picture.txt").make_module(
            {"language": page.language})
        score_line = str(module.score(board.score, shorten(board.viewer_name), shorten(board.opponent_name))).strip()
    play_json = None
    if page.play_data is not None:
        # A data block, never run; "<" escaped so that no "</script>" can end it early.
        play_json = json.dumps(page.play_data, separators=(",", ":")).replace("<", "\\u003c")
    return render("page.html", page.language, **view.template_context(), game=view, board_svg=page.board_svg,
                  actions=[action.value for action in page.actions], rows=move_rows(page.moves), last_move=page.last_move,
                  pips=page.pips, outcome=page.outcome, terms=page.terms, undelivered=page.undelivered, csrf=csrf, events=[], texts=[], notes=[], version=page.version, message=message, message_kind=message_kind, typed=typed,
                  score_line=score_line, play_json=play_json, games_link=None,
                  match_file=f"{page.token}/match.mat" if page.outcome else None, review=page.review)


def render_player_page(page: PlayerPageView) -> str:
    """A player's own page of all their games (``templates/<language>/player.html``), with its
    charts of the player over time (:mod:`pbem.render.player_charts`)."""
    return render("player.html", page.language, page=page, charts=player_charts(page), pr_over=PR_AVERAGE_OVER,
                  verify="../verify")


def render_ladder_page(page: LadderPageView) -> str:
    """A ladder's read-only page (``templates/<language>/ladder.html``)."""
    return render("ladder.html", page.language, page=page)


def render_unsubscribe_page(page: UnsubscribeView) -> str:
    """The page of a ``List-Unsubscribe`` link: the question with its button, or that it is done."""
    return render("unsubscribe.html", page.language, service=page.service, done=page.done)


def render_tournament_page(page: TournamentPageView, own_copy: bool = False) -> str:
    """A tournament's page: the bracket as SVG (``templates/<language>/tournament.html``).
    ``own_copy``: served as ``/t/<code>/<page token>``, one level deeper than ``/t/<code>``, so
    the style sheet (linked relatively, for a proxy's path prefix) is two levels up."""
    german = page.language == "de"
    total = len(page.rounds)
    names = [("Finale" if german else "Final") if number == total else
             ("Halbfinale" if german else "Semi-finals") if number == total - 1 else
             f"{'Runde' if german else 'Round'} {number}" for number in range(1, total + 1)]
    svg = render_bracket_svg(page.rounds, names, "Freilos" if german else "bye") if page.rounds else None
    return render("tournament.html", page.language, page=page, svg=svg, own=own_copy,
                  static="../../static" if own_copy else "../static")


def render_watch_page(view: WatchView) -> str:
    """The read-only page of a watched game (``templates/<language>/watch_page.html``): the board,
    the score and the moves so far; no form, no script."""
    board = view.board_view
    svg = None if board is None else render_board_svg(board, view.language)
    return render("watch_page.html", view.language, **view.template_context(), board_svg=svg, rows=move_rows(view.moves))


def render_front_page(page: FrontView) -> str:
    """The front page ``/`` (``templates/<language>/front.html``); served at the root, so its
    style sheet is ``static/`` beside it."""
    return render("front.html", page.language, page=page, static="static")


def render_help_page(page: FrontView) -> str:
    """Every command, ``/help``: the text the ``help`` mail brings (``notices.txt``), as a reader
    outside any game gets it (their own numbering), in the visitor's language."""
    context = {"language": page.language, "numbering": "own", "colour": "white", "service": page.service,
               "games_link": None}
    module: Any = environment().get_template(f"{page.language}/notices.txt").make_module(context)
    return render("help.html", page.language, page=page, text=str(module.help(["white"])).strip(), static="static")


def render_verify_page(page: VerifyView) -> str:
    """The dice check ``/verify`` (``templates/<language>/verify.html``): the form, and what an
    upload proved."""
    return render("verify.html", page.language, page=page, static="static")


def web_text(language: str, name: str, *arguments: object) -> str:
    """One of the short texts of ``templates/<language>/web.txt``."""
    module = environment().get_template(f"{language}/web.txt").make_module({"language": language})
    return str(getattr(module, name)(*arguments)).strip()
