"""Bounces read as a mail operator needs them (issue 35): each delivery failure keeps its reason
class (``delivery_failures.reason``: user_unknown, blocked, mailbox_full, …), so that ``pbem
status`` can name the domains that refuse the service, and only hard failures count.

Revision ID: 0023
Revises: 0022
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"


def upgrade() -> None:
    with op.batch_alter_table("delivery_failures") as batch:
        batch.add_column(sa.Column("reason", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("delivery_failures") as batch:
        batch.drop_column("reason")
