"""Schema 2, the last before migrations: players, matches, finished games, every mail in and out.

A database written by pbem before it had migrations records version 2 in its ``schema_version``
table; ``pbem db upgrade`` stamps it with this revision and goes on from here.  A new database
is created whole from the models and stamped with the newest revision, so this one never runs.

Revision ID: 0002
Revises:
"""

revision = "0002"
down_revision = None


def upgrade() -> None:
    """Nothing to do: the tables of schema 2 are there already."""
