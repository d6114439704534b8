"""Knockout tournaments: ``tournaments`` (the bracket under the row's lock), their entries, and
each match's place in a bracket (unique, so that no pairing is started twice).

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("match_length", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("move_clock", sa.Float(), nullable=True),
        sa.Column("time_bank", sa.Float(), nullable=True),
        sa.Column("organiser_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("bracket", sa.JSON(), nullable=True),
        sa.Column("rounds_told", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_tournaments_code", "tournaments", ["code"], unique=True)
    op.create_index("ix_tournaments_status", "tournaments", ["status"])
    op.create_table(
        "tournament_entries",
        sa.Column("tournament_id", sa.Integer(), sa.ForeignKey("tournaments.id"), primary_key=True),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("players.id"), primary_key=True),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_tournament_entries_player_id", "tournament_entries", ["player_id"])
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("tournament_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("tournament_round", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("tournament_index", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_matches_tournament_id", "tournaments", ["tournament_id"], ["id"])
        batch.create_index("ix_matches_tournament_id", ["tournament_id"])
        batch.create_unique_constraint("uq_matches_tournament_pairing",
                                       ["tournament_id", "tournament_round", "tournament_index"])
