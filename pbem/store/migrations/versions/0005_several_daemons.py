"""Several daemons and bounded storage: a version column on matches and players (a change that
another process made meanwhile is detected, never overwritten), and the match a mail belongs to
(its raw text is pruned, and a sent answer deleted, once the match has been finished for
``retention_days``).

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    for table in ("matches", "players"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("version", sa.Integer(), nullable=False, server_default="1"))
    for table in ("inbound_mail", "outbound_mail"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("match_id", sa.Integer(), nullable=True))
        op.create_index(f"ix_{table}_match_id", table, ["match_id"])
    with op.batch_alter_table("inbound_mail") as batch:
        batch.add_column(sa.Column("pruned_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_inbound_mail_pruned_at", "inbound_mail", ["pruned_at"])
