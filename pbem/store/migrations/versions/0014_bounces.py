"""Bounces and deliverability: each outgoing mail's VERP tag (``outbound_mail.bounce_tag``), the
failures bounces report (``delivery_failures``), each address's count of permanent ones
(``players.bounces``), and the secret of its List-Unsubscribe links (``players.unsubscribe_token``).

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    with op.batch_alter_table("outbound_mail") as batch:
        batch.add_column(sa.Column("bounce_tag", sa.Text(), nullable=True))
        batch.create_index("ix_outbound_mail_bounce_tag", ["bounce_tag"], unique=True)
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("bounces", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("unsubscribe_token", sa.Text(), nullable=True))
        batch.create_index("ix_players_unsubscribe_token", ["unsubscribe_token"], unique=True)
    op.create_table(
        "delivery_failures",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("address", sa.Text(), nullable=False),
        sa.Column("permanent", sa.Boolean(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("diagnostic", sa.Text(), nullable=False),
        sa.Column("outbound_id", sa.Integer(), nullable=True),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.Column("reported_at", sa.DateTime(timezone=True), nullable=False),
    )
    for column in ("address", "outbound_id", "match_id", "reported_at"):
        op.create_index(f"ix_delivery_failures_{column}", "delivery_failures", [column])
