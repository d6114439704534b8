"""Writing the changes of a loaded row with one Core UPDATE instead of the ORM's unit of work.

A mail's transaction changes the same three rows every time: its match and the match's two
seats.  The ORM's flush of them at commit took 0.9 ms of the 15 a mail may cost (it builds a
unit of work, sorts it, and makes a new UPDATE statement per row); the changed columns of each
row written by one prebuilt UPDATE (kept per table and set of columns) take about half of that.
The row is then marked committed as a flush marks it, so the commit writes nothing twice (with
SQLAlchemy's ``InstanceState._commit_all``, what its own flush calls: no public call does it;
``tests/daemon/test_row_writes.py`` fails if a release changes what it does).

The same checks as the ORM's: only the columns that changed are written (a column another
transaction changed is not overwritten with what this one read), and a row with a version
column is written only if its version is still the one read, else :class:`StaleDataError`,
exactly as the flush would raise it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from sqlalchemy import Table, and_, bindparam, inspect, update
from sqlalchemy.orm import InstanceState, Mapper
from sqlalchemy.orm.exc import StaleDataError
from sqlalchemy.sql.dml import Update
from sqlmodel import Session, SQLModel

_OLD_VERSION = "pbem_old_version"
"""The bind parameter names of the WHERE clause (they must not be a column's name)."""


def write_changes(session: Session, row: SQLModel) -> bool:
    """Write the columns of ``row`` changed since it was loaded, now, and mark them committed.

    False for a row the ORM must write itself, and nothing is written then: one not yet in the
    database (pending), deleted in this session, held by another session, with its key or version
    unloaded (expired), or with an attribute other than a column changed.

    As with any write, a list or dict changed in place afterwards is not seen (the ORM does not
    track JSON in place either: the service replaces them); a row written twice in a transaction
    counts its version up twice.
    """
    state: InstanceState[Any] = inspect(row)
    if not state.persistent or state.session is not session or row in session.deleted:
        return False
    shape, dict_ = _shape(state.mapper), state.dict
    if not all(key in dict_ and key in shape.columns for key in state.committed_state) or not all(
            key in dict_ for key in shape.needed):
        return False  # something unloaded or not a column: the ORM knows what to do
    changed = tuple(sorted(key for key, old in state.committed_state.items()
                           if key != shape.version_key and old != dict_[key]))
    if changed:
        _update_row(session, shape, dict_, changed)
    if state.modified:  # as a flush leaves it: clean, nothing left to write (also when set to equal values)
        state._commit_all(dict_, session.identity_map)
    return True


@dataclass(frozen=True)
class _Shape:
    """What writing a row of one mapped table needs of its mapper, found once."""

    table: Table
    columns: dict[str, str]
    """Attribute key → column name, for every column."""
    identity: tuple[tuple[str, str], ...]
    """(attribute key, column name) of the primary key's columns."""
    version_key: str | None
    version_column: str | None

    @cached_property
    def needed(self) -> tuple[str, ...]:
        """The attributes an UPDATE finds the row by."""
        return tuple(key for key, _ in self.identity) + ((self.version_key,) if self.version_key else ())


@lru_cache(maxsize=64)
def _shape(mapper: Mapper[Any]) -> _Shape:
    table = mapper.local_table
    assert isinstance(table, Table)
    version = mapper.version_id_col
    return _Shape(
        table=table,
        columns={attribute.key: attribute.columns[0].name for attribute in mapper.column_attrs},
        identity=tuple((mapper.get_property_by_column(column).key, column.name) for column in mapper.primary_key),
        version_key=None if version is None else mapper.get_property_by_column(version).key,
        version_column=None if version is None else version.name,
    )


def _update_row(session: Session, shape: _Shape, dict_: dict[str, Any], changed: tuple[str, ...]) -> None:
    values = {key: dict_[key] for key in changed}
    parameters: dict[str, Any] = dict(values)
    identity = tuple(dict_[key] for key, _ in shape.identity)
    for (_, column), value in zip(shape.identity, identity):
        parameters[f"pk_{column}"] = value
    if shape.version_key is not None:
        parameters[_OLD_VERSION] = dict_[shape.version_key]
        values[shape.version_key] = parameters[shape.version_key] = dict_[shape.version_key] + 1
    statement = _update(shape.table, tuple((key, shape.columns[key]) for key in values), shape.version_column)
    # On the session's connection, past its ORM layer: no autoflush (it would write the row itself,
    # with the version this UPDATE expects) and a fifth of the cost.
    result = session.connection().execute(statement, parameters)
    if result.rowcount != 1:
        raise StaleDataError(f"UPDATE of {shape.table.name} {identity} matched {result.rowcount} rows, not 1: "
                             "another transaction changed or deleted it meanwhile")
    dict_.update(values)


@lru_cache(maxsize=64)
def _update(table: Table, columns: tuple[tuple[str, str], ...], version_column: str | None) -> Update:
    """The UPDATE of ``columns`` (attribute key, column name) of one row of ``table``, found by
    its primary key (and its version): built once per set of columns, so that SQLAlchemy finds
    its compiled form at once."""
    condition = and_(*(column == bindparam(f"pk_{column.name}") for column in table.primary_key.columns))
    if version_column is not None:
        condition = and_(condition, table.c[version_column] == bindparam(_OLD_VERSION))
    return update(table).where(condition).values({table.c[name]: bindparam(key) for key, name in columns})
