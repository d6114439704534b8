"""Growth stays flat (issue 23).  The ``ratings`` answer sums kept counts of rated players per
band of ratings (``rating_counts``, counted here from the players) instead of counting every
player, and reads each rating from a partial index of the players with rated play of its kind
(``ix_players_rated_*``) instead of one of everybody (``ix_players_rating_*``).  The retention
job's index holds only the incoming mails not yet pruned (``ix_inbound_mail_unpruned``,
partial) instead of every mail kept for years (``ix_inbound_mail_pruned_at``), and the mails
pruned already lose their sender, subject and reason, as the retention job now prunes them.

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

from pbem.store.game_records import count_rating_bands

revision = "0020"
down_revision = "0019"

KINDS = ("match", "casual", "prize")
UNPRUNED = sa.text("pruned_at IS NULL")


def upgrade() -> None:
    op.create_table(
        "rating_counts",
        sa.Column("kind", sa.Text(), primary_key=True),
        sa.Column("band", sa.Integer(), primary_key=True),
        sa.Column("players", sa.Integer(), nullable=False),
    )
    count_rating_bands(op.get_bind())
    for kind in KINDS:
        op.drop_index(f"ix_players_rating_{kind}", table_name="players")
        rated = sa.text(f"experience_{kind} > 0")
        op.create_index(f"ix_players_rated_{kind}", "players", [f"rating_{kind}"],
                        sqlite_where=rated, postgresql_where=rated)
    op.drop_index("ix_inbound_mail_pruned_at", table_name="inbound_mail")
    op.create_index("ix_inbound_mail_unpruned", "inbound_mail", ["processed_at"],
                    sqlite_where=UNPRUNED, postgresql_where=UNPRUNED)
    op.execute("UPDATE inbound_mail SET sender = '', subject = '', reason = '' WHERE pruned_at IS NOT NULL")
