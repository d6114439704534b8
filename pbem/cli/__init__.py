"""The ``pbem`` command: one subcommand per operator task (SPEC §5), every one of them here.

Each subcommand's module loads only when it runs.  All that read the configuration take the
same ``--config`` option, and an unusable config file or database ends any of them the same
way: one line naming the command and the problem, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pbem.cli.loading import EXIT_USAGE, UsageError
from pbem.cli.rules import RULES_LEGAL_HELP, rules_legal
from pbem.store.revision import HEAD_REVISION


MATCH_STATES = ("invited", "running", "finished", "declined")
"""``pbem.store.game_records.MatchStatus``, spelt out so that this module loads no database code."""
GAMES_PAGE = 50
"""How many matches ``pbem games`` lists unless ``--limit`` says otherwise."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``pbem`` command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except UsageError as problem:
        print(f"pbem {args.command}: {problem}", file=sys.stderr)
        return EXIT_USAGE


def _positive(text: str) -> int:
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a positive number: {text}")
    return number


def _runs(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """The command's function, imported when the command runs (so `pbem send` loads no IMAP)."""
    return lambda args: int(getattr(import_module(f"pbem.cli.{module}"), function)(args))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pbem", description="Play-by-email backgammon.")
    parser.add_argument("--version", action="version", version=f"pbem {_version()}")
    config = argparse.ArgumentParser(add_help=False)
    config.add_argument("--config", type=Path, help="TOML config file (default: the embedded default)")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    def command(name: str, module: str, function: str, text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=text, parents=[config])
        sub.set_defaults(run=_runs(module, function), command=name)
        return sub

    serve = command("serve", "serve", "serve", "run the mail daemon until SIGTERM/SIGINT")
    serve.add_argument("--verbose", action="store_true",
                       help="log the libraries' INFO lines too (Alembic, the scheduler, IMAP, the web server)")
    send = command("send", "local", "send", "drop a mail into the local inbox, as a mail client would")
    send.add_argument("--from", dest="sender", required=True, metavar="ADDRESS", help="the player's address")
    send.add_argument("--subject", help="the subject (for a reply: instead of 'Re: …')")
    send.add_argument("--reply-to", type=Path, metavar="FILE", help="a mail from the outbox to answer")
    send.add_argument("--wait", action="store_true",
                      help="wait until pbem serve has applied the mail, and print its answers' files")
    send.add_argument("--example", action="store_true",
                      help="answer with the move the --reply-to mail shows as the form of a move")
    send.add_argument("text", metavar="TEXT", nargs="?", help="the mail's text; - reads standard input")
    outbox = command("outbox", "local", "outbox", "list the mails the service sent, newest last")
    outbox.add_argument("--to", metavar="ADDRESS", help="only mails to this address")
    outbox.add_argument("--last", action="store_true", help="print the latest mail instead of the list")
    outbox.add_argument("--last-file", action="store_true",
                        help="print only the file of the latest mail (for --reply-to)")
    command("check", "check", "check",
            "try the [imap] and [smtp] settings (connect, TLS, log in, open the mailbox; send nothing) "
            "and open the database (its schema revision)")
    requeue = command("requeue", "requeue", "requeue", "put shunted mails (see pbem status) back into the inbox")
    which = requeue.add_mutually_exclusive_group(required=True)
    which.add_argument("message_id", nargs="?", metavar="MESSAGE-ID", help="the shunted mail's Message-ID")
    which.add_argument("--all", action="store_true", help="every shunted mail")
    export = command("export", "reports", "report", "write the .mat file of a game or match")
    export.add_argument("game", type=int, metavar="GAME", help="the match id (see pbem games)")
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here instead of to stdout")
    for name, text in (
        ("status", "mail that needs the operator: failing or given-up answers, shunted mails, domains "
                   "refusing the service's mail; exit 1 if any"),
        ("games", "list games and matches, newest first, a page at a time: players, format, score, status, "
                  "whose turn"),
        ("players", "list every player: ratings, experience, vacation days this year"),
        ("tournaments", "list the knockout tournaments: code, name, status, players, the round under way and "
                        "its open matches, the champion"),
    ):
        command(name, "reports", "report", text)
    for name in ("export", "status", "games", "players", "tournaments"):
        commands.choices[name].set_defaults(report=name)
    games = commands.choices["games"]
    games.add_argument("--status", choices=MATCH_STATES, help="only matches in this state")
    games.add_argument("--player", metavar="ADDRESS", help="only the matches of this player")
    games.add_argument("--limit", type=_positive, default=GAMES_PAGE, metavar="N",
                       help=f"list at most N matches (default {GAMES_PAGE}), newest first")
    games.add_argument("--before", type=int, metavar="ID",
                       help="only matches with a lower id: the next page, which the last line names")

    verify = command("verify-dice", "verify_dice", "verify_dice",
                     "check that every roll of a game came from its revealed seed, and the seed from its "
                     "commitment")
    verify.add_argument("files", nargs="*", type=Path, metavar="FILE",
                        help="saved mails of the game (.eml) and/or its .mat file")
    verify.add_argument("--seed", action="append", metavar="HEX",
                        help="a game's dice seed (64 hex digits); once per game, in the order of the games")
    verify.add_argument("--commitment", action="append", metavar="HEX",
                        help="a dice commitment from the first mail of a game")
    verify.add_argument("--match", type=int, metavar="ID",
                        help="the match's .mat and revealed seeds from the database (see pbem games)")

    backup = command("backup", "backup", "backup",
                     "copy the database while the daemon runs (SQLite; on PostgreSQL: how pg_dump does it)")
    backup.add_argument("file", nargs="?", type=Path, metavar="FILE",
                        help="a new file (default: DATA_DIR/backups/pbem-REVISION-TIME.db)")
    restore = command("restore", "backup", "restore",
                      "put a backup in place of the database, the daemon stopped; mails of the local inbox "
                      "applied since are applied again")
    restore.add_argument("file", type=Path, metavar="FILE", help="a file pbem backup wrote")

    database = commands.add_parser("db", help="the database's schema: status, upgrade")
    database_commands = database.add_subparsers(title="db commands", metavar="COMMAND", required=True)
    for name, text in (("status", "the schema revision of the database and of this program; exit 1 if out of date"),
                       ("upgrade", "bring the database to this program's schema, keeping every row")):
        sub = database_commands.add_parser(name, help=text, parents=[config])
        sub.set_defaults(run=_runs("db", name), command=f"db {name}")
    database_commands.choices["upgrade"].add_argument(
        "--no-backup", action="store_true",
        help="do not first copy an SQLite database to DATA_DIR/backups (it does by default)")

    credit = commands.add_parser("credits", help="play-money accounts: grant credits, show a balance")
    credit_commands = credit.add_subparsers(title="credits commands", metavar="COMMAND", required=True)
    grant = credit_commands.add_parser("grant", parents=[config],
                                       help="add credits to a player's account (a ledger movement)")
    grant.add_argument("address", metavar="ADDRESS", help="the player's address")
    grant.add_argument("amount", metavar="AMOUNT", help="credits, like 10 or 2.50")
    grant.add_argument("--reason", required=True, metavar="TEXT", help="why (kept in the ledger)")
    show = credit_commands.add_parser("show", parents=[config], help="print ADDRESS BALANCE")
    show.add_argument("address", metavar="ADDRESS", help="the player's address")
    for name, sub in (("grant", grant), ("show", show)):
        sub.set_defaults(run=_runs("credits", name), command=f"credits {name}")
    ledger = commands.add_parser("ledger", help="the credits ledger: check")
    ledger_commands = ledger.add_subparsers(title="ledger commands", metavar="COMMAND", required=True)
    ledger_check = ledger_commands.add_parser(
        "check", parents=[config],
        help="verify every movement sums to zero and every balance equals its entries; exit 1 if not")
    ledger_check.set_defaults(run=_runs("credits", "check"), command="ledger check")

    rules = commands.add_parser("rules", help="query the rules core")
    rules_commands = rules.add_subparsers(title="rules commands", metavar="COMMAND", required=True)
    legal = rules_commands.add_parser(
        "legal", help="list the legal resulting positions for Position IDs and rolls read on stdin",
        description=RULES_LEGAL_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    legal.set_defaults(run=lambda args: rules_legal(sys.stdin, sys.stdout, sys.stderr), command="rules legal")
    _describe(parser)
    return parser


def _version() -> str:
    """The installed package's version (setuptools-scm made it from git: the release tag, or the
    commits since it) and the schema revision this program reads and writes."""
    try:
        number = version("pbem")
    except PackageNotFoundError:  # run from a source tree that was never installed
        number = "(not installed)"
    return f"{number}, schema revision {HEAD_REVISION}"


def subcommand_parsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every subcommand's parser below ``parser``, named as typed (``"db status"``), depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for deeper, subsub in subcommand_parsers(sub):
                    yield f"{name} {deeper}", subsub


def _describe(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand's ``--help`` page a description: its line in the list of commands,
    as a sentence, unless it has a longer one of its own."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for listed in action._choices_actions:
                sub = action.choices[listed.dest]
                if sub.description is None and listed.help:
                    sub.description = listed.help[0].upper() + listed.help[1:] + "."
                _describe(sub)
