"""Schema 2, the last before migrations: players, matches, finished games, every mail in and out.

A database written by pbem before it had migrations records its version (1 or 2) in its
``schema_version`` table; ``pbem db upgrade`` stamps it with that revision (0001 or 0002) and goes
on from there.  From schema 1 (the first releases) this revision adds what schema 2 added to the
players (ratings, vacation) and the matches (the move clock), and creates the game tables where
the very first release (mail tables only) left them out.  A new database is created whole from
the models and stamped with the newest revision, so this one never runs on it.

Revision ID: 0002
Revises: 0001
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"

_TIME = sa.DateTime(timezone=True)


def _players_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("rating_match", sa.Float(), nullable=False, server_default="1500"),
        sa.Column("experience_match", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("rating_casual", sa.Float(), nullable=False, server_default="1500"),
        sa.Column("experience_casual", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("vacation_until", _TIME, nullable=True),
        sa.Column("vacation_days", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
    ]


def _matches_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("clock_seat", sa.Integer(), nullable=True),
        sa.Column("clock_started_at", _TIME, nullable=True),
        sa.Column("clock_stamp", sa.JSON(), nullable=True),
        sa.Column("bank0", sa.Float(), nullable=True),
        sa.Column("bank1", sa.Float(), nullable=True),
        sa.Column("alarms_given", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("deadline_at", _TIME, nullable=True),
    ]


def upgrade() -> None:
    tables = set(sa.inspect(op.get_bind()).get_table_names())
    if "players" in tables:
        for column in _players_columns():
            op.add_column("players", column)
    else:
        op.create_table(
            "players",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("address", sa.Text(), nullable=False),
            sa.Column("name", sa.Text(), nullable=False),
            sa.Column("language", sa.Text(), nullable=True),
            sa.Column("numbering", sa.Text(), nullable=False),
            sa.Column("refuses_invitations", sa.Boolean(), nullable=False),
            sa.Column("created_at", _TIME, nullable=False),
            *_players_columns(),
        )
        op.create_index("ix_players_address", "players", ["address"], unique=True)
    if "matches" in tables:
        for column in _matches_columns():
            op.add_column("matches", column)
    else:
        op.create_table(
            "matches",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("status", sa.Text(), nullable=False),
            sa.Column("player0_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=False),
            sa.Column("player1_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=False),
            sa.Column("token0", sa.Text(), nullable=False),
            sa.Column("token1", sa.Text(), nullable=False),
            sa.Column("options", sa.JSON(), nullable=False),
            sa.Column("score", sa.JSON(), nullable=False),
            sa.Column("game", sa.JSON(), nullable=True),
            sa.Column("game_number", sa.Integer(), nullable=False),
            sa.Column("thread0", sa.JSON(), nullable=False),
            sa.Column("thread1", sa.JSON(), nullable=False),
            sa.Column("notes0", sa.JSON(), nullable=False),
            sa.Column("notes1", sa.JSON(), nullable=False),
            sa.Column("rematch_of", sa.Integer(), sa.ForeignKey("matches.id"), nullable=True),
            sa.Column("created_at", _TIME, nullable=False),
            sa.Column("updated_at", _TIME, nullable=False),
            sa.Column("finished_at", _TIME, nullable=True),
            *_matches_columns(),
        )
        for name in ("status", "player0_id", "player1_id"):
            op.create_index(f"ix_matches_{name}", "matches", [name])
        for name in ("token0", "token1"):
            op.create_index(f"ix_matches_{name}", "matches", [name], unique=True)
    op.create_index("ix_matches_deadline_at", "matches", ["deadline_at"])
    if "finished_games" not in tables:
        op.create_table(
            "finished_games",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id"), nullable=False),
            sa.Column("number", sa.Integer(), nullable=False),
            sa.Column("game", sa.JSON(), nullable=False),
            sa.Column("finished_at", _TIME, nullable=False),
        )
        op.create_index("ix_finished_games_match_id", "finished_games", ["match_id"])
