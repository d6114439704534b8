"""Each HTML mail rendered by headless Chromium: the inline board loads and is not blank.

The ``cid:`` references are rewritten to the image files written next to the HTML, as a mail
client resolves them from the ``multipart/related`` part.  With ``PBEM_UPDATE_DOCS=1`` the
English screenshots are written to ``docs/mails/`` for the README.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from mail_kinds import KINDS, play_every_kind
from PIL import Image, ImageChops
from chromium import headless_chromium

from pbem.config import load_config

pytestmark = pytest.mark.browser

DOCS = Path(__file__).resolve().parents[2] / "docs" / "mails"
PHONE = (480, 1400)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with headless_chromium(tmp_path_factory.mktemp("chromium"), f"--window-size={PHONE[0]},{PHONE[1]}") as browser:
        yield browser


def write_mail_page(mail, folder: Path) -> Path:
    """The HTML part as a file, its inline images beside it and ``cid:`` pointing at them."""
    html = mail.get_body(preferencelist=("html",)).get_content()
    for part in mail.walk():
        if part["Content-ID"]:
            name = part.get_filename()
            (folder / name).write_bytes(part.get_content())
            html = html.replace(f"cid:{part['Content-ID'].strip('<>')}", name)
    assert "cid:" not in html
    page = folder / "mail.html"
    page.write_text(html, encoding="utf-8")
    return page


@pytest.mark.parametrize("language", ["en", "de"])
def test_every_html_mail_shows_its_board(browser, language, tmp_path) -> None:
    data = tmp_path / "pbem-data"
    data.mkdir()
    (tmp_path / "pbem.toml").write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data}"\n')
    mails = play_every_kind(load_config(tmp_path / "pbem.toml"), language)
    for number, kind in enumerate(KINDS, 1):
        folder = tmp_path / kind
        folder.mkdir()
        browser.get(write_mail_page(mails[kind], folder).as_uri())
        images = browser.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.getBoundingClientRect().top,"
            " i.getBoundingClientRect().height, i.getBoundingClientRect().width])")
        shot = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
        if kind in ("invitation", "help"):
            assert images == [], kind
        else:
            ((complete, natural_width, top, height, width),) = images
            assert complete and natural_width == 640, (kind, images)
            assert width <= PHONE[0] and height > 300, "scaled to the phone's width"
            board = shot.crop((10, int(top) + 10, int(width) - 10, int(top + height) - 10))
            colours = board.getcolors(maxcolors=100_000) or []
            assert len(colours) > 20, "the board is not blank"
            felt = sum(count for count, rgb in colours if abs(rgb[0] - 46) < 12 and abs(rgb[1] - 107) < 12)
            assert felt > board.width * board.height // 5, "the green of the board is there"
        assert len((shot.getcolors(maxcolors=100_000) or [])) > 2, "the page shows text"
        if language == "en" and os.environ.get("PBEM_UPDATE_DOCS"):
            DOCS.mkdir(parents=True, exist_ok=True)
            used = ImageChops.difference(shot, Image.new("RGB", shot.size, "white")).getbbox()
            bottom = min(shot.height, used[3] + 16) if used else shot.height
            shot.crop((0, 0, shot.width, bottom)).quantize(64).save(DOCS / f"{number}-{kind}.png", optimize=True)
