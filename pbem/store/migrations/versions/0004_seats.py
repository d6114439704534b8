"""Seats as rows: what belonged to seat 0 and seat 1 of a match (player, token, thread, notes,
time bank) moves from per-seat columns of ``matches`` into a ``seats`` table, keeping every value.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"

_PER_SEAT = ("player{n}_id", "token{n}", "thread{n}", "notes{n}", "bank{n}")


def upgrade() -> None:
    op.create_table(
        "seats",
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("number", sa.Integer(), primary_key=True),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("token", sa.Text(), nullable=False),
        sa.Column("thread", sa.JSON(), nullable=False),
        sa.Column("notes", sa.JSON(), nullable=False),
        sa.Column("bank", sa.Float(), nullable=True),
    )
    op.create_index("ix_seats_player_id", "seats", ["player_id"])
    op.create_index("ix_seats_token", "seats", ["token"], unique=True)
    for number in (0, 1):
        op.execute(f"INSERT INTO seats (match_id, number, player_id, token, thread, notes, bank) "
                   f"SELECT id, {number}, player{number}_id, token{number}, thread{number}, notes{number}, "
                   f"bank{number} FROM matches")
    for index in ("ix_matches_player0_id", "ix_matches_player1_id", "ix_matches_token0", "ix_matches_token1"):
        op.drop_index(index, table_name="matches")
    with op.batch_alter_table("matches") as matches:
        for number in (0, 1):
            for column in _PER_SEAT:
                matches.drop_column(column.format(n=number))
