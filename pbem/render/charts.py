"""Charts in our own terms: one typed model, drawn as SVG for the pages and as PNG for the mails.

A :class:`Chart` says what to show (the caller's words for title and axes, the y range, lines or
points with an optional moving average, labelled markers at given x, horizontal reference lines,
or bars); :func:`chart_svg` and :func:`chart_png` draw the same model through the same geometry
(:class:`Frame`), so a page and a mail show the same picture.  The SVG is self-contained (no
script, no external reference, every text escaped, ``<title>``/``<desc>`` for screen readers);
the PNG is drawn with Pillow's ImageDraw into a fixed palette, with the fonts the board picture
uses (DejaVu Sans, else the font Pillow ships), and written without metadata.
"""

from __future__ import annotations

import math
import re
import struct
import zlib
from dataclasses import dataclass
from functools import cache, lru_cache
from html import escape
from pathlib import Path
from typing import Final, Literal

from isal import isal_zlib
from PIL import Image, ImageDraw, ImageFont

Tone = Literal["ink", "primary", "secondary", "good", "bad", "muted"]
"""The colours a chart may use, by meaning; both renderers map them to the same RGB."""

TONES: Final[dict[Tone, tuple[int, int, int]]] = {
    "ink": (34, 34, 34),
    "primary": (31, 96, 170),
    "secondary": (214, 120, 20),
    "good": (40, 130, 70),
    "bad": (196, 40, 40),
    "muted": (150, 150, 150),
}
_PAPER: Final = (255, 255, 255)
_GRID: Final = (228, 228, 228)

WIDTH: Final = 640
HEIGHT: Final = 300
"""The SVG's own size (it scales) and the usual PNG size: whole on a phone, readable in a mail."""


@dataclass(frozen=True)
class Series:
    """Values over x: a line through them or points alone, optionally with the trailing mean of
    the last ``moving_average`` values drawn as a second, dashed line."""

    points: tuple[tuple[float, float], ...]
    label: str = ""
    style: Literal["line", "points"] = "line"
    tone: Tone = "primary"
    moving_average: int = 0
    average_label: str = ""


@dataclass(frozen=True)
class Marker:
    """A place on the x axis worth a look (an error, an event), with a short label; with ``y`` a
    ring at that value too."""

    x: float
    label: str
    y: float | None = None
    tone: Tone = "bad"


@dataclass(frozen=True)
class Reference:
    """A horizontal line at ``y`` (even chances, a rating's start), optionally labelled."""

    y: float
    label: str = ""


@dataclass(frozen=True)
class Bar:
    """One bar of a bar chart, in its own slot, with its label under the axis."""

    label: str
    value: float
    tone: Tone = "primary"


@dataclass(frozen=True)
class Tick:
    """A labelled place on an axis."""

    at: float
    label: str


@dataclass(frozen=True)
class Chart:
    """What to draw.  Texts are the caller's, already in the reader's language; ``description``
    is what a screen reader says for the picture.  Without ``x_ticks`` the x axis is numbered
    by itself, in whole numbers (it counts); without ``y_ticks`` the y range is divided evenly,
    each value followed by ``y_suffix``.  With ``bars`` the x axis holds one slot per bar."""

    title: str
    x_label: str
    y_label: str
    y_range: tuple[float, float]
    series: tuple[Series, ...] = ()
    markers: tuple[Marker, ...] = ()
    references: tuple[Reference, ...] = ()
    bars: tuple[Bar, ...] = ()
    description: str = ""
    x_range: tuple[float, float] | None = None
    x_ticks: tuple[Tick, ...] = ()
    y_ticks: tuple[Tick, ...] = ()
    y_suffix: str = ""


def moving_average(points: tuple[tuple[float, float], ...], window: int) -> tuple[tuple[float, float], ...]:
    """The trailing mean of up to ``window`` values at each x (fewer at the start)."""
    averaged = []
    for index, (x, _) in enumerate(points):
        recent = points[max(0, index - window + 1): index + 1]
        averaged.append((x, sum(y for _, y in recent) / len(recent)))
    return tuple(averaged)


# Geometry, shared by both renderers.

_TITLE_SIZE, _TEXT_SIZE = 15, 11
_LEFT, _RIGHT, _TOP, _BOTTOM = 48, 14, 44, 40
"""Room for the y ticks; the right edge; the title and the y label with the legend; the x ticks
and the x label."""
_CHAR_W: Final = 0.6
"""A character's mean width in font sizes, for fitting texts where the SVG cannot measure."""


@dataclass(frozen=True)
class Frame:
    """Where the plot lies in a picture of ``width`` × ``height`` and how values map into it."""

    left: float
    top: float
    right: float
    bottom: float
    x_range: tuple[float, float]
    y_range: tuple[float, float]

    def x(self, value: float) -> float:
        low, high = self.x_range
        return self.left + (value - low) / (high - low) * (self.right - self.left)

    def y(self, value: float) -> float:
        """The pixel row of ``value``, kept inside the plot (a value off the range sits on its edge)."""
        low, high = self.y_range
        value = min(max(value, low), high)
        return self.bottom - (value - low) / (high - low) * (self.bottom - self.top)

    def point(self, x: float, y: float) -> tuple[float, float]:
        return self.x(x), self.y(y)


def frame(chart: Chart, width: int = WIDTH, height: int = HEIGHT) -> Frame:
    """The plot area and scales of ``chart`` drawn at ``width`` × ``height``."""
    return Frame(_LEFT, _TOP, width - _RIGHT, height - _BOTTOM, _x_range(chart), _span(chart.y_range))


def _x_range(chart: Chart) -> tuple[float, float]:
    if chart.bars:
        return -0.5, len(chart.bars) - 0.5
    if chart.x_range is not None:
        return _span(chart.x_range)
    xs = [x for series in chart.series for x, _ in series.points] + [marker.x for marker in chart.markers]
    return _span((min(xs), max(xs)) if xs else (0.0, 1.0))


def _span(bounds: tuple[float, float]) -> tuple[float, float]:
    """``bounds`` widened where they are one value, so that every scale divides by something."""
    low, high = bounds
    return (low - 1, high + 1) if high <= low else (low, high)


@lru_cache(maxsize=256)
def _nice_ticks(bounds: tuple[float, float], suffix: str = "", smallest: float = 0.0) -> tuple[Tick, ...]:
    """Round values at an even step (1, 2 or 5 times a power of ten, at least ``smallest``),
    about five to eight."""
    low, high = bounds
    raw = max((high - low) / 6, smallest)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9)
    ticks = []
    for index in range(first, math.floor(high / step + 1e-9) + 1):
        value = round(index * step, 10)
        ticks.append(Tick(value, f"{value:g}{suffix}"))
    return tuple(ticks)


def _x_ticks(chart: Chart, plot: Frame) -> tuple[Tick, ...]:
    if chart.bars:
        return tuple(Tick(index, bar.label) for index, bar in enumerate(chart.bars))
    return chart.x_ticks or _nice_ticks(plot.x_range, smallest=1)  # it counts moves, results, matches


def _y_ticks(chart: Chart, plot: Frame) -> tuple[Tick, ...]:
    return chart.y_ticks or _nice_ticks(plot.y_range, chart.y_suffix)


def _labelled(chart: Chart, plot: Frame) -> list[Reference]:
    """The reference lines whose labels are drawn: from the top down, each that leaves a line's
    height below the one drawn above it (on a tall axis, bounds a few pixels apart, such as the
    PR bands under a novice's 125, would otherwise print over each other)."""
    drawn: list[Reference] = []
    for reference in sorted((each for each in chart.references if each.label), key=lambda each: plot.y(each.y)):
        if not drawn or plot.y(reference.y) - plot.y(drawn[-1].y) >= _TEXT_SIZE:
            drawn.append(reference)
    return drawn


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _fit(text: str, room: float, size: int) -> str:
    """``text`` shortened with an ellipsis to about ``room`` pixels, without characters XML forbids."""
    text = _NOT_XML.sub("", text)
    chars = max(1, int(room / (size * _CHAR_W)))
    return text if len(text) <= chars else text[: chars - 1] + "…"


Sample = Literal["line", "points", "dashed"]
"""How a legend entry shows its series: a line, a dot, or a dashed line (a moving average)."""


def _legend(chart: Chart) -> list[tuple[str, Tone, Sample]]:
    """Each labelled series and moving average: its label, tone and sample."""
    entries: list[tuple[str, Tone, Sample]] = []
    for series in chart.series:
        if series.label:
            entries.append((series.label, series.tone, series.style))
        if series.moving_average and series.average_label:
            entries.append((series.average_label, series.tone, "dashed"))
    return entries


_LEGEND_SAMPLE = 18
_LEGEND_GAP = 12


def _legend_layout(chart: Chart, width: int) -> list[tuple[float, str, Tone, Sample]]:
    """Where each legend entry starts, right-aligned on the y label's row."""
    entries = [(_fit(label, 160, _TEXT_SIZE), tone, sample) for label, tone, sample in _legend(chart)]
    x: float = width - _RIGHT
    placed: list[tuple[float, str, Tone, Sample]] = []
    for label, tone, sample in reversed(entries):
        x -= _LEGEND_SAMPLE + 4 + len(label) * _TEXT_SIZE * _CHAR_W
        placed.append((x, label, tone, sample))
        x -= _LEGEND_GAP
    return list(reversed(placed))


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _text(value: str) -> str:
    return escape(_NOT_XML.sub("", value), quote=True)


# The SVG.

def chart_svg(chart: Chart) -> str:
    """``chart`` as a self-contained SVG element (it scales with its container)."""
    plot = frame(chart)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
           f'height="{HEIGHT}" role="img" class="chart" font-family="DejaVu Sans, sans-serif">',
           f"<title>{_text(chart.title)}</title>"]
    if chart.description:
        out.append(f"<desc>{_text(chart.description)}</desc>")
    out.append(f'<rect width="{WIDTH}" height="{HEIGHT}" fill="{_hex(_PAPER)}"/>')
    out.append(f'<text x="{_LEFT}" y="18" font-size="{_TITLE_SIZE}" font-weight="bold" fill="{_hex(TONES["ink"])}">'
               f"{_text(_fit(chart.title, WIDTH - _LEFT - _RIGHT, _TITLE_SIZE))}</text>")
    out.append(f'<text x="{_LEFT}" y="{_TOP - 8}" font-size="{_TEXT_SIZE}" fill="{_hex(TONES["ink"])}" '
               f'class="y-label">{_text(_fit(chart.y_label, 200, _TEXT_SIZE))}</text>')
    for x, label, tone, sample in _legend_layout(chart, WIDTH):
        colour = _hex(TONES[tone])
        if sample == "points":
            shown = f'<circle cx="{x + _LEGEND_SAMPLE / 2:.1f}" cy="{_TOP - 12}" r="3.5" fill="{colour}"/>'
        else:
            dash = ' stroke-dasharray="4 3"' if sample == "dashed" else ""
            shown = (f'<line x1="{x:.1f}" y1="{_TOP - 12}" x2="{x + _LEGEND_SAMPLE:.1f}" y2="{_TOP - 12}" '
                     f'stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<g class="legend">{shown}<text x="{x + _LEGEND_SAMPLE + 4:.1f}" y="{_TOP - 8}" font-size="{_TEXT_SIZE}">'
                   f"{_text(label)}</text></g>")
    for tick in _y_ticks(chart, plot):
        y = plot.y(tick.at)
        out.append(f'<line x1="{plot.left}" y1="{y:.1f}" x2="{plot.right}" y2="{y:.1f}" stroke="{_hex(_GRID)}"/>'
                   f'<text x="{plot.left - 4}" y="{y + 4:.1f}" font-size="{_TEXT_SIZE}" text-anchor="end" '
                   f'fill="{_hex(TONES["ink"])}">{_text(_fit(tick.label, _LEFT - 6, _TEXT_SIZE))}</text>')
    slot = (plot.right - plot.left) / max(len(_x_ticks(chart, plot)), 1)
    for tick in _x_ticks(chart, plot):
        x = plot.x(tick.at)
        out.append(f'<text x="{x:.1f}" y="{plot.bottom + 15}" font-size="{_TEXT_SIZE}" text-anchor="middle" '
                   f'fill="{_hex(TONES["ink"])}">{_text(_fit(tick.label, slot, _TEXT_SIZE))}</text>')
    out.append(f'<text x="{(plot.left + plot.right) / 2:.1f}" y="{HEIGHT - 8}" font-size="{_TEXT_SIZE}" '
               f'text-anchor="middle" class="x-label" fill="{_hex(TONES["ink"])}">'
               f"{_text(_fit(chart.x_label, plot.right - plot.left, _TEXT_SIZE))}</text>")
    labelled = _labelled(chart, plot)
    for reference in chart.references:
        y = plot.y(reference.y)
        out.append(f'<g class="reference"><line x1="{plot.left}" y1="{y:.1f}" x2="{plot.right}" y2="{y:.1f}" '
                   f'stroke="{_hex(TONES["muted"])}" stroke-dasharray="6 4"/>')
        if reference in labelled:
            out.append(f'<text x="{plot.right - 4}" y="{y - 4:.1f}" font-size="{_TEXT_SIZE}" text-anchor="end" '
                       f'fill="{_hex(TONES["muted"])}">{_text(_fit(reference.label, 200, _TEXT_SIZE))}</text>')
        out.append("</g>")
    base = plot.y(max(plot.y_range[0], min(0.0, plot.y_range[1])))
    width = (plot.right - plot.left) / max(len(chart.bars), 1) * 0.6
    for index, bar in enumerate(chart.bars):
        x, top = plot.x(index) - width / 2, plot.y(bar.value)
        out.append(f'<rect class="bar" x="{x:.1f}" y="{min(top, base):.1f}" width="{width:.1f}" '
                   f'height="{abs(base - top):.1f}" fill="{_hex(TONES[bar.tone])}"/>')
    for series in chart.series:
        out.extend(_svg_series(plot, series))
    for marker in chart.markers:
        out.append(_svg_marker(plot, marker))
    out.append(f'<rect x="{plot.left}" y="{plot.top}" width="{plot.right - plot.left}" '
               f'height="{plot.bottom - plot.top}" fill="none" stroke="{_hex(TONES["muted"])}"/>')
    out.append("</svg>")
    return "\n".join(out)


def _svg_series(plot: Frame, series: Series) -> list[str]:
    colour = _hex(TONES[series.tone])
    if series.style == "points":
        shapes = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>'
                         for x, y in (plot.point(*p) for p in series.points))
        out = [f'<g class="series points">{shapes}</g>']
    else:
        out = [f'<polyline class="series line" fill="none" stroke="{colour}" stroke-width="2" '
               f'stroke-linejoin="round" points="{_svg_points(plot, series.points)}"/>']
    if series.moving_average:
        out.append(f'<polyline class="moving-average" fill="none" stroke="{colour}" stroke-width="2" '
                   f'stroke-dasharray="4 3" points="{_svg_points(plot, moving_average(series.points, series.moving_average))}"/>')
    return out


def _svg_points(plot: Frame, points: tuple[tuple[float, float], ...]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in (plot.point(*p) for p in points))


def _svg_marker(plot: Frame, marker: Marker) -> str:
    colour = _hex(TONES[marker.tone])
    x = plot.x(marker.x)
    parts = [f'<line x1="{x:.1f}" y1="{plot.top}" x2="{x:.1f}" y2="{plot.bottom}" stroke="{colour}" '
             'stroke-opacity="0.5" stroke-dasharray="2 3"/>']
    label_y = plot.top + 12.0
    if marker.y is not None:
        y = plot.y(marker.y)
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="none" stroke="{colour}" stroke-width="2"/>')
        label_y = _label_row(plot, y)
    parts.append(f'<text x="{x + 8:.1f}" y="{label_y:.1f}" font-size="{_TEXT_SIZE}" font-weight="bold" '
                 f'fill="{colour}">{_text(_fit(marker.label, 80, _TEXT_SIZE))}</text>')
    return f'<g class="marker">{"".join(parts)}</g>'


def _label_row(plot: Frame, y: float) -> float:
    """A marker's label baseline: above its ring, or below it near the top of the plot."""
    return y - 8 if y - 8 - _TEXT_SIZE > plot.top else y + 8 + _TEXT_SIZE


# The PNG.

_FONTS: Final = (Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
                 Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"))
"""Debian's fonts-dejavu-core, as for the board picture; without it Pillow's own font."""
_PALETTE: Final = (_PAPER, _GRID, *TONES.values())
"""Every colour a chart's PNG uses; drawn straight into these indices, so no mapping afterwards."""
TEXTS_KEPT: Final = 512
"""How many rendered texts :func:`_write` keeps (a few hundred bytes each)."""


@cache
def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = _FONTS[1 if bold else 0]
    if path.is_file():
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


def _ink(rgb: tuple[int, int, int]) -> int:
    return _PALETTE.index(rgb)


def chart_png(chart: Chart, width: int = WIDTH, height: int = HEIGHT) -> bytes:
    """``chart`` as PNG bytes of ``width`` × ``height`` pixels (a palette PNG without metadata)."""
    plot = frame(chart, width, height)
    image = Image.new("P", (width, height), 0)
    image.putpalette([channel for colour in _PALETTE for channel in colour])
    draw = ImageDraw.Draw(image)
    ink, muted = _ink(TONES["ink"]), _ink(TONES["muted"])
    _write(image, (_LEFT, 18), _fit(chart.title, width - _LEFT - _RIGHT, _TITLE_SIZE), ink, "ls", _TITLE_SIZE, True)
    _write(image, (_LEFT, _TOP - 8), _fit(chart.y_label, 200, _TEXT_SIZE), ink, "ls")
    for x, label, tone, sample in _legend_layout(chart, width):
        if sample == "points":
            middle = x + _LEGEND_SAMPLE / 2
            draw.ellipse([(middle - 3.5, _TOP - 15.5), (middle + 3.5, _TOP - 8.5)], fill=_ink(TONES[tone]))
        else:
            _line(draw, [(x, _TOP - 12), (x + _LEGEND_SAMPLE, _TOP - 12)], _ink(TONES[tone]), sample == "dashed")
        _write(image, (x + _LEGEND_SAMPLE + 4, _TOP - 8), label, ink, "ls")
    for tick in _y_ticks(chart, plot):
        y = plot.y(tick.at)
        draw.line([(plot.left, y), (plot.right, y)], fill=_ink(_GRID))
        _write(image, (plot.left - 4, y + 4), _fit(tick.label, _LEFT - 6, _TEXT_SIZE), ink, "rs")
    slot = (plot.right - plot.left) / max(len(_x_ticks(chart, plot)), 1)
    for tick in _x_ticks(chart, plot):
        _write(image, (plot.x(tick.at), plot.bottom + 15), _fit(tick.label, slot, _TEXT_SIZE), ink, "ms")
    _write(image, ((plot.left + plot.right) / 2, height - 8), _fit(chart.x_label, plot.right - plot.left, _TEXT_SIZE),
           ink, "ms")
    labelled = _labelled(chart, plot)
    for reference in chart.references:
        y = plot.y(reference.y)
        _rule(image, (plot.left, y), plot.right - plot.left, False, muted, (6, 4))
        if reference in labelled:
            _write(image, (plot.right - 4, y - 4), _fit(reference.label, 200, _TEXT_SIZE), muted, "rs")
    base = plot.y(max(plot.y_range[0], min(0.0, plot.y_range[1])))
    bar_width = (plot.right - plot.left) / max(len(chart.bars), 1) * 0.6
    for index, bar in enumerate(chart.bars):
        x, top = plot.x(index) - bar_width / 2, plot.y(bar.value)
        draw.rectangle([(x, min(top, base)), (x + bar_width, max(top, base))], fill=_ink(TONES[bar.tone]))
    for series in chart.series:
        colour = _ink(TONES[series.tone])
        points = [plot.point(*p) for p in series.points]
        if series.style == "points":
            for x, y in points:
                draw.ellipse([(x - 3.5, y - 3.5), (x + 3.5, y + 3.5)], fill=colour)
        elif len(points) > 1:
            draw.line(points, fill=colour, width=2, joint="curve")
        if series.moving_average:
            averaged = [plot.point(*p) for p in moving_average(series.points, series.moving_average)]
            _line(draw, averaged, colour, dashed=True)
    for marker in chart.markers:
        colour = _ink(TONES[marker.tone])
        x = plot.x(marker.x)
        _rule(image, (x, plot.top), plot.bottom - plot.top, True, colour, (2, 3))
        label_y = plot.top + 12.0
        if marker.y is not None:
            y = plot.y(marker.y)
            draw.ellipse([(x - 6, y - 6), (x + 6, y + 6)], outline=colour, width=2)
            label_y = _label_row(plot, y)
        _write(image, (x + 8, label_y), _fit(marker.label, 80, _TEXT_SIZE), colour, "ls", bold=True)
    draw.rectangle([(plot.left, plot.top), (plot.right, plot.bottom)], outline=muted)
    return _png(image)


def _png(image: Image.Image) -> bytes:
    """A palette PNG of ``image`` without metadata, its rows deflated by ISA-L as the board
    picture's are (Pillow's own writer took most of a chart's cost, about a millisecond)."""
    width, height = image.size
    rows = Image.new("P", (width + 1, height), 0)
    rows.paste(image, (1, 0))  # the filter byte (0, none) before each row
    return b"".join((
        b"\x89PNG\r\n\x1a\n",
        _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)),  # 8 bits, palette
        _chunk(b"PLTE", bytes(channel for colour in _PALETTE for channel in colour)),
        _chunk(b"IDAT", isal_zlib.compress(rows.tobytes(), 1)),
        _chunk(b"IEND", b""),
    ))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _write(image: Image.Image, at: tuple[float, float], text: str, colour: int, anchor: str,
           size: int = _TEXT_SIZE, bold: bool = False) -> None:
    """``text`` at ``at`` (Pillow's ``anchor``), pasted from a kept mask: tick labels and
    captions recur from chart to chart, and rendering a text costs more than pasting it."""
    if not text:
        return
    mask, (left, top) = _text_mask(text, size, bold, anchor)
    image.paste(colour, (round(at[0] + left), round(at[1] + top)), mask)


@lru_cache(maxsize=TEXTS_KEPT)
def _text_mask(text: str, size: int, bold: bool, anchor: str) -> tuple[Image.Image, tuple[int, int]]:
    """The 1-bit mask of ``text`` and where its corner lies from the anchor point."""
    font = _font(size, bold)
    left, top, right, bottom = (round(edge) for edge in font.getbbox(text, anchor=anchor))
    mask = Image.new("1", (max(right - left, 1), max(bottom - top, 1)), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=font, fill=1, anchor=anchor)
    return mask, (left, top)


def _rule(image: Image.Image, start: tuple[float, float], length: float, vertical: bool, fill: int,
          dash: tuple[int, int]) -> None:
    """A dashed line one pixel wide across or down the plot, pasted through a kept mask."""
    image.paste(fill, (round(start[0]), round(start[1])), _dashes(round(length), vertical, dash))


@lru_cache(maxsize=64)
def _dashes(length: int, vertical: bool, dash: tuple[int, int]) -> Image.Image:
    on, period = dash[0], dash[0] + dash[1]
    mask = Image.new("1", (1, length) if vertical else (length, 1), 0)
    mask.putdata([1 if step % period < on else 0 for step in range(length)])
    return mask


def _line(draw: ImageDraw.ImageDraw, points: list[tuple[float, float]], fill: int, dashed: bool = False) -> None:
    """A polyline two pixels wide, solid or dashed.  ImageDraw has no dashes: the pixels of the
    dashes are found a pixel apart along the line and drawn in one call (a call per dash cost
    more than the rest of a chart)."""
    if not dashed:
        if len(points) > 1:
            draw.line(points, fill=fill, width=2)
        return
    on, period = 4, 7
    pixels: list[tuple[float, float]] = []
    walked = 0.0
    for (x1, y1), (x2, y2) in zip(points, points[1:]):
        length = math.hypot(x2 - x1, y2 - y1)
        for step in range(math.ceil(length)):
            if (walked + step) % period < on:
                x, y = x1 + (x2 - x1) * step / length, y1 + (y2 - y1) * step / length
                pixels.extend([(x, y), (x + 1, y), (x, y + 1)])
        walked += length
    draw.point(pixels, fill=fill)
