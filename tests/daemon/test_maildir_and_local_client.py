"""The Maildir source and sink, and the terminal mail client behind `pbem send` / `pbem outbox`."""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time
from email.parser import BytesParser
from email.policy import default as default_policy

import pytest

from pbem.cli import main
from pbem.mail.local_client import compose_mail, compose_reply, deliver_to_maildir, list_outbox, quote
from pbem.mail.headers import message_id_of
from pbem.mail.sinks import MaildirSink, outbox_file_name
from pbem.mail.sources import DONE_FOLDER, FAILED_FOLDER, MaildirSource
from pbem.store.db import session_scope, utc_now
from pbem.store.mail_records import InboundMail, InboundState, queue_mail


def raw_mail(message_id: str, text: str = "hi") -> bytes:
    message = compose_mail("alice@example.org", "backgammon@localhost", "s", text)
    message.replace_header("Message-ID", message_id)
    return message.as_bytes()


def test_source_reads_new_and_cur_oldest_first_and_moves_done_and_failed(tmp_path):
    source = MaildirSource(tmp_path / "inbox")
    (tmp_path / "inbox" / "new" / "b").write_bytes(b"second")
    (tmp_path / "inbox" / "cur" / "a:2,S").write_bytes(b"first")
    later = time.time() + 5
    os.utime(tmp_path / "inbox" / "new" / "b", (later, later))
    messages = asyncio.run(source.fetch())
    assert [(m.key, m.raw) for m in messages] == [("cur/a:2,S", b"first"), ("new/b", b"second")]
    asyncio.run(source.mark_done("cur/a:2,S"))
    asyncio.run(source.mark_done("cur/a:2,S"))  # twice is harmless
    asyncio.run(source.mark_failed("new/b", "unreadable"))
    assert asyncio.run(source.fetch()) == []
    assert (tmp_path / "inbox" / DONE_FOLDER / "cur" / "a:2,S").read_bytes() == b"first"
    assert (tmp_path / "inbox" / FAILED_FOLDER / "cur" / "b").read_bytes() == b"second"


def test_source_wait_for_mail_wakes_on_arrival_and_times_out(tmp_path):
    source = MaildirSource(tmp_path / "inbox")

    async def scenario() -> tuple[float, float]:
        started = time.monotonic()
        await source.wait_for_mail(0.3)
        idle = time.monotonic() - started
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, (tmp_path / "inbox" / "new" / "m").write_bytes, b"x")
        started = time.monotonic()
        await source.wait_for_mail(10)
        return idle, time.monotonic() - started

    idle, woken = asyncio.run(scenario())
    assert 0.3 <= idle < 1.0
    assert woken < 1.0


def test_sink_names_files_by_message_id_so_a_resend_replaces(tmp_path):
    sink = MaildirSink(tmp_path / "outbox")
    first = raw_mail("<one@x>", "first")
    asyncio.run(sink.send(first, "backgammon@localhost", ["alice@example.org"]))
    asyncio.run(sink.send(first, "backgammon@localhost", ["alice@example.org"]))
    asyncio.run(sink.send(raw_mail("<two@x>"), "backgammon@localhost", ["alice@example.org"]))
    names = sorted(path.name for path in (tmp_path / "outbox" / "new").iterdir())
    assert names == sorted([outbox_file_name("<one@x>"), outbox_file_name("<two@x>")])
    assert list((tmp_path / "outbox" / "tmp").iterdir()) == []


def test_compose_mail_has_the_headers_of_a_mail_client():
    message = compose_mail("Jörg <joerg@example.org>", "backgammon@localhost", "Einladung", "einladen bob@x\n")
    parsed = BytesParser(policy=default_policy).parsebytes(message.as_bytes())
    for header in ("Date", "Message-ID", "MIME-Version", "From", "To", "Subject"):
        assert parsed[header], header
    assert parsed.get_content_type() == "text/plain" and parsed.get_content_charset() == "utf-8"
    assert parsed["Message-ID"].endswith("@example.org>")
    assert parsed.get_content() == "einladen bob@x\n"


def test_compose_reply_threads_and_quotes_the_original():
    original = compose_mail("Backgammon by Mail <backgammon@localhost>", "alice@example.org",
                            "Your turn", "Board\n\nPosition ID: 4HPwATDgc/ABMA\n")
    original["Reply-To"] = "backgammon+token@localhost"
    original["References"] = "<older@localhost>"
    reply = compose_reply("alice@example.org", original, "24/18 13/9")
    assert reply["To"] == "backgammon+token@localhost"
    assert reply["Subject"] == "Re: Your turn"
    assert reply["In-Reply-To"] == original["Message-ID"]
    assert reply["References"] == f"<older@localhost> {original['Message-ID']}"
    text = reply.get_content()
    assert text.startswith("24/18 13/9\n\nOn ")
    assert f"{original['Date']}, Backgammon by Mail <backgammon@localhost> wrote:\n" in text
    assert text.endswith("> Board\n>\n> Position ID: 4HPwATDgc/ABMA\n")
    assert compose_reply("a@x.org", reply, "again")["Subject"] == "Re: Your turn"


def test_reply_goes_to_from_without_reply_to():
    original = compose_mail("backgammon@localhost", "alice@example.org", "Hi", "x")
    assert compose_reply("alice@example.org", original, "y")["To"] == "backgammon@localhost"


def test_quote():
    assert quote("a\n\nb\n") == "> a\n>\n> b\n"


def test_send_and_outbox_commands(config, config_file, capsys):
    MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir)  # made by pbem serve
    assert main(["send", "--config", str(config_file), "--from", "alice@example.org", "--subject", "hi",
                 "invite bob@example.org"]) == 0
    dropped = capsys.readouterr().out.strip()
    assert dropped.startswith(str(config.inbox_dir / "new"))
    sent = BytesParser(policy=default_policy).parsebytes(open(dropped, "rb").read())
    assert sent["To"] == "backgammon@localhost" and sent["From"] == "alice@example.org"

    assert main(["outbox", "--config", str(config_file)]) == 1
    assert "no mail" in capsys.readouterr().err
    answers = [compose_mail("backgammon@localhost", to, subject, f"text of {subject}")
               for to, subject in (("alice@example.org", "one"), ("bob@example.org", "two"),
                                   ("alice@example.org", "three"))]
    for answer in answers:
        asyncio.run(MaildirSink(config.outbox_dir).send(answer.as_bytes(), "backgammon+bounce-x@localhost", []))
        time.sleep(0.01)
    assert [e.message["Subject"] for e in list_outbox(config.outbox_dir, "Alice@Example.org")] == ["one", "three"]

    assert main(["outbox", "--config", str(config_file)]) == 0
    listing = capsys.readouterr().out
    assert listing.index("one") < listing.index("two") < listing.index("three")
    assert str(config.outbox_dir / "new") in listing

    assert main(["outbox", "--config", str(config_file), "--to", "alice@example.org", "--last"]) == 0
    latest = capsys.readouterr().out
    assert "Subject: three" in latest and "text of three" in latest
    assert "Return-Path: <backgammon+bounce-x@localhost>" in latest  # the envelope sender, as a mail server writes it

    [latest_path] = [e.path for e in list_outbox(config.outbox_dir) if e.message["Subject"] == "three"]
    assert main(["send", "--config", str(config_file), "--from", "alice@example.org",
                 "--reply-to", str(latest_path), "24/18 13/9"]) == 0
    reply_path = capsys.readouterr().out.strip()
    reply = BytesParser(policy=default_policy).parsebytes(open(reply_path, "rb").read())
    assert reply["Subject"] == "Re: three" and reply["In-Reply-To"] == answers[2]["Message-ID"]
    assert "> text of three" in reply.get_content()


def test_send_reads_standard_input_and_rejects_a_bad_sender(config, config_file, capsys, monkeypatch):
    MaildirSource(config.inbox_dir)  # made by pbem serve
    monkeypatch.setattr("sys.stdin", io.StringIO("roll\n"))
    assert main(["send", "--config", str(config_file), "--from", "alice@example.org", "-"]) == 0
    dropped = capsys.readouterr().out.strip()
    assert BytesParser(policy=default_policy).parsebytes(open(dropped, "rb").read()).get_content() == "roll\n"
    assert main(["send", "--config", str(config_file), "--from", "not an address", "x"]) == 2
    assert "--from" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["serve"], ["send", "--from", "a@b.org", "x"], ["outbox"]])
def test_commands_report_a_bad_config_file(tmp_path, capsys, command):
    bad = tmp_path / "bad.toml"
    bad.write_text("[service]\nlanguage = 'fr'\n")
    assert main([*command, "--config", str(bad)]) == 2
    assert f"{bad}: [service] language" in capsys.readouterr().err


def test_an_unusable_database_ends_a_command_with_one_line(tmp_path, capsys):
    (tmp_path / "garbage.db").write_text("hello")
    config = tmp_path / "pbem.toml"
    config.write_text(f'[database]\nurl = "sqlite:///{tmp_path / "garbage.db"}"\n', encoding="utf-8")
    for command in (["games"], ["status"], ["db", "status"], ["db", "upgrade"], ["serve"]):
        assert main([*command, "--config", str(config)]) == 2, command
        error = capsys.readouterr().err.strip()
        assert error.endswith("file is not a database") and "\n" not in error, error


def test_pbem_requeue_puts_shunted_mails_back_into_the_maildir(config, config_file, capsys):
    source = MaildirSource(config.inbox_dir)
    mails = [compose_mail(f"p{n} <p{n}@example.org>", "backgammon@localhost", "s", "help") for n in range(3)]
    for mail in mails:
        deliver_to_maildir(config.inbox_dir, mail)

    async def shunt_all() -> None:
        for message in await source.fetch():
            await source.mark_failed(message.key, "test")

    asyncio.run(shunt_all())
    assert asyncio.run(source.fetch()) == []
    assert main(["requeue", str(mails[1]["Message-ID"]), "--config", str(config_file)]) == 0
    assert [message_id_of(message.raw) for message in asyncio.run(source.fetch())] == [str(mails[1]["Message-ID"])]
    assert main(["requeue", "not an id", "--config", str(config_file)]) == 2
    assert main(["requeue", "--all", "--config", str(config_file)]) == 0
    assert len(asyncio.run(source.fetch())) == 3
    assert main(["requeue", "--all", "--config", str(config_file)]) == 1
    assert "no shunted mail" in capsys.readouterr().out


def _daemon_stand_in(config, engine, answer: bool, stop: threading.Event,
                     state: InboundState = InboundState.APPLIED) -> None:
    """What pbem serve does with the mail, slowly: the mail's row and its answer's row in one
    transaction, the answer's file a second later (the outbox is sent after the commit)."""
    while not stop.is_set():
        for path in (config.inbox_dir / "new").iterdir():
            raw = path.read_bytes()
            message_id = message_id_of(raw)
            reply = compose_mail("backgammon@localhost", "alice@example.org", "Re: s", "your turn")
            reply["In-Reply-To"] = message_id
            with session_scope(engine) as session:
                session.add(InboundMail(message_id=message_id, raw=raw, received_at=utc_now(), processed_at=utc_now(),
                                        state=state, reason="" if state is InboundState.APPLIED else "a test"))
                if answer:
                    queue_mail(session, reply)
            path.unlink()
            if answer:
                time.sleep(1.0)
                asyncio.run(MaildirSink(config.outbox_dir).send(reply.as_bytes(), "backgammon@localhost", []))
            return
        time.sleep(0.02)


@pytest.mark.parametrize("answer", [False, True])
def test_send_wait_returns_once_the_mail_is_applied_and_its_answers_sent(config, config_file, engine, capsys, answer):
    """No answer due (a move by default): back at once, not after a guessed grace time; an answer
    due: back when its file is in the outbox, with its file."""
    MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir)  # made by pbem serve
    stop = threading.Event()
    daemon = threading.Thread(target=_daemon_stand_in, args=(config, engine, answer, stop))
    daemon.start()
    started = time.monotonic()
    try:
        assert main(["send", "--config", str(config_file), "--from", "alice@example.org", "--wait", "13/9"]) == 0
    finally:
        stop.set()
        daemon.join(10)
    took = time.monotonic() - started
    output = capsys.readouterr()
    files = output.out.split()
    if answer:
        assert len(files) == 1 and files[0].startswith(str(config.outbox_dir)) and took >= 1.0
    else:
        assert files == [] and "applied; no answer to you" in output.err and took < 1.5, took


def test_send_example_answers_with_the_move_the_mail_shows(config, config_file, capsys):
    MaildirSource(config.inbox_dir)  # made by pbem serve
    turn = compose_mail("backgammon@localhost", "alice@example.org", "Your turn",
                        "Your game on the web:\n  http://127.0.0.1:8080/g/x\n\nIt is your turn with 4-3. Write it like"
                        " this (the\nform of a move, not a suggestion):\n  13/10 8/4\n")
    waiting = compose_mail("backgammon@localhost", "alice@example.org", "Waiting", "Now Ben must move.\n")
    roll = compose_mail("backgammon@localhost", "alice@example.org", "Your turn: roll or double",
                        "It is your turn. You may double: reply  roll  or  double\n")
    for number, mail in enumerate((turn, waiting, roll)):
        (config.data_dir / f"{number}.eml").write_bytes(mail.as_bytes())
    assert main(["send", "--config", str(config_file), "--from", "alice@example.org", "--example",
                 "--reply-to", str(config.data_dir / "0.eml")]) == 0
    captured = capsys.readouterr()
    sent = BytesParser(policy=default_policy).parsebytes(open(captured.out.strip(), "rb").read())
    assert sent.get_content().startswith("13/10 8/4\n") and "the move the mail shows: 13/10 8/4" in captured.err
    assert main(["send", "--config", str(config_file), "--from", "alice@example.org", "--example",
                 "--reply-to", str(config.data_dir / "1.eml")]) == 1
    assert "shows no move to copy" in capsys.readouterr().err
    assert main(["send", "--config", str(config_file), "--from", "alice@example.org", "--example",
                 "--reply-to", str(config.data_dir / "2.eml")]) == 1
    refused = capsys.readouterr().err  # the mail of the player on turn, asked to roll: not "not your turn"
    assert "shows no move to copy" in refused and "such as roll" in refused and "not this player's turn" not in refused
    assert main(["send", "--config", str(config_file), "--from", "alice@example.org", "--example", "roll"]) == 2


def test_send_wait_says_when_the_mail_was_shunted(config, config_file, engine, capsys):
    MaildirSource(config.inbox_dir), MaildirSink(config.outbox_dir)  # made by pbem serve
    stop = threading.Event()
    daemon = threading.Thread(target=_daemon_stand_in, args=(config, engine, False, stop, InboundState.FAILED))
    daemon.start()
    try:
        assert main(["send", "--config", str(config_file), "--from", "alice@example.org", "--wait", "13/9"]) == 1
    finally:
        stop.set()
        daemon.join(10)
    assert "not applied (failed): a test" in capsys.readouterr().err
