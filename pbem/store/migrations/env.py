"""Alembic's environment for pbem: always called by ``pbem.store.db`` with an open connection
(in ``config.attributes["connection"]``), inside the transaction and lock that guard it."""

from alembic import context
from sqlmodel import SQLModel

from pbem.store.db import import_model_modules

import_model_modules()
context.configure(connection=context.config.attributes["connection"], target_metadata=SQLModel.metadata,
                  render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
