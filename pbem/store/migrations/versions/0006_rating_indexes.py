"""Ratings at scale: an index per rating on (rating, experience), so that the ``ratings`` answer
reads the best players in order and counts places from the index, never the whole players
table.

Revision ID: 0006
Revises: 0005
"""

from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_index("ix_players_rating_match", "players", ["rating_match", "experience_match"])
    op.create_index("ix_players_rating_casual", "players", ["rating_casual", "experience_casual"])
