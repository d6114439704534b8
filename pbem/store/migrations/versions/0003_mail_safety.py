"""Hostile mail: interrupted attempts (poison mails), given-up answers, held account commands;
and the durable jobs of the end-of-game reviews.

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
    if "review_jobs" not in tables:
        op.create_table(
            "review_jobs",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id"), nullable=False, index=True),
            sa.Column("game_number", sa.Integer(), nullable=False),
            sa.Column("game", sa.JSON(), nullable=False),
            sa.Column("totals", sa.Boolean(), nullable=False),
            sa.Column("created_at", _TIME, nullable=False),
            sa.Column("claimed_at", _TIME, nullable=True),
            sa.Column("attempts", sa.Integer(), nullable=False),
            sa.Column("result", sa.JSON(), nullable=True),
            sa.Column("done_at", _TIME, nullable=True, index=True),
            sa.Column("error", sa.Text(), nullable=False),
        )
