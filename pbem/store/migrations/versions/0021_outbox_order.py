"""Each recipient's mails about a match go out in order (issue 33): before an answer about a
match is sent, the outbox looks for an earlier one of the same match and recipient that is
still unsent.  A partial index of the unsent mails by match (``ix_outbound_mail_unsent``)
finds those without reading every mail of the match sent so far.

Revision ID: 0021
Revises: 0020
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"

UNSENT = sa.text("sent_at IS NULL")


def upgrade() -> None:
    op.create_index("ix_outbound_mail_unsent", "outbound_mail", ["match_id"],
                    sqlite_where=UNSENT, postgresql_where=UNSENT)


def downgrade() -> None:
    op.drop_index("ix_outbound_mail_unsent", table_name="outbound_mail")
