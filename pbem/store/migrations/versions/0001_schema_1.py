"""Schema 1, the first releases' (before ratings, vacations and clocks).

Those releases recorded version 1 in their ``schema_version`` table and had no migrations;
``pbem db upgrade`` stamps such a database with this revision, and revision 0002 brings it to
schema 2.

Revision ID: 0001
Revises:
"""

revision = "0001"
down_revision = None


def upgrade() -> None:
    """Nothing to do: this is where the first releases' databases start."""
