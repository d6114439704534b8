"""Credits (play money) for prize games: accounts and the double-entry ledger, and the prize
rating list of every player.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=True),
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id"), nullable=True),
        sa.Column("balance_cents", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind = 'issuer' OR balance_cents >= 0", name="ck_accounts_not_negative"),
    )
    op.create_index("ix_accounts_key", "accounts", ["key"], unique=True)
    op.create_index("ix_accounts_player_id", "accounts", ["player_id"])
    op.create_index("ix_accounts_match_id", "accounts", ["match_id"])
    op.create_table(
        "ledger_movements",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id"), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_ledger_movements_match_id", "ledger_movements", ["match_id"])
    op.create_table(
        "ledger_entries",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("movement_id", sa.Integer(), sa.ForeignKey("ledger_movements.id"), nullable=False),
        sa.Column("account_id", sa.Integer(), sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_ledger_entries_movement_id", "ledger_entries", ["movement_id"])
    op.create_index("ix_ledger_entries_account_id", "ledger_entries", ["account_id"])
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("rating_prize", sa.Float(), nullable=False, server_default="1500.0"))
        batch.add_column(sa.Column("experience_prize", sa.Integer(), nullable=False, server_default="0"))
    op.create_index("ix_players_rating_prize", "players", ["rating_prize", "experience_prize"])
