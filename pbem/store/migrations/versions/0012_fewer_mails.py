"""Mails that fit correspondence play: ``copies`` off by default (a mail only when the player must
act, or something is for them alone), ``automove`` (a forced play is played for the player, on
by default), ``greedy`` (bear off with every die when nothing else matters, off by default), and
each seat's ``news``: what happened while it got no mail, told in its next one.

Every player with ``copies`` on gets it off: it was the default, and who chose it cannot be told
from who never chose (``copies on`` brings the copies back).

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.alter_column("copies", existing_type=sa.Boolean(), existing_nullable=False,
                           server_default=sa.false())
        batch.add_column(sa.Column("automove", sa.Boolean(), nullable=False, server_default=sa.true()))
        batch.add_column(sa.Column("greedy", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute(sa.text("UPDATE players SET copies = false"))
    with op.batch_alter_table("seats") as batch:
        batch.add_column(sa.Column("news", sa.JSON(), nullable=False, server_default="[]"))
