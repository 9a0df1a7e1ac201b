"""The server as a developer inspects it: the MCP Inspector CLI against `memtiers serve`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

INSPECTOR = Path(__file__).resolve().parents[1] / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
MEMTIERS = Path(sys.executable).with_name("memtiers")

pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists(),
    reason=f"the MCP Inspector is not installed at {INSPECTOR}: run `npm ci` in tests/inspector (.ci/run does)",
)


ROOT = Path(__file__).resolve().parents[2]


def inspector_env(tmp_path: Path) -> dict[str, str]:
    """Every file the Inspector keeps, and the HOME a server it starts sees, inside tmp_path."""
    state = tmp_path / "inspector"
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(state / "home"),
        "MCP_STORAGE_DIR": str(state / "storage"),
        "MCP_CATALOG_PATH": str(state / "catalog.json"),
        "MCP_CLIENT_CONFIG_PATH": str(state / "clients.json"),
        "MCP_INSPECTOR_OAUTH_STATE_PATH": str(state / "oauth.json"),
        "MCP_INSPECTOR_LOG_DIR": str(state / "logs"),
        "MCP_LOG_FILE": str(state / "mcp.log"),
    }


def inspect(tmp_path: Path, *args: str) -> Any:
    """Run one Inspector CLI call against a fresh `memtiers serve`; its JSON result."""
    home = tmp_path / "memtiers"
    env = inspector_env(tmp_path) | {"MEMTIERS_HOME": str(home)}
    command = [str(INSPECTOR), "--cli", "--format", "json", "-e", f"MEMTIERS_HOME={home}", str(MEMTIERS), "serve"]
    done = subprocess.run([*command, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return json.loads(done.stdout)["result"]  # --format json wraps the result in one envelope


def test_the_inspector_lists_calls_and_reads_through_the_cli(tmp_path: Path) -> None:
    listed = inspect(tmp_path, "--method", "tools/list")
    remembered = inspect(
        tmp_path,
        "--method", "tools/call", "--tool-name", "remember",
        "--tool-args-json", json.dumps({"content": "vegetarian", "key": "diet", "tags": ["food"]}),
    )  # fmt: skip
    recalled = inspect(
        tmp_path, "--method", "tools/call", "--tool-name", "recall", "--tool-arg", "query=what do I eat?"
    )
    profile = inspect(tmp_path, "--method", "resources/read", "--uri", "memory://profile")

    assert sorted(tool["name"] for tool in listed["tools"]) == ["forget", "profile", "promote", "recall", "remember"]
    assert remembered["isError"] is False
    [stored] = remembered["structuredContent"]["stored"]
    assert (stored["tier"], stored["profile_key"]) == ("hot", "diet")
    assert "diet=vegetarian" in recalled["content"][0]["text"]
    assert profile["contents"][0]["text"] == (
        "user scope (shared by every project):\ndiet: vegetarian\nproject scope (namespace default):\n(empty)"
    )
    assert not (tmp_path / "inspector" / "home" / ".mcp-inspector").exists()


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "memtiers").exists(), reason="mcp.json starts .venv/bin/memtiers")
def test_the_server_starts_from_mcp_json_as_written(tmp_path: Path) -> None:
    """The repository's mcp.json, unchanged, from the repository root (where the README installs .venv)."""
    command = [str(INSPECTOR), "--cli", "--format", "json", "--config", "mcp.json", "--server", "memtiers"]
    env = inspector_env(tmp_path)  # the server's default data folder then lands under this HOME
    del env["MCP_CATALOG_PATH"]  # the Inspector takes it as --catalog, which excludes --config
    done = subprocess.run(
        [*command, "--method", "tools/call", "--tool-name", "profile"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert done.returncode == 0, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    result = json.loads(done.stdout)["result"]
    assert result["structuredContent"]["entries"] == {}
    assert (tmp_path / "inspector" / "home" / ".local" / "share" / "memtiers" / "namespaces" / "default").is_dir()
