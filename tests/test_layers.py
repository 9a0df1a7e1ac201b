"""The layers point one way: the domain (tiers/) never knows about MCP, the environment, or stdout."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = sorted((ROOT / "tiers").glob("*.py"))


def imported_modules(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_the_domain_has_modules_to_check() -> None:
    assert {p.name for p in DOMAIN} >= {"hot.py", "memory.py", "store.py", "rules.py", "heat.py", "recall.py"}


@pytest.mark.parametrize("path", DOMAIN, ids=lambda p: p.name)
def test_a_domain_module_never_imports_server_or_mcp(path: Path) -> None:
    modules = imported_modules(ast.parse(path.read_text(), str(path)))

    forbidden = {m for m in modules if m.split(".")[0] in {"server", "mcp", "mcp_types"}}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}"


@pytest.mark.parametrize("path", DOMAIN, ids=lambda p: p.name)
def test_a_domain_module_never_reads_the_environment_nor_prints(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            assert node.attr not in {"environ", "getenv", "putenv", "environb"}, f"{path.name}:{node.lineno}"
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            assert not {a.name for a in node.names} & {"environ", "getenv", "environb"}, f"{path.name}:{node.lineno}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "print", f"{path.name}:{node.lineno} prints"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys":
            assert node.attr not in {"stdout", "stderr"}, f"{path.name}:{node.lineno} writes to {node.attr}"


def test_the_checker_itself_catches_a_forbidden_import_and_a_print() -> None:
    bad = ast.parse("import os\nfrom mcp.server import MCPServer\nprint(os.environ['HOME'])\n")

    assert "mcp.server" in imported_modules(bad)
    assert any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print" for n in ast.walk(bad))
