"""The Assistant's levels (issue 38): a match against the Assistant keeps the level it plays at
(``matches.assistant_level``: ``beginner`` … ``world_class``); older matches have none and are
played at the strongest, as they were.

Revision ID: 0024
Revises: 0023
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("assistant_level", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("assistant_level")
