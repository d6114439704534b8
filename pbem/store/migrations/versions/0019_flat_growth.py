"""Growth stays flat (issue 23): the ``ratings`` answer sums kept counts of rated players per
band of ratings (``rating_counts``, counted here from the players) instead of counting every
player.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

from pbem.store.game_records import count_rating_bands

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    op.create_table(
        "rating_counts",
        sa.Column("kind", sa.Text(), primary_key=True),
        sa.Column("band", sa.Integer(), primary_key=True),
        sa.Column("players", sa.Integer(), nullable=False),
    )
    count_rating_bands(op.get_bind())

