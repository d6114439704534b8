"""Fixtures the service tests share: a post office with loaded dice, Anna and Ben, and a game
between them at its first turns."""

from __future__ import annotations

import pytest
from post_office import LoadedDice, Player, PostOffice, acts, invite_and_accept


@pytest.fixture
def office(config) -> PostOffice:
    """The game service on the local Maildirs; a test module may define its own."""
    return PostOffice(config, LoadedDice(seed=1))


@pytest.fixture
def anna(office) -> Player:
    return Player(office, "anna@example.org", "Anna")


@pytest.fixture
def ben(office) -> Player:
    return Player(office, "ben@example.org", "Ben")


@pytest.fixture
def accepted_game(config) -> tuple[PostOffice, Player, Player]:
    """Anna invited Ben, Ben accepted, and Anna won the opening roll with 3-1: her move."""
    office = PostOffice(config, LoadedDice(seed=1, script=[(3, 1)]))
    anna = Player(office, "anna@example.org", "Anna")
    ben = Player(office, "ben@example.org", "Ben")
    invite_and_accept(office, anna, ben, "invite ben@example.org")
    return office, anna, ben


@pytest.fixture
def opened_game(accepted_game) -> tuple[PostOffice, Player, Player]:
    """Anna opened with 3-1 and played 8/5 6/5; Ben is asked to roll or double."""
    office, anna, ben = accepted_game
    acts(office, anna, "8/5 6/5")
    return office, anna, ben
