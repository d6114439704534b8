"""Honest names (issue 21, item 2): the rule itself, pure."""

from __future__ import annotations

import pytest

from pbem.names import holds_address, passes_for, skeleton


@pytest.mark.parametrize("name", ["ben@example.org", "ben\uff20example.org", "ben\ufe6bexample.org",
                                  "ben (at) example.org", "ben[at]example.org", "ben <at> example"])
def test_a_name_that_holds_an_address_or_a_look_alike(name: str) -> None:
    assert holds_address(name)


@pytest.mark.parametrize("name", ["Ben", "Anna Schmidt", "Jürgen Müller", "Zoë at home", "O'Brien", "李雷"])
def test_a_plain_name_holds_no_address(name: str) -> None:
    assert not holds_address(name)


@pytest.mark.parametrize("name", ["Ben", "BEN", "B e n", "\u0412\u0435n", "Ｂｅｎ", "Be\u200bn", "ben."])
def test_look_alikes_of_a_name_have_its_skeleton(name: str) -> None:
    assert skeleton(name) == "ben"


def test_a_name_passes_for_another_only_when_it_looks_like_it() -> None:
    taken = {skeleton("Backgammon by Mail"), skeleton("Ben")}
    assert passes_for("backgammon BY mail", taken) and passes_for("Веn", taken)
    assert not passes_for("Benjamin", taken) and not passes_for("Anna", taken)
    assert passes_for("...", taken), "a name of nothing but punctuation shows nothing: not taken"


@pytest.mark.parametrize("name", ["Backgammon by MaiI", "Backgarnmon by Mail", "Backgammon by Mai1", "BACKGAMM0N BY MAIL",
                                  "Backgammon by Mail", "Backgammon by Ma|l"])
def test_ascii_look_alikes_of_the_service_pass_for_it(name: str) -> None:
    """Issue 34, item 3: a capital i, "rn", a one or a zero read as the letters they imitate."""
    assert passes_for(name, {skeleton("Backgammon by Mail")})


@pytest.mark.parametrize(("name", "imitated"), [("vvilma", "Wilma"), ("AssIstant", "Assistant"),
                                                ("Ol1ver", "Oliver"), ("b at example dot org", "b@example.org"),
                                                ("b [at] example (dot) org", "b@example.org")])
def test_ascii_look_alikes_of_a_name_or_an_address_have_its_skeleton(name: str, imitated: str) -> None:
    assert skeleton(name) == skeleton(imitated)


@pytest.mark.parametrize("name", ["b at example dot org", "anna at mail dot example dot com"])
def test_an_address_spelled_out_with_at_and_dot_is_an_address(name: str) -> None:
    assert holds_address(name)


@pytest.mark.parametrize("name", ["Ilona", "Carl Olsen", "Marni", "Pat at home", "Dot Cotton", "William"])
def test_ordinary_names_pass_for_nobody_they_do_not_imitate(name: str) -> None:
    taken = {skeleton(text) for text in ("Backgammon by Mail", "backgammon@example.org", "backgammon", "Assistant",
                                         "Assistent", "Anna", "anna@example.org", "Ben", "ben@example.org")}
    assert not passes_for(name, taken) and not holds_address(name)
