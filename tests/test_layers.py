"""The layers point one way: the domain (tiers/) never knows about MCP, the environment, or stdout, and its parts
import only the parts below them (the map in tiers/__init__.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = sorted((ROOT / "tiers").rglob("*.py"))

VOCABULARY = {"errors", "files", "records"}
# Each part (a subpackage of tiers/, or a module at its top) and the parts it may import besides itself.
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "files": {"errors"},
    "text": {"errors"},
    "records": {"errors", "text"},
    "model": {"errors", "files", "text"},
    "storage": VOCABULARY | {"text"},
    "privacy": VOCABULARY,
    "index": VOCABULARY | {"text", "model", "storage"},
    "recall": VOCABULARY | {"text", "model", "storage", "index"},
    "lifecycle": VOCABULARY | {"text", "storage", "index"},
    "namespace": VOCABULARY | {"text", "model", "storage", "privacy", "index", "recall", "lifecycle"},
    "memory": VOCABULARY | {"text", "model", "storage", "privacy", "index", "recall", "lifecycle", "namespace"},
    "browse": VOCABULARY | {"storage", "lifecycle", "memory"},
    "transfer": VOCABULARY | {"text", "model", "storage", "index", "memory"},
    "scopes": VOCABULARY | {"text", "storage", "recall", "lifecycle", "namespace", "memory", "transfer"},
}


def imported_modules(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            if node.module == "tiers":  # `from tiers import records`: the names are modules or parts
                names.update(f"tiers.{alias.name}" for alias in node.names)
    return names


def part_of(path: Path) -> str:
    """The part a file of tiers/ belongs to: its subpackage, or its own name at the top."""
    inside = path.relative_to(ROOT / "tiers").parts
    return inside[0] if len(inside) > 1 else inside[0].removesuffix(".py")


def parts_imported(path: Path) -> set[str]:
    modules = imported_modules(ast.parse(path.read_text(), str(path)))
    return {m.split(".")[1] for m in modules if m.startswith("tiers.")}


def test_the_domain_has_its_parts() -> None:
    found = {part_of(p) for p in DOMAIN} - {"__init__"}
    assert found == set(MAY_IMPORT)
    for part in found - {"errors", "files", "records", "memory", "browse"}:
        assert (ROOT / "tiers" / part / "__init__.py").read_text().startswith('"""'), f"{part} says what it owns"


@pytest.mark.parametrize("path", DOMAIN, ids=lambda p: str(p.relative_to(ROOT / "tiers")))
def test_a_domain_module_imports_only_the_parts_below_its_own(path: Path) -> None:
    part = part_of(path)
    if part == "__init__":
        return
    wrong = parts_imported(path) - MAY_IMPORT[part] - {part}
    assert not wrong, f"{path.relative_to(ROOT)} ({part}) imports {sorted(wrong)}"


@pytest.mark.parametrize("path", DOMAIN, ids=lambda p: str(p.relative_to(ROOT / "tiers")))
def test_a_domain_module_never_imports_server_or_mcp(path: Path) -> None:
    modules = imported_modules(ast.parse(path.read_text(), str(path)))

    forbidden = {m for m in modules if m.split(".")[0] in {"server", "mcp", "mcp_types"}}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}"


@pytest.mark.parametrize("path", DOMAIN, ids=lambda p: str(p.relative_to(ROOT / "tiers")))
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


def test_the_parts_form_no_cycle() -> None:
    seen: dict[str, int] = {}

    def depth(part: str, path: tuple[str, ...] = ()) -> int:
        assert part not in path, f"cycle: {' -> '.join((*path, part))}"
        if part not in seen:
            seen[part] = 1 + max((depth(p, (*path, part)) for p in MAY_IMPORT[part]), default=0)
        return seen[part]

    for part in MAY_IMPORT:
        depth(part)
    assert seen["model"] < seen["index"] < seen["recall"] < seen["namespace"] < seen["memory"]


def test_the_checker_catches_a_forbidden_import_a_print_and_a_part_imported_upwards(tmp_path: Path) -> None:
    bad = ast.parse("import os\nfrom mcp.server import MCPServer\nprint(os.environ['HOME'])\n")
    assert "mcp.server" in imported_modules(bad)
    assert any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print" for n in ast.walk(bad))

    upwards = ast.parse("from tiers import memory\nfrom tiers.recall.rank import pack\n")
    assert {m.split(".")[1] for m in imported_modules(upwards) if m.startswith("tiers.")} == {"memory", "recall"}
    assert not {"memory", "recall"} <= MAY_IMPORT["storage"]
