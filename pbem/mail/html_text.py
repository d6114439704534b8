"""The text a reader sees in an HTML mail: what a reply's HTML part shows, one line per block.

A player may hide text from the eye (by ``hidden``, by a style, in the colour of its
background) that a plain-text reading would take as a command; only what is seen is read.
lxml parses the HTML (in linear time, whatever the markup) and inscriptis lays the text out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from inscriptis import Inscriptis
from inscriptis.model.config import ParserConfig
from lxml import etree
from lxml import html as lxml_html

MAX_HTML_CHARS = 64 * 1024
"""Of an HTML part, read before its tags are taken out (the reply stands at its top)."""
MAX_STYLE_CHARS = 16 * 1024
"""Of a style attribute or a ``<style>`` element, read for what it hides (the HTML itself is
at most MAX_HTML_CHARS)."""
MAX_STYLE_RULES = 100
"""Simple rules of ``<style>`` elements applied per mail (each is tried on every element)."""

_SKIPPED_TAGS = frozenset(("blockquote", "head", "script", "style", "title", "template", "noscript"))
"""Never shown, or the quoted original: left out with everything inside."""
_SKIPPED_CLASSES = frozenset(("gmail_quote", "gmail_signature", "moz-cite-prefix", "yahoo_quoted"))
_ORIGINAL_FOLLOWS_IDS = frozenset(
    ("divrplyfwdmsg", "appendonsend", "mail-editor-reference-message-container")
)
_DECLARATION = re.compile(r"\s*([a-z-]+)\s*:\s*([^;]*?)\s*(?:!important\s*)?(?:;|$)", re.IGNORECASE)
_STYLE_RULE = re.compile(r"([^{}]{1,200})\{([^{}]{0,2000})\}")
_SIMPLE_SELECTOR = re.compile(r"([a-z][a-z0-9]*)?(?:([.#])([\w-]+))?", re.IGNORECASE)
_ZERO = re.compile(r"[+-]?(?:0+(?:\.0*)?|\.0+)(?:[a-z%]+)?", re.IGNORECASE)
"""A length or number of zero ("0", "0px", "0.0em"; not "auto" or "small", which hold no zero)."""
_NAMED_COLOURS = {"white": (255, 255, 255), "black": (0, 0, 0), "red": (255, 0, 0), "green": (0, 128, 0),
                  "blue": (0, 0, 255), "yellow": (255, 255, 0), "gray": (128, 128, 128), "grey": (128, 128, 128),
                  "silver": (192, 192, 192), "snow": (255, 250, 250), "ivory": (255, 255, 240),
                  "whitesmoke": (245, 245, 245), "ghostwhite": (248, 248, 255)}
_PAPER = (255, 255, 255)
"""What a mail client shows under text that sets no background."""
_TOO_CLOSE = 16
"""Text whose colour is this close to its background (per channel) cannot be read."""
_LAYOUT = ParserConfig(display_links=False, display_images=False)


def _declarations(style: str) -> dict[str, str]:
    return {name.lower(): value.strip().lower() for name, value in _DECLARATION.findall(style[:MAX_STYLE_CHARS])}


def _colour(value: str) -> tuple[int, int, int] | None:
    """A CSS colour as RGB (None: none, or one not known here); of a shorthand like ``background:
    #000 url(…)``, its first word."""
    value = value.strip()
    if not value.startswith("rgb"):
        value = value.split()[0] if value.split() else ""
    if value in _NAMED_COLOURS:
        return _NAMED_COLOURS[value]
    if re.fullmatch(r"#[0-9a-f]{3}", value):
        return int(value[1] * 2, 16), int(value[2] * 2, 16), int(value[3] * 2, 16)
    if re.fullmatch(r"#[0-9a-f]{6}", value):
        return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)
    found = re.fullmatch(r"rgba?\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*(?:,\s*[\d.]+%?\s*)?\)", value)
    return (int(found.group(1)), int(found.group(2)), int(found.group(3))) if found else None


def _transparent(value: str) -> bool:
    found = re.fullmatch(r"rgba\([^)]*,\s*([\d.]+)%?\s*\)", value)
    return value == "transparent" or bool(found and float(found.group(1) or 0) == 0)


_LENGTH = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))\s*(px|em|rem|pt|pc|cm|mm|in|%|vw|vh|ch|ex)?")
_PIXELS = {None: 1.0, "px": 1.0, "em": 16.0, "rem": 16.0, "ex": 8.0, "ch": 8.0, "pt": 4 / 3, "pc": 16.0,
           "cm": 96 / 2.54, "mm": 96 / 25.4, "in": 96.0, "%": 6.0, "vw": 6.0, "vh": 6.0}
"""CSS units in pixels, roughly (a percentage of a mail's width of about 600 pixels)."""
FAR_OUT_PIXELS = 500
"""A box moved this far (or text indented this far) is off the screen of any mail reader."""
_SCALE = re.compile(r"scale(?:[xyz]|3d)?\(([^()]{0,100})\)")
_CLIP_RECT = re.compile(r"rect\(([^()]{0,100})\)")
_CLIP_PATH_NOTHING = re.compile(r"(?:circle|ellipse)\(\s*0[a-z%]*[\s,)]|inset\(\s*(?:[5-9]\d|\d{3,})(?:\.\d*)?%\s*\)")


def _pixels(value: str) -> float | None:
    """A CSS length in pixels (roughly), or None for anything else (``auto``, ``calc(…)``)."""
    found = _LENGTH.fullmatch(value.strip())
    return None if found is None else float(found.group(1)) * _PIXELS[found.group(2)]


def _zero(declarations: dict[str, str], name: str) -> bool:
    return name in declarations and bool(_ZERO.fullmatch(declarations[name]))


def _far_out(declarations: dict[str, str], name: str) -> bool:
    length = _pixels(declarations.get(name, ""))
    return length is not None and abs(length) >= FAR_OUT_PIXELS


def _clipped(declarations: dict[str, str]) -> bool:
    """Overflow cut off: what does not fit the box is not seen."""
    values = " ".join(declarations.get(name, "") for name in ("overflow", "overflow-x", "overflow-y")).split()
    return any(value in ("hidden", "clip") for value in values)


def _positioned(declarations: dict[str, str]) -> bool:
    return declarations.get("position") in ("absolute", "fixed")


def _scaled_to_nothing(declarations: dict[str, str]) -> bool:
    for arguments in _SCALE.findall(declarations.get("transform", "")[:MAX_STYLE_CHARS]):
        if any(_ZERO.fullmatch(argument.strip()) for argument in arguments.split(",")):
            return True
    return any(_ZERO.fullmatch(factor) for factor in declarations.get("scale", "").split())


def _clip_to_nothing(declarations: dict[str, str]) -> bool:
    """``clip: rect(…)`` of no area (on a positioned box, the only kind it clips), or a
    ``clip-path`` that leaves nothing (a circle of no radius, an inset of half the box or more)."""
    rect = _CLIP_RECT.search(declarations.get("clip", ""))
    if rect is not None and _positioned(declarations):
        written = re.split(r"[\s,]+", rect.group(1).strip())
        sides = [length for side in written if (length := _pixels(side)) is not None]
        if len(written) == len(sides) == 4:
            top, right, bottom, left = sides
            if bottom <= top or right <= left:
                return True
    return bool(_CLIP_PATH_NOTHING.search(declarations.get("clip-path", "")))


_HIDING_TRICKS: tuple[tuple[str, Callable[[dict[str, str]], bool]], ...] = (
    ("display: none", lambda style: style.get("display") == "none"),
    ("visibility: hidden or collapse", lambda style: style.get("visibility") in ("hidden", "collapse")),
    ("opacity: 0", lambda style: _zero(style, "opacity")),
    ("font-size: 0", lambda style: _zero(style, "font-size")),
    ("a transparent colour", lambda style: _transparent(style.get("color", ""))),
    ("mso-hide: all (Outlook's own)", lambda style: style.get("mso-hide") == "all"),
    ("max-height: 0", lambda style: _zero(style, "max-height")),
    ("height, width or max-width 0, overflow hidden",
     lambda style: any(_zero(style, name) for name in ("height", "width", "max-width")) and _clipped(style)),
    ("line-height: 0, overflow hidden", lambda style: _zero(style, "line-height") and _clipped(style)),
    ("text-indent far out", lambda style: _far_out(style, "text-indent")),
    ("positioned far out (left, top or right: -9999px)",
     lambda style: _positioned(style) and any((_pixels(style.get(side, "")) or 0) <= -FAR_OUT_PIXELS
                                              for side in ("left", "top", "right"))),
    ("positioned far out by a margin", lambda style: _positioned(style) and any(
        (_pixels(style.get(side, "")) or 0) <= -FAR_OUT_PIXELS for side in ("margin-left", "margin-top"))),
    ("clip or clip-path to nothing", _clip_to_nothing),
    ("transform: scale(0)", _scaled_to_nothing),
)
"""Every way of hiding text by style that the reading knows, in one place: each takes the
declarations of one element (its own and those of the simple ``<style>`` rules that match it).
Colours (text in the colour of its background) are judged apart, as they depend on the boxes
around the element (:meth:`_Visibility.hidden`)."""


def _hides(declarations: dict[str, str]) -> bool:
    """Declarations that leave their element's text unseen, whatever surrounds it."""
    return any(trick(declarations) for _, trick in _HIDING_TRICKS)


class _Visibility:
    """What the eye does not see in an HTML mail: hidden by an attribute, an inline style or a
    simple rule of a ``<style>`` element, or written in the colour of its background."""

    def __init__(self, root: Any) -> None:
        self.rules: list[tuple[str | None, str | None, str | None, dict[str, str]]] = []
        for style in root.iter("style"):
            for selectors, body in _STYLE_RULE.findall((style.text or "")[:MAX_STYLE_CHARS]):
                declarations = _declarations(body)
                for selector in selectors.split(","):
                    simple = _SIMPLE_SELECTOR.fullmatch(selector.strip())
                    if simple and any(simple.groups()) and len(self.rules) < MAX_STYLE_RULES:
                        tag, kind, name = simple.groups()
                        self.rules.append((tag and tag.lower(), kind, name and name.lower(), declarations))

    def style_of(self, element: Any) -> dict[str, str]:
        """The element's declarations: the simple rules that match it, then its own attributes."""
        declarations: dict[str, str] = {}
        classes = set(str(element.get("class", "")).lower().split())
        ident = str(element.get("id", "")).lower()
        for tag, kind, name, rule in self.rules:
            if (tag is not None and tag != element.tag) or (kind == "." and name not in classes) \
                    or (kind == "#" and name != ident):
                continue
            declarations.update(rule)
        declarations.update(_declarations(str(element.get("style", ""))))
        if element.tag == "font" and element.get("color"):
            declarations.setdefault("color", str(element.get("color")).lower())
        if element.get("bgcolor"):
            declarations.setdefault("background-color", str(element.get("bgcolor")).lower())
        return declarations

    def hidden(self, element: Any, background: tuple[int, int, int]) -> tuple[bool, tuple[int, int, int]]:
        """Whether ``element`` is unseen on ``background``, and the background of what it holds."""
        declarations = self.style_of(element)
        own = _colour(declarations.get("background-color", declarations.get("background", "")))
        behind = own or background
        if element.get("hidden") is not None or _hides(declarations):
            return True, behind
        colour = _colour(declarations.get("color", ""))
        return colour is not None and all(abs(a - b) <= _TOO_CLOSE for a, b in zip(colour, behind)), behind


def _drop(node: Any) -> None:
    """Remove ``node`` and what it holds, keeping the text that follows it."""
    parent = node.getparent()
    if parent is None:
        return
    if node.tail:
        previous = node.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + node.tail
        else:
            parent.text = (parent.text or "") + node.tail
    parent.remove(node)


def _cut_from(node: Any) -> None:
    """Remove ``node`` and everything after it in the document (the original a reply quotes)."""
    first = True
    while node.getparent() is not None:
        parent = node.getparent()
        for later in list(node.itersiblings()):
            parent.remove(later)
        node.tail = None
        if first:
            parent.remove(node)
            first = False
        node = parent


def _visible_tree(html: str) -> Any:
    """The mail's HTML parsed by lxml, everything a reader does not see taken out (None: no HTML)."""
    try:
        root = lxml_html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return None
    for comment in list(root.iter(etree.Comment, etree.ProcessingInstruction)):
        _drop(comment)
    original = next((element for element in root.iter() if isinstance(element.tag, str)
                     and str(element.get("id", "")).lower() in _ORIGINAL_FOLLOWS_IDS), None)
    if original is not None:
        _cut_from(original)
    visibility = _Visibility(root)
    pending: list[tuple[Any, tuple[int, int, int]]] = [(root, _PAPER)]
    unseen = []
    while pending:  # no recursion: a deep tree costs no stack
        element, background = pending.pop()
        for child in element:
            if not isinstance(child.tag, str):
                continue
            hidden, behind = visibility.hidden(child, background)
            if hidden or child.tag in _SKIPPED_TAGS or _SKIPPED_CLASSES & set(str(child.get("class", "")).split()):
                unseen.append(child)
            else:
                pending.append((child, behind))
    for element in unseen:
        _drop(element)
    return root


def html_to_text(html: str) -> str:
    """The text a reader sees in an HTML mail, one line per block: quotes, the original and text
    hidden from the eye (by ``hidden``, by styles, in the colour of its background) left out.

    lxml parses it (in linear time, whatever the markup) and inscriptis lays the text out."""
    root = _visible_tree(html)
    if root is None:
        return ""
    text = Inscriptis(root, _LAYOUT).get_text().replace("\u00a0", " ")
    lines = [line.strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
