"""Watchers choose how often they are mailed (issue 33): ``watchers.every_move`` is set by
``watch CODE every move`` (a mail after each move); without it a watcher gets one mail per game,
at its end.  Who watches already signed up for a mail after each move and keeps it.

Revision ID: 0022
Revises: 0021
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"


def upgrade() -> None:
    with op.batch_alter_table("watchers") as batch:
        batch.add_column(sa.Column("every_move", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute(sa.text("UPDATE watchers SET every_move = true"))
