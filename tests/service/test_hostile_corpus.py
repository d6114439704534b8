"""Every mail of the hostile corpus (tests/hostile_corpus.py) goes through the real pipeline:
none fails or crashes, none is answered with more than one help or board, and no answer
carries a byte it should not.  Time and memory per mail are printed by bench/hostile_bench.py."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from post_office import LoadedDice, Player, PostOffice, invite_and_accept

from pbem.daemon.pipeline import Outcome

sys.path.insert(0, str(Path(__file__).parents[1]))
from hostile_corpus import hostile_mails  # noqa: E402


@pytest.fixture(scope="module")
def corpus_office(tmp_path_factory):
    from pbem.config import load_config

    data_dir = tmp_path_factory.mktemp("hostile")
    path = data_dir / "pbem.toml"
    path.write_text(f'[service]\naddress = "backgammon@localhost"\ndata_dir = "{data_dir / "data"}"\n', "utf-8")
    office = PostOffice(load_config(path), LoadedDice(seed=3, script=[(3, 1)]))
    anna = Player(office, "anna@example.org", "Anna")
    eve = Player(office, "eve@example.org", "Eve")
    invite_and_accept(office, anna, eve, "invite eve@example.org")
    return office


CORPUS = list(hostile_mails("backgammon@localhost", 2_000_000))


@pytest.mark.parametrize(("name", "raw"), CORPUS, ids=[name for name, _ in CORPUS])
def test_no_hostile_mail_fails_or_gets_an_unbounded_answer(corpus_office, name, raw):
    office = corpus_office
    raw = raw.replace(b"Message-ID: <corpus", f"Message-ID: <{name}".encode(), 1)
    (office.config.inbox_dir / "new" / f"{name}.eml").write_bytes(raw)
    results = asyncio.run(office.pipeline.read_inbox())
    assert [result.outcome for result in results] in ([Outcome.APPLIED], [Outcome.IGNORED]), results
    asyncio.run(office.pipeline.flush_outbox())
    for mail in office.collect():
        body = mail.as_bytes()
        assert len(body) < 400_000, (name, len(body))
        assert b"\0" not in body
        text = mail.get_body(preferencelist=("plain",)).get_content()
        assert text.count("How to play backgammon by mail") <= 1
        assert text.count("Position ID:") <= 1
