"""The ``pbem`` command: one subcommand per operator task (SPEC section 5)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pbem.rules.gnubg_ids import legal_position_ids

EXIT_BAD_INPUT = 2

RULES_LEGAL_HELP = """\
Read lines "POSITION_ID D1 D2" on standard input and write, for each, one line:
the GNU Backgammon Position IDs of all distinct positions the player on roll
can reach with that roll, sorted in byte order and separated by single spaces,
or an empty line when no move is possible.

Positions are encoded as gnubg.positionid() encodes them with the mover on
roll, before and after the move (the turn is not passed). Each answer is
flushed at once, so the command can run as a co-process. Blank input lines
are skipped.

A malformed line stops the command: the answers to the lines before it have
been written, a message naming the line number goes to standard error, and
the exit status is 2 (an empty answer would wrongly mean "no legal move")."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``pbem`` command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    return args.run(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pbem", description="Play-by-email backgammon.")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    rules = commands.add_parser("rules", help="query the rules core")
    rules_commands = rules.add_subparsers(title="rules commands", metavar="COMMAND", required=True)
    legal = rules_commands.add_parser(
        "legal",
        help="list the legal resulting positions for Position IDs and rolls read on stdin",
        description=RULES_LEGAL_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    legal.set_defaults(run=lambda args: rules_legal(sys.stdin, sys.stdout, sys.stderr))
    _add_mail_commands(commands)
    _add_operator_commands(commands)
    return parser


def _add_mail_commands(commands: argparse._SubParsersAction) -> None:
    """`serve`, `send`, `outbox` and `check`; their modules load only when one of them runs."""
    serve = commands.add_parser("serve", help="run the mail daemon until SIGTERM/SIGINT")
    serve.add_argument("--config", type=Path, help="TOML config file (default: the embedded default)")
    serve.set_defaults(run=_serve)
    send = commands.add_parser("send", help="drop a mail into the local inbox, as a mail client would")
    send.add_argument("--from", dest="sender", required=True, metavar="ADDRESS", help="the player's address")
    send.add_argument("--subject", help="the subject (for a reply: instead of 'Re: …')")
    send.add_argument("--reply-to", type=Path, metavar="FILE", help="a mail from the outbox to answer")
    send.add_argument("--config", type=Path, help="TOML config file (default: the embedded default)")
    send.add_argument("text", metavar="TEXT", help="the mail's text; - reads standard input")
    send.set_defaults(run=_send)
    outbox = commands.add_parser("outbox", help="list the mails the service sent, newest last")
    outbox.add_argument("--to", metavar="ADDRESS", help="only mails to this address")
    outbox.add_argument("--last", action="store_true", help="print the latest mail instead of the list")
    outbox.add_argument("--config", type=Path, help="TOML config file (default: the embedded default)")
    outbox.set_defaults(run=_outbox)
    check = commands.add_parser(
        "check", help="try the [imap] and [smtp] settings: connect, TLS, log in, open the mailbox; send nothing")
    check.add_argument("--config", type=Path, required=True, help="TOML config file")
    check.set_defaults(run=_check)


def _add_operator_commands(commands: argparse._SubParsersAction) -> None:
    """`export`, `status`, `games` and `players`: what the database holds, for the operator."""
    export = commands.add_parser("export", help="write the .mat file of a game or match")
    export.add_argument("game", type=int, metavar="GAME", help="the match id (see pbem games)")
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here instead of to stdout")
    export.add_argument("--config", type=Path, help="TOML config file (default: the embedded default)")
    export.set_defaults(run=lambda args: _report("export", args.config, args.game, args.output))
    status = commands.add_parser(
        "status", help="mail that needs the operator: failing or given-up answers, shunted mails; exit 1 if any")
    status.add_argument("--config", type=Path, help="TOML config file (default: the embedded default)")
    status.set_defaults(run=lambda args: _report("status", args.config))
    for name, text in (("games", "list every game and match: players, format, score, status, whose turn"),
                       ("players", "list every player: ratings, experience, vacation days this year")):
        listing = commands.add_parser(name, help=text)
        listing.add_argument("--config", type=Path, help="TOML config file (default: the embedded default)")
        listing.set_defaults(run=lambda args, name=name: _report(name, args.config))


def _report(name: str, config: Path | None, game: int | None = None, output: Path | None = None) -> int:
    from pbem.service.reports import run_report

    return run_report(name, config, game, output)


def _serve(args: argparse.Namespace) -> int:
    from pbem.daemon.scheduler import run_serve

    return run_serve(args.config)


def _send(args: argparse.Namespace) -> int:
    from pbem.mail.local_client import run_send

    return run_send(args.config, args.sender, args.subject, args.text, args.reply_to)


def _check(args: argparse.Namespace) -> int:
    from pbem.mail.check import run_check

    return run_check(args.config)


def _outbox(args: argparse.Namespace) -> int:
    from pbem.mail.local_client import run_outbox

    return run_outbox(args.config, args.to, args.last)


def rules_legal(lines: TextIO, out: TextIO, err: TextIO) -> int:
    """Answer ``POSITION_ID D1 D2`` lines, one output line each; see :data:`RULES_LEGAL_HELP`."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            pid, dice = parse_legal_query(line)
            answer = " ".join(legal_position_ids(pid, dice))
        except ValueError as error:
            out.flush()
            print(f"pbem rules legal: line {number}: {error}", file=err)
            return EXIT_BAD_INPUT
        out.write(answer + "\n")
        out.flush()
    return 0


def parse_legal_query(line: str) -> tuple[str, tuple[int, int]]:
    """``"POSITION_ID D1 D2"`` as ``(pid, (d1, d2))``; ``ValueError`` saying what is wrong."""
    fields = line.split()
    if len(fields) != 3:
        raise ValueError(f"expected 'POSITION_ID D1 D2', got {line.strip()!r}")
    pid, *dice = fields
    if not all(die in "123456" and len(die) == 1 for die in dice):
        raise ValueError(f"dice must be two numbers from 1 to 6, got {' '.join(dice)!r}")
    return pid, (int(dice[0]), int(dice[1]))


if __name__ == "__main__":
    sys.exit(main())
