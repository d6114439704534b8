"""A page of all of a player's games: each player's own secret for it (``players.page_token``),
unique, made for every player already known so that their next mail links to it.

Revision ID: 0013
Revises: 0012
"""

import base64
import secrets

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("page_token", sa.Text(), nullable=True))
        batch.create_index("ix_players_page_token", ["page_token"], unique=True)
    players = sa.table("players", sa.column("id", sa.Integer), sa.column("page_token", sa.Text))
    connection = op.get_bind()
    for (player_id,) in connection.execute(sa.select(players.c.id)).all():
        token = base64.b32encode(secrets.token_bytes(16)).decode("ascii").rstrip("=").lower()
        connection.execute(players.update().where(players.c.id == player_id).values(page_token=token))
