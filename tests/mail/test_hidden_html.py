"""Only visible text is read (issue 21, item 3): text hidden from the eye in an HTML mail, by
any of the usual means, is never read as a command; text a reader sees always is."""

from __future__ import annotations

import pytest

from pbem.mail.html_text import html_to_text

HIDDEN = {
    "display:none": '<div style="display:none">$quit</div>',
    "display: none !important": '<span style="DISPLAY: none !important">$quit</span>',
    "font-size:0": '<span style="font-size:0">$quit</span>',
    "font-size:0px": '<span style="font-size: 0px">$quit</span>',
    "white on white": '<span style="color:#ffffff">$quit</span>',
    "white on white, short": '<span style="color:#fff">$quit</span>',
    "white on white, named": '<p style="color: white">$quit</p>',
    "white on white, rgb": '<p style="color: rgb(255, 255, 255)">$quit</p>',
    "white on white, font": '<font color="#FFFFFF">$quit</font>',
    "black on black": '<div style="background-color:#000"><span style="color:#010101">$quit</span></div>',
    "transparent": '<span style="color:rgba(0,0,0,0)">$quit</span>',
    "hidden attribute": "<div hidden>$quit</div>",
    "template": "<template>$quit</template>",
    "visibility:hidden": '<div style="visibility:hidden">$quit</div>',
    "opacity:0": '<div style="opacity:0">$quit</div>',
    "opacity:0.0": '<div style="opacity: 0.0">$quit</div>',
    "zero height": '<div style="max-height:0;overflow:hidden">$quit</div>',
    "comment": "<!-- $quit -->",
    "style": "<style>$quit {}</style>",
    "script": "<script>var command = '$quit';</script>",
    "head": "<head><title>$quit</title></head>",
    "a class hidden by a style rule": '<style>.x { display: none }</style><div class="x">$quit</div>',
    "an id hidden by a style rule": '<style>#y{font-size:0}</style><p id="y">$quit</p>',
    "noscript": "<noscript>$quit</noscript>",
    # issue 34, item 4: off-screen and zero-size boxes
    "text-indent far out, overflow hidden": '<div style="text-indent:-9999px;overflow:hidden">$quit</div>',
    "text-indent far out in em": '<p style="text-indent: -999em">$quit</p>',
    "clip to nothing": '<div style="position:absolute;clip:rect(0 0 0 0)">$quit</div>',
    "clip to nothing, with commas": '<span style="position: absolute; clip: rect(1px, 1px, 1px, 1px)">$quit</span>',
    "clip-path to nothing": '<div style="clip-path: inset(50%)">$quit</div>',
    "clip-path, a circle of no radius": '<div style="clip-path:circle(0)">$quit</div>',
    "transform: scale(0)": '<div style="transform:scale(0)">$quit</div>',
    "transform: scaleY(0)": '<div style="transform: translate(1px) scaleY(0)">$quit</div>',
    "width and height 0, overflow hidden": '<div style="width:0;height:0;overflow:hidden">$quit</div>',
    "max-height:0": '<div style="max-height:0">$quit</div>',
    "max-height:0px by a style rule": '<style>.p{max-height:0px;overflow:hidden}</style><div class="p">$quit</div>',
    "left:-9999px, absolutely positioned": '<div style="position:absolute;left:-9999px">$quit</div>',
    "top:-9999px, fixed": '<div style="position:fixed;top:-9999px">$quit</div>',
    "line-height:0 with zero font": '<div style="line-height:0;font-size:0">$quit</div>',
    "line-height:0, overflow hidden": '<div style="line-height:0;overflow:hidden">$quit</div>',
    "mso-hide": '<div style="mso-hide:all">$quit</div>',
    "max-width:0, overflow hidden on both axes": '<div style="max-width:0;overflow:hidden hidden">$quit</div>',
    "scale3d": '<div style="transform:scale3d(0, 0, 0)">$quit</div>',
}


@pytest.mark.parametrize("way", sorted(HIDDEN))
def test_hidden_text_is_not_read(way: str) -> None:
    html = f"<html><body><p>roll</p>{HIDDEN[way]}<p>see you</p></body></html>"
    assert html_to_text(html) == "roll\n\nsee you", way


@pytest.mark.parametrize("html", [
    '<div style="background:#000000"><span style="color:#ffffff">$quit</span></div>',  # white on black
    '<span style="color:#333333">$quit</span>',
    '<span style="font-size:10px">$quit</span>',
    '<div style="opacity:0.9">$quit</div>',
    '<div style="display:block">$quit</div>',
    '<style>.y { display: none }</style><div class="x">$quit</div>',
    # what hides nothing, though it names a property that can (issue 34, item 4)
    '<span style="font-size:small">$quit</span>',
    '<div style="height:auto;overflow:hidden">$quit</div>',
    '<div style="max-height:none">$quit</div>',
    '<p style="text-indent:2em">$quit</p>',
    '<div style="position:absolute;left:10px">$quit</div>',
    '<div style="left:-9999px">$quit</div>',  # not positioned: left does nothing
    '<div style="clip:rect(0 0 0 0)">$quit</div>',  # not positioned: clip does nothing
    '<div style="transform:scale(1.5)">$quit</div>',
    '<div style="clip-path:inset(10%)">$quit</div>',
    '<div style="line-height:0">$quit</div>',
    '<div style="max-width:0">$quit</div>',  # words wrap, but the overflow is seen
])
def test_visible_text_is_read(html: str) -> None:
    assert html_to_text(f"<p>roll</p>{html}") == "roll\n$quit" or html_to_text(f"<p>roll</p>{html}") == "roll\n\n$quit"


def test_the_text_after_a_hidden_element_in_the_same_line_stays() -> None:
    assert html_to_text('<p>8/5 <span style="display:none">$quit</span>6/5</p>') == "8/5 6/5"


def test_every_hiding_trick_is_in_the_one_table() -> None:
    """The table of tricks is where hiding is decided: every way above is one of its entries."""
    from pbem.mail.html_text import _HIDING_TRICKS, _declarations
    off_screen = {"text-indent far out", "positioned far out (left, top or right: -9999px)",
                  "clip or clip-path to nothing", "transform: scale(0)", "height, width or max-width 0, overflow hidden",
                  "max-height: 0", "line-height: 0, overflow hidden"}
    assert off_screen <= {name for name, _ in _HIDING_TRICKS}
    for name, trick in _HIDING_TRICKS:
        assert not trick(_declarations("color: #333; font-size: 12px; position: static")), name
