"""The command tables of ``docs/players.md``, written from the registry: each row is a
declaration's, so a command declared is a command documented.

``python -m pbem.commands.reference docs/players.md`` rewrites the tables in place (between
their markers); ``tests/test_command_registry.py`` fails while the file is not in step."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pbem.commands.declaration import Row
from pbem.commands.registry import REGISTRY, Registry

TABLES = ("commands", "tournaments", "ladders")
_HEADER = "| command | German | meaning |\n| --- | --- | --- |\n"
_MARKED = re.compile(r"(<!-- command table: (\w+)[^\n]*-->\n).*?(<!-- end of command table -->)", re.DOTALL)


def rows(table: str, registry: Registry = REGISTRY) -> list[Row]:
    """The table's rows in the order declared, a row shared by several commands once."""
    return list(dict.fromkeys(row for declaration in registry.declarations for row in declaration.docs
                              if row.table == table))


def markdown(table: str, registry: Registry = REGISTRY) -> str:
    return _HEADER + "".join("|" + "|".join(f" {cell} " if cell else " " for cell in (row.en, row.de, row.meaning))
                             + "|\n" for row in rows(table, registry))


def in_step(text: str, registry: Registry = REGISTRY) -> str:
    """``text`` (the docs) with every marked table written anew from the registry."""
    return _MARKED.sub(lambda found: found.group(1) + markdown(found.group(2), registry) + found.group(3), text)


def main(arguments: list[str]) -> int:
    path = Path(arguments[0] if arguments else "docs/players.md")
    text = path.read_text(encoding="utf-8")
    written = in_step(text)
    if written != text:
        path.write_text(written, encoding="utf-8")
        print(f"{path}: command tables rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
