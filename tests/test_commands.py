"""Commands in a mail (SPEC §3): every keyword in both languages, options, errors and notes."""

from datetime import timedelta

import pytest
from hypothesis import given, strategies as st

from pbem.commands import (
    Accept,
    Beaver,
    Board,
    CommandError,
    Decline,
    Double,
    Drop,
    Format,
    GameOptions,
    Games,
    Help,
    Invite,
    Language,
    Move,
    Note,
    PlayAssistant,
    Ratings,
    Rematch,
    Remis,
    Resign,
    Roll,
    SetNumbering,
    Stop,
    Take,
    Vacation,
    parse_commands,
)
from pbem.rules.notation import Numbering
from pbem import commands

SIMPLE = {
    "accept": Accept(), "annehmen": Accept(),
    "decline": Decline(), "ablehnen": Decline(),
    "roll": Roll(), "würfeln": Roll(), "wuerfeln": Roll(),
    "double": Double(), "doppeln": Double(),
    "take": Take(),
    "drop": Drop(), "pass": Drop(),
    "beaver": Beaver(), "biber": Beaver(),
    "$quit": Resign(), "$aufgeben": Resign(),
    "$remis": Remis(),
    "rematch": Rematch(), "revanche": Rematch(),
    "board": Board(), "brett": Board(),
    "games": Games(), "spiele": Games(),
    "ratings": Ratings(), "rangliste": Ratings(),
    "stop": Stop(), "stopp": Stop(),
    "help": Help(), "hilfe": Help(),
}


@pytest.mark.parametrize(("word", "command"), SIMPLE.items())
def test_every_command_and_alias_in_any_case(word: str, command: object) -> None:
    for spelling in (word, word.upper(), word.capitalize(), f"  {word}!  ", f"{word}."):
        assert parse_commands(spelling) == [command]


def test_umlauts_written_decomposed_are_read_too() -> None:
    assert parse_commands("wu\u0308rfeln") == [Roll()]
    assert parse_commands("Za\u0308hlung feste") == [SetNumbering(Numbering.FIXED)]


@pytest.mark.parametrize(
    "line", ["Take care!", "Games like this are fun", "Double trouble for you", "Help me, please"]
)
def test_a_keyword_inside_a_sentence_is_a_note(line: str) -> None:
    assert parse_commands(line) == [Note(line)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("lang de", Language("de")),
        ("LANG EN", Language("en")),
        ("Sprache Deutsch", Language("de")),
        ("sprache englisch", Language("en")),
        ("numbering own", SetNumbering(Numbering.OWN)),
        ("numbering fixed", SetNumbering(Numbering.FIXED)),
        ("Zählung eigene", SetNumbering(Numbering.OWN)),
        ("zaehlung feste", SetNumbering(Numbering.FIXED)),
        ("zählung fixed", SetNumbering(Numbering.FIXED)),
        ("vacation 7", Vacation(7)),
        ("Urlaub 14", Vacation(14)),
        ("urlaub 10 Tage", Vacation(10)),
        ("vacation 1 day", Vacation(1)),
    ],
)
def test_commands_with_an_argument(line: str, expected: object) -> None:
    assert parse_commands(line) == [expected]


@pytest.mark.parametrize(
    ("line", "code", "details"),
    [
        ("lang fr", "language", "fr"),
        ("sprache", "language", ""),
        ("numbering upside", "numbering", "upside"),
        ("zählung", "numbering", ""),
        ("vacation abc", "vacation-days", "abc"),
        ("urlaub 0", "vacation-days", "0"),
        ("urlaub 366", "vacation-days", "366"),
        ("vacation", "vacation-days", ""),
        ("$resign", "unknown-command", "$resign"),
        ("invite", "invite-address", ""),
        ("einladen anna", "invite-address", "anna"),
        ("invite anna@localhost", "invite-address", "anna@localhost"),
    ],
)
def test_a_command_with_a_wrong_argument_is_an_error(line: str, code: str, details: str) -> None:
    assert parse_commands(line) == [CommandError(line, code, details)]


def test_longer_lines_starting_with_an_argument_keyword_are_notes() -> None:
    text = "Lang ist es her\nUrlaub war schön, danke"
    assert parse_commands(text) == [Note(text)]


def test_invite_with_defaults() -> None:
    assert parse_commands("invite Anna@Example.org") == [Invite("anna@example.org", GameOptions())]
    assert parse_commands("Einladen <anna@example.org>") == [Invite("anna@example.org")]
    assert parse_commands("invite mailto:anna@example.org") == [Invite("anna@example.org")]


def test_outlooks_repeated_mailto_link_is_skipped() -> None:
    line = "invite anna@example.org <mailto:anna@example.org> match 3"
    assert parse_commands(line) == [Invite("anna@example.org", GameOptions(Format.MATCH, length=3))]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("single", GameOptions()),
        ("einzel", GameOptions()),
        ("match 5", GameOptions(Format.MATCH, length=5)),
        ("Partie 25", GameOptions(Format.MATCH, length=25)),
        ("games 3", GameOptions(Format.GAMES, length=3)),
        ("spiele 99", GameOptions(Format.GAMES, length=99)),
        ("money", GameOptions(Format.MONEY, length=None)),
        ("geld einsatz 5 biber jacoby", GameOptions(Format.MONEY, None, 5, beaver=True, jacoby=True)),
        ("beaver money stake 2", GameOptions(Format.MONEY, None, 2, beaver=True)),
        ("match 7 clock 2d/10d", GameOptions(Format.MATCH, 7, move_clock=timedelta(days=2), time_bank=timedelta(days=10))),
        ("uhr 3t/14t", GameOptions(move_clock=timedelta(days=3), time_bank=timedelta(days=14))),
        ("clock 12h", GameOptions(move_clock=timedelta(hours=12))),
        ("clock 36h/0d", GameOptions(move_clock=timedelta(hours=36), time_bank=timedelta(0))),
        ("unrated", GameOptions(rated=False)),
        ("ungewertet sprache de", GameOptions(rated=False, language="de")),
        ("lang en, match 3, unrated", GameOptions(Format.MATCH, 3, rated=False, language="en")),
    ],
)
def test_invitation_options(options: str, expected: GameOptions) -> None:
    assert parse_commands(f"invite anna@example.org {options}") == [Invite("anna@example.org", expected)]
    assert parse_commands(f"play assistant {options}") == [PlayAssistant(expected)]
    assert parse_commands(f"Gegen Assistent {options}") == [PlayAssistant(expected)]


@pytest.mark.parametrize(
    ("options", "code", "details"),
    [
        ("match", "match-length", ""),
        ("match five", "match-length", "five"),
        ("match 0", "match-length", "0"),
        ("partie 26", "match-length", "26"),
        ("games", "games-count", ""),
        ("spiele 100", "games-count", "100"),
        ("match 5 money", "format-conflict", "money"),
        ("single games 3", "format-conflict", "games"),
        ("clock", "clock", ""),
        ("clock soon", "clock", "soon"),
        ("clock 0d/14d", "clock", "0d/14d"),
        ("clock 31d", "clock", "31d"),
        ("uhr 3d/91d", "clock", "3d/91d"),
        ("clock 3w", "clock", "3w"),
        ("money stake", "stake", ""),
        ("money einsatz 0", "stake", "0"),
        ("money stake 1001", "stake", "1001"),
        ("beaver", "money-only", "beaver"),
        ("match 5 jacoby", "money-only", "jacoby"),
        ("einsatz 3", "money-only", "einsatz"),
        ("lang fr", "language", "fr"),
        ("sprache", "language", ""),
        ("crawford", "unknown-option", "crawford"),
    ],
)
def test_invalid_options_are_errors(options: str, code: str, details: str) -> None:
    for line in (f"invite anna@example.org {options}", f"play assistant {options}"):
        # play assistant's first word may also be a level: an unknown one says so
        first = line.startswith("play") and code == "unknown-option" and options.split()[0] == details
        assert parse_commands(line) == [CommandError(line, "assistant-level" if first else code, details)]


@pytest.mark.parametrize("line", ["24/18 13/9", "8/5* 6/5", "-22 13-9", "bar/22", "6/off", "13/7(2)", "Zug: 24 18 13 9"])
def test_move_lines_are_passed_on_as_written(line: str) -> None:
    assert parse_commands(line) == [Move(line)]


def test_a_mixed_mail_keeps_its_order_and_merges_note_lines() -> None:
    text = (
        "Hi Anna,\n"
        "\n"
        "what a game!\n"
        "24/18 13/9\n"
        "\n\n"
        "DOUBLE\n"
        "lang fr\n"
        "I'd have played 24/18 myself.\n"
        "See you soon\n"
        "\n"
        "Bob"
    )
    assert parse_commands(text) == [
        Note("Hi Anna,\n\nwhat a game!"),
        Move("24/18 13/9"),
        Double(),
        CommandError("lang fr", "language", "fr"),
        Note("I'd have played 24/18 myself.\nSee you soon\n\nBob"),
    ]


def test_the_subject_counts_only_when_the_body_is_empty() -> None:
    assert parse_commands("", "roll") == [Roll()]
    assert parse_commands(" \n\n", "24/18 13/9") == [Move("24/18 13/9")]
    assert parse_commands("", "invite anna@example.org match 3") == [
        Invite("anna@example.org", GameOptions(Format.MATCH, 3))
    ]
    assert parse_commands("", "lang fr") == [CommandError("lang fr", "language", "fr")]
    assert parse_commands("double", "roll") == [Double()]


def test_a_subject_that_is_no_command_is_not_a_note() -> None:
    assert parse_commands("", "Your move: Anna vs Bob") == []
    assert parse_commands("", "") == []
    assert parse_commands("") == []


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30), max_size=8))
def test_every_non_blank_line_is_one_command_or_one_note_line(lines: list[str]) -> None:
    text = "\n".join(lines)
    commands = parse_commands(text)
    non_blank = [line for line in text.splitlines() if line.strip()]
    notes = [command.text for command in commands if isinstance(command, Note)]
    note_lines = [line for note in notes for line in note.split("\n") if line]
    assert len(note_lines) + len(commands) - len(notes) == len(non_blank)
    assert all(note == note.strip() and note for note in notes)


@pytest.mark.parametrize("line, expected", [
    ("tournament new Autumn knockout 8 match 3", commands.TournamentNew("Autumn", 8, 3)),
    ("tournament new Autumn Cup knockout 8 match 3", commands.TournamentNew("Autumn Cup", 8, 3)),
    ("Turnier neu Herbst Pokal 2026 ko 8 partie 3.", commands.TournamentNew("Herbst Pokal 2026", 8, 3)),
    ("tournament new The Thursday Club match 5 knockout 16 unrated",
     commands.TournamentNew("The Thursday Club", 16, 5, rated=False)),
    ("Turnier neu Herbst ko 16 partie 5 uhr 2d/7d ungewertet",
     commands.TournamentNew("Herbst", 16, 5, timedelta(days=2), timedelta(days=7), rated=False)),
    ("tournament new Spring match 1 knockout 4 unrated", commands.TournamentNew("Spring", 4, 1, rated=False)),
    # A name that holds a term's word: it ends at the first term after which the terms read whole.
    ("tournament new Cup of the Match Club knockout 4 match 1", commands.TournamentNew("Cup of the Match Club", 4, 1)),
    ("tournament new Match Play Open knockout 8 match 3", commands.TournamentNew("Match Play Open", 8, 3)),
    ("Turnier neu Partie Pokal ko 4 partie 1", commands.TournamentNew("Partie Pokal", 4, 1)),
    ("tournament join abc234", commands.TournamentAction("join", "abc234")),
    ("turnier teilnehmen ABC234", commands.TournamentAction("join", "abc234")),
    ("turnier verlassen abc234", commands.TournamentAction("leave", "abc234")),
    ("tournament start abc234", commands.TournamentAction("start", "abc234")),
    ("turnier zurückziehen abc234", commands.TournamentAction("withdraw", "abc234")),
    ("tournament invite abc234 anna@example.org <ben@example.org>",
     commands.TournamentInvite("abc234", ("anna@example.org", "ben@example.org"))),
    ("tournament abc234", commands.TournamentShow("abc234")),
    ("turnier abc234", commands.TournamentShow("abc234")),
])
def test_tournament_commands(line, expected):
    assert commands.parse_commands(line) == [expected]


@pytest.mark.parametrize("line, code, details", [
    ("tournament new Autumn knockout 6 match 3", "tournament-size", "6"),
    ("tournament new a@b knockout 8 match 3", "tournament-name", "a@b"),
    ("tournament new", "tournament-name", ""),
    ("tournament new Autumn knockout 8", "tournament-terms", "match"),
    ("tournament new Autumn Cup", "tournament-terms", "knockout"),
    ("tournament new Autumn knockout 8 match 99", "tournament-match-length", "99"),
    ("tournament new Autumn knockout 8 match 3 blitz", "tournament-option", "blitz"),
    ("tournament new Autumn Cup knockout 8 match 3 beaver", "tournament-option", "beaver"),
    ("tournament new Autumn <b>Cup</b> knockout 8 match 3", "tournament-name", "Autumn <b>Cup</b>"),
    ("tournament new " + "Autumn " * 5 + "knockout 8 match 3", "tournament-name", ("Autumn " * 5).strip()),
    ("turnier neu ko 8 partie 3", "tournament-name", ""),
    ("tournament new Cup of the Match Club knockout 5 match 1", "tournament-match-length", "club"),
    ("tournament jion abc234", "tournament", "jion abc234"),
    ("tournament join abc", "tournament", "join abc"),
    ("tournament invite abc234 anna", "tournament-address", "anna"),
    ("tournament invite abc234 " + " ".join(f"p{n}@example.org" for n in range(11)), "tournament-invites", "10"),
])
def test_tournament_command_errors(line, code, details):
    (error,) = commands.parse_commands(line)
    assert isinstance(error, commands.CommandError) and (error.code, error.details) == (code, details)


@pytest.mark.parametrize(("line", "level", "options"), [
    ("play assistant beginner", "beginner", GameOptions()),
    ("play assistant Intermediate match 3", "intermediate", GameOptions(Format.MATCH, 3)),
    ("play assistant advanced money", "advanced", GameOptions(Format.MONEY, length=None)),
    ("play assistant expert", "expert", GameOptions()),
    ("play assistant world class match 5", "world_class", GameOptions(Format.MATCH, 5)),
    ("play assistant world-class", "world_class", GameOptions()),
    ("gegen Assistent Anfänger partie 3", "beginner", GameOptions(Format.MATCH, 3)),
    ("gegen assistent anfaenger", "beginner", GameOptions()),
    ("gegen assistent Mittelstufe", "intermediate", GameOptions()),
    ("gegen assistent fortgeschritten", "advanced", GameOptions()),
    ("gegen assistent Experte", "expert", GameOptions()),
    ("gegen assistent weltklasse spiele 3", "world_class", GameOptions(Format.GAMES, 3)),
    ("gegen assistent beginner", "beginner", GameOptions()),  # the English names in German mails too
    ("gegen assistent world class", "world_class", GameOptions()),
    ("play assistant match 3", None, GameOptions(Format.MATCH, 3)),
    # A level written after the format, as players write it too
    ("play assistant match 3 expert", "expert", GameOptions(Format.MATCH, 3)),
    ("play assistant match 3 world class", "world_class", GameOptions(Format.MATCH, 3)),
    ("gegen assistent partie 3 anfänger", "beginner", GameOptions(Format.MATCH, 3)),
])
def test_play_assistant_at_a_level(line: str, level: str | None, options: GameOptions) -> None:
    assert parse_commands(line) == [PlayAssistant(options, level)]


@pytest.mark.parametrize(("line", "word"), [("play assistant hard", "hard"), ("gegen assistent schwer partie 3", "schwer"),
                                            ("play assistant world", "world")])
def test_an_unknown_level_is_an_error_naming_the_word(line: str, word: str) -> None:
    assert parse_commands(line) == [CommandError(line, "assistant-level", word)]


@pytest.mark.parametrize("line, about_no_game", [
    ("tournament new Autumn Cup knockout 6 match 3", True),
    ("Turnier neu Herbst ko 8", True),
    ("ladder join Thursday_Club", True),
    ("watch k3mq7zt2x1", True),
    ("zuschauen k3mq7zt2xa bei jedem Zug", True),
    ("invite anna match 99", True),
    ("play assistant blitz", True),
    ("watchers maybe", False),
    ("resign twice", False),
    ("24/18 13/9", False),
])
def test_a_command_about_no_game_is_told_apart(line, about_no_game):
    """Its refusal goes into a mail of its own, without the guide to moves (issue 33)."""
    assert commands.about_no_game(line) is about_no_game
