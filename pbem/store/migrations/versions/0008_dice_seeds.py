"""Provably fair dice: each game's secret dice seed and the number of rolls taken from it, on the
match (the game in progress), and the seed kept with every finished game.

Games running at the upgrade keep rolling from the OS generator (their seed is NULL): they
never sent a commitment, so a seed revealed at their end could not prove their dice.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("dice_seed", sa.Text(), nullable=True))
        batch.add_column(sa.Column("dice_rolls", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("finished_games") as batch:
        batch.add_column(sa.Column("dice_seed", sa.Text(), nullable=True))
