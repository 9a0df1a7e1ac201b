"""memtiers starts on Windows and macOS too: nothing imports or calls what only Unix has, outside a platform check.

The tests run on Linux only; this reads the source, so what would break elsewhere is caught here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = sorted([*(ROOT / "server").rglob("*.py"), *(ROOT / "tiers").rglob("*.py")])

UNIX_ONLY_MODULES = {
    "fcntl", "termios", "tty", "pty", "pwd", "grp", "spwd", "crypt", "resource", "posix", "syslog",
    "nis", "readline", "curses",
}  # fmt: skip
UNIX_ONLY_CALLS = {
    ("os", "getuid"), ("os", "geteuid"), ("os", "getgid"), ("os", "getegid"), ("os", "fchmod"), ("os", "fchown"),
    ("os", "chown"), ("os", "lchown"), ("os", "fork"), ("os", "forkpty"), ("os", "killpg"), ("os", "setsid"),
    ("os", "getpgid"), ("os", "uname"), ("os", "sync"), ("os", "mkfifo"), ("os", "statvfs"), ("os", "getloadavg"),
    ("signal", "SIGKILL"), ("signal", "SIGHUP"), ("signal", "SIGUSR1"), ("signal", "SIGUSR2"), ("signal", "SIGALRM"),
    ("signal", "SIGCHLD"), ("signal", "SIGQUIT"), ("signal", "alarm"), ("signal", "setitimer"),
    ("anyio", "open_signal_receiver"),  # asyncio's add_signal_handler, which Windows does not have
}  # fmt: skip


def _is_platform_check(test: ast.expr) -> bool:
    """True for a condition that reads the platform: sys.platform, os.name or platform.system()."""
    reads = {("sys", "platform"), ("os", "name"), ("platform", "system")}
    return any(
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (node.value.id, node.attr) in reads
        for node in ast.walk(test)
    )


def unguarded(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, what) for each Unix-only import or call not under an `if` that checks the platform."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_platform_check(node.test):
            continue  # both branches are the platform's own
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name.split(".")[0] in UNIX_ONLY_MODULES)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in UNIX_ONLY_MODULES:
                yield node.lineno, node.module
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and (node.value.id, node.attr) in UNIX_ONLY_CALLS
        ):
            yield node.lineno, f"{node.value.id}.{node.attr}"
        stack.extend(ast.iter_child_nodes(node))


def test_the_product_has_modules_to_check() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PRODUCT}
    assert {"tiers/storage/locking.py", "server/app.py", "server/token.py", "tiers/privacy/folders.py"} <= names


@pytest.mark.parametrize("path", PRODUCT, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_product_module_uses_nothing_only_unix_has_outside_a_platform_check(path: Path) -> None:
    found = sorted(unguarded(ast.parse(path.read_text(encoding="utf-8"), str(path))))

    assert not found, f"{path.relative_to(ROOT)} uses Unix-only {found}: guard it with a platform check"


def test_the_checker_catches_an_unguarded_fcntl_and_sigkill_and_lets_a_guarded_one_pass() -> None:
    bad = ast.parse("import fcntl\nfrom pwd import getpwuid\nimport signal\ndef f():\n    return signal.SIGKILL\n")
    good = ast.parse(
        "import os, sys\nif os.name == 'posix':\n    import fcntl\nif sys.platform != 'win32':\n    os.getuid()\n"
    )

    assert [what for _, what in sorted(unguarded(bad))] == ["fcntl", "pwd", "signal.SIGKILL"]
    assert list(unguarded(good)) == []
