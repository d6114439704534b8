"""The newest schema revision this program knows, in a module of its own: ``pbem --version``
names it without loading the database code (``tests/daemon/test_migrations.py`` holds it equal
to the head of ``migrations/``)."""

HEAD_REVISION = "0024"
