"""The house's layers, read from the imports (ast): arrows point down only, and no module imports
one that imports it back (ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pbem"
LAYERS = [
    ("cli",),
    ("daemon",),
    ("service",),
    ("web", "mail", "render"),
    ("commands", "assistant"),
    ("rules", "store", "config"),
    ("addresses", "periodic", "names"),
]
"""Top to bottom; a module may import its own part and the parts of lower layers."""
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}
ROOMS = [
    ("pages", "jobs"),
    ("mailroom",),
    ("watching",),
    ("competitions",),
    ("people",),
    ("games",),
    ("table",),
]
"""The service's rooms, top to bottom: a room may import itself and the rooms below it."""
ROOM_RANK = {room: rank for rank, rooms in enumerate(ROOMS) for room in rooms}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """pbem modules imported by ``path``, at any depth of the file (also inside functions), and
    names given to importlib.import_module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pbem"):
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & set(MODULE_PATHS)
            found.update(submodules or {node.module})
            if len(submodules) < len(node.names):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("pbem"))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("pbem")):
            found.add(str(node.args[0].value))
    return found


MODULE_PATHS = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
MODULES = MODULE_PATHS
GRAPH = {name: {imported for imported in _imports(path) if imported in MODULES and imported != name}
         for name, path in MODULES.items()}


def _part(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


@pytest.mark.parametrize("module", sorted(name for name in MODULES if _part(name) in RANK))
def test_no_module_imports_a_higher_layer(module):
    upward = [imported for imported in GRAPH[module]
              if _part(imported) in RANK and RANK[_part(imported)] < RANK[_part(module)]]
    assert not upward, f"{module} imports {upward} from above its layer"


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "service" else None


def test_every_service_module_lives_in_a_room():
    loose = [name for name in MODULES if _part(name) == "service" and name != "pbem.service"
             and _room(name) not in ROOM_RANK and not name.endswith(tuple(f".{room}" for room in ROOM_RANK))]
    assert not loose, f"service modules outside the rooms {sorted(ROOM_RANK)}: {loose}"


@pytest.mark.parametrize("module", sorted(name for name in MODULES if _room(name) in ROOM_RANK))
def test_no_room_imports_a_higher_room(module):
    upward = [imported for imported in GRAPH[module] if _room(imported) in ROOM_RANK
              and ROOM_RANK[_room(imported)] < ROOM_RANK[_room(module)]]  # type: ignore[index]
    assert not upward, f"{module} imports {upward} from a room above its own"


def test_no_service_module_imports_the_service_package():
    """``pbem.service`` loads the mail room and the jobs: a room importing it would point up."""
    assert not [name for name in MODULES if _room(name) and "pbem.service" in GRAPH[name]]


def test_the_rules_core_imports_nothing_else_of_pbem():
    outside = {imported for name in MODULES if _part(name) == "rules"
               for imported in GRAPH[name] if _part(imported) != "rules"}
    assert not outside


def test_mail_knows_nothing_of_commands_or_games():
    known = {imported for name in MODULES if _part(name) == "mail" for imported in GRAPH[name]}
    assert not {module for module in known if _part(module) in ("commands", "rules", "service", "assistant")}


def test_no_import_cycles():
    """Tarjan's strongly connected components: every one must be a single module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in GRAPH[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert not cycles, cycles
