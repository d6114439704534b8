"""Two settings of a player that save round trips: ``autoroll`` (the service rolls at once
instead of asking "roll or double") and ``copies`` (a copy of one's own accepted move).

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("autoroll", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("copies", sa.Boolean(), nullable=False, server_default=sa.true()))
