"""Ladders: the ``ladders`` table (terms, standing, latest results) and ``matches.ladder_id``,
the ladder a match is a challenge of.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    op.create_table(
        "ladders",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("match_length", sa.Integer(), nullable=False),
        sa.Column("reach", sa.Integer(), nullable=False),
        sa.Column("answer_days", sa.Integer(), nullable=False),
        sa.Column("standing", sa.JSON(), nullable=False),
        sa.Column("results", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.Integer(), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_ladders_name", "ladders", ["name"], unique=True)
    op.create_index("ix_ladders_code", "ladders", ["code"], unique=True)
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("ladder_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_matches_ladder_id", "ladders", ["ladder_id"], ["id"])
        batch.create_index("ix_matches_ladder_id", ["ladder_id"])
