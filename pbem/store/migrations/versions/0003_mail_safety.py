"""Hostile mail: interrupted attempts (poison mails), given-up answers, held account commands.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    tables = set(sa.inspect(op.get_bind()).get_table_names())
    if "inbound_attempts" not in tables:
        op.create_table(
            "inbound_attempts",
            sa.Column("message_id", sa.Text(), primary_key=True),
            sa.Column("attempts", sa.Integer(), nullable=False),
            sa.Column("started_at", _TIME, nullable=False),
        )
    if "outbound_given_up" not in tables:
        op.create_table(
            "outbound_given_up",
            sa.Column("outbound_id", sa.Integer(), sa.ForeignKey("outbound_mail.id"), primary_key=True),
            sa.Column("given_up_at", _TIME, nullable=False),
            sa.Column("reason", sa.Text(), nullable=False),
        )
    if "account_confirmations" not in tables:
        op.create_table(
            "account_confirmations",
            sa.Column("token", sa.Text(), primary_key=True),
            sa.Column("player_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=False, index=True),
            sa.Column("commands", sa.JSON(), nullable=False),
            sa.Column("created_at", _TIME, nullable=False),
            sa.Column("confirmed_at", _TIME, nullable=True),
        )
