"""Only visible text is read (issue 21, item 3): text hidden from the eye in an HTML mail, by
any of the usual means, is never read as a command; text a reader sees always is."""

from __future__ import annotations

import pytest

from pbem.mail.reading import html_to_text

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
])
def test_visible_text_is_read(html: str) -> None:
    assert html_to_text(f"<p>roll</p>{html}") == "roll\n$quit" or html_to_text(f"<p>roll</p>{html}") == "roll\n\n$quit"


def test_the_text_after_a_hidden_element_in_the_same_line_stays() -> None:
    assert html_to_text('<p>8/5 <span style="display:none">$quit</span>6/5</p>') == "8/5 6/5"
