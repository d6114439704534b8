"""A knockout bracket as SVG for the tournament's page: a column per round, a box per match with
its two players (the winner in bold) and their points, lines from each match to the one it feeds.  Text only,
escaped; no script, no external file."""

from __future__ import annotations

from html import escape

from pbem.render.views import BracketMatch

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 180, 44, 40, 12, 8
NAME_CHARS = 19
"""Room is left at the right of a box for the points."""


def render_bracket_svg(rounds: tuple[tuple[BracketMatch, ...], ...], round_names: list[str], bye: str) -> str:
    """The bracket; ``round_names`` label the columns (Round 1 … Final), in the page's language."""
    first = len(rounds[0]) if rounds else 0
    height = max(first, 1) * (BOX_H + GAP_Y) + 2 * PAD + 20
    width = len(rounds) * (BOX_W + GAP_X) + 2 * PAD
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" role="img" aria-label="{escape(" · ".join(round_names))}" class="bracket">']
    centres: list[list[float]] = []
    for number, matches in enumerate(rounds):
        x = PAD + number * (BOX_W + GAP_X)
        parts.append(f'<text x="{x}" y="{PAD + 12}" font-size="13" font-weight="bold">'
                     f'{escape(round_names[number])}</text>')
        slot = (height - 2 * PAD - 20) / max(len(matches), 1)
        column = []
        for index, match in enumerate(matches):
            y = PAD + 20 + index * slot + (slot - BOX_H) / 2
            column.append(y + BOX_H / 2)
            parts.append(_box(x, y, match, bye))
            if number > 0:
                for feeder in (centres[-1][2 * index], centres[-1][2 * index + 1]):
                    parts.append(f'<path d="M{x - GAP_X} {feeder:.1f} H{x - GAP_X / 2} V{y + BOX_H / 2:.1f} H{x}" '
                                 'fill="none" stroke="#888"/>')
        centres.append(column)
    parts.append("</svg>")
    return "\n".join(parts)


def _box(x: float, y: float, match: BracketMatch, bye: str) -> str:
    """One match's box: the two names, the winner's in bold, each player's points at the right
    once it has begun; on one's own page a link to it, styled as one (``own`` in board.css)."""
    inner = [f'<rect x="{x}" y="{y:.1f}" width="{BOX_W}" height="{BOX_H}" rx="4" fill="#fff" stroke="#444"/>']
    names = (match.names[0] or match.names[1], bye) if match.bye else match.names
    for row, name in enumerate(names):
        weight = ' font-weight="bold"' if match.winner == row and not match.bye else ""
        text = escape(_short(name) if name is not None else "?")
        baseline = y + 17 + row * 20
        inner.append(f'<text x="{x + 8}" y="{baseline:.1f}" font-size="13"{weight}>{text}</text>')
        if match.scores is not None:
            inner.append(f'<text x="{x + BOX_W - 8}" y="{baseline:.1f}" font-size="13" text-anchor="end" '
                         f'class="score"{weight}>{match.scores[row]}</text>')
    if not match.link:
        return f'<g class="match">{"".join(inner)}</g>'
    return f'<a href="{escape(match.link)}" class="own"><g class="match">{"".join(inner)}</g></a>'


def _short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"
