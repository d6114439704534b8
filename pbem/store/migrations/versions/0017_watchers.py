"""Watchers: each match's watch code and who of its players allows watching
(``match_watch``), and the addresses that watch it (``watchers``).

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"


def upgrade() -> None:
    op.create_table(
        "match_watch",
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("allowed_0", sa.Boolean(), nullable=False),
        sa.Column("allowed_1", sa.Boolean(), nullable=False),
        sa.Column("waiting", sa.JSON(), nullable=False),
    )
    op.create_index("ix_match_watch_code", "match_watch", ["code"], unique=True)
    op.create_table(
        "watchers",
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("players.id"), primary_key=True),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_message_id", sa.Text(), nullable=True),
    )
    op.create_index("ix_watchers_player_id", "watchers", ["player_id"])
