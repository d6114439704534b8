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
