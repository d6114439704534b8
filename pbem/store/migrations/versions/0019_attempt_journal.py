"""Mails being applied are written down in a file journal of the data directory
(``pbem.store.attempts``), not in the database: the table ``inbound_attempts`` goes.  Its rows
(mails interrupted by a crash) are not carried over: their count of deaths starts again.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    if "inbound_attempts" in sa.inspect(op.get_bind()).get_table_names():
        op.drop_table("inbound_attempts")


def downgrade() -> None:
    op.create_table(
        "inbound_attempts",
        sa.Column("message_id", sa.Text(), primary_key=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    )
