"""Tournament invitations: who sent a held ``tournament join`` (``account_confirmations.invited_by``),
so that an organiser's invitations, and not players' own joins by mail, count in the daily
invitation limits.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"


def upgrade() -> None:
    with op.batch_alter_table("account_confirmations") as batch:
        batch.add_column(sa.Column("invited_by", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_account_confirmations_invited_by", "players", ["invited_by"], ["id"])


def downgrade() -> None:
    with op.batch_alter_table("account_confirmations") as batch:
        batch.drop_constraint("fk_account_confirmations_invited_by", type_="foreignkey")
        batch.drop_column("invited_by")
