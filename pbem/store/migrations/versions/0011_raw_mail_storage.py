"""Raw mails on PostgreSQL stored with lz4 (or uncompressed where the server lacks lz4) instead
of pglz, which spent 2 ms of the server's time on every answer with a picture.  Nothing changes
on SQLite; rows already stored stay as they are until rewritten or pruned.

Revision ID: 0011
Revises: 0009
"""

from alembic import op

from pbem.store.mail_records import RAW_MAIL_TABLES, store_raw_mail_fast

revision = "0011"
down_revision = "0009"


def upgrade() -> None:
    for table in RAW_MAIL_TABLES:
        store_raw_mail_fast(op.get_bind(), table)
