"""The Claude Code plugin of docs/hosts/: its hook commands run as Claude Code runs them (stdin JSON in, stdout out),
and Claude Code's own CLI validating the plugin and running its session-start hook (no model login needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server.scope import namespace_of_root
from server.settings import Settings
from tests.helpers import T0
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.scopes.scoped import Scoped

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "docs" / "hosts" / "claude-code"
CLAUDE = ROOT / "tests" / "hosts" / "node_modules" / ".bin" / "claude"
MEMTIERS = Path(sys.executable).with_name("memtiers")
_MISSING = None if CLAUDE.exists() else f"Claude Code's CLI is not installed at {CLAUDE}: npm install in tests/hosts"
if _MISSING and os.environ.get("CI") == "true":
    raise RuntimeError(f"the Claude Code plugin's tests must run in CI: {_MISSING}")


@pytest.fixture
def workspace(tmp_path: Path, embedder: FastEmbedder) -> tuple[Path, Path, str]:
    """A data folder holding a user profile and the profile of one workspace's namespace, and that workspace."""
    home, folder = tmp_path / "memtiers", tmp_path / "work" / "shop"
    folder.mkdir(parents=True)
    namespace = namespace_of_root(folder.resolve().as_uri())[0]  # type: ignore[index]
    settings = Settings.from_env({"MEMTIERS_HOME": str(home)})
    project = settings.for_namespace(namespace)
    user = settings.for_namespace("user")
    shop, person = Memory(project.folder, embedder), Memory(user.folder, embedder)
    try:
        Scoped(shop, person).set_profile({"name": "Ada", "current_project": "shop"}, T0)
    finally:
        shop.close()
        person.close()
    return home, folder, namespace


def hook(home: Path, event: str, payload: Any, **env: str) -> subprocess.CompletedProcess[str]:
    """`memtiers hook <event>` as Claude Code runs a command hook: the event's JSON on stdin."""
    given = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home.parent), "MEMTIERS_HOME": str(home)}
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [str(MEMTIERS), "hook", event], input=stdin, env=given | env, capture_output=True, text=True, timeout=120
    )


def test_the_session_start_hook_puts_both_profiles_in_the_context_naming_the_workspaces_namespace(
    workspace: tuple[Path, Path, str],
) -> None:
    home, folder, namespace = workspace
    event = {"session_id": "s1", "cwd": str(folder), "hook_event_name": "SessionStart", "source": "startup"}

    done = hook(home, "session-start", event)

    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    context = output["additionalContext"]
    assert output["hookEventName"] == "SessionStart"
    assert f"namespace {namespace} (from the workspace root {folder.resolve()})" in context
    assert (
        "user scope (shared by every project):\nname: Ada\n"
        f"project scope (namespace {namespace}):\ncurrent_project: shop"
    ) in context
    assert "compacted" not in context


def test_after_a_compaction_the_session_start_hook_asks_the_agent_to_store_what_the_summary_listed(
    workspace: tuple[Path, Path, str],
) -> None:
    home, folder, _ = workspace
    before = hook(home, "pre-compact", {"hook_event_name": "PreCompact", "trigger": "auto", "cwd": str(folder)})
    after = hook(home, "session-start", {"cwd": str(folder), "hook_event_name": "SessionStart", "source": "compact"})

    assert before.returncode == 0 and "Not yet in memtiers" in before.stdout and "remember" in before.stdout
    assert not before.stdout.lstrip().startswith("{")  # plain text: the compaction's instructions
    context = json.loads(after.stdout)["hookSpecificOutput"]["additionalContext"]
    assert 'lists lines under "Not yet in memtiers", store each one now' in context
    assert "name: Ada" in context  # the profile, lost with the old context, is back


def test_a_hook_given_no_json_still_answers_and_a_named_namespace_wins_over_the_folder(
    workspace: tuple[Path, Path, str],
) -> None:
    home, _, _ = workspace

    done = hook(home, "session-start", "not json", MEMTIERS_NAMESPACE="elsewhere")

    assert done.returncode == 0
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "namespace elsewhere (named by MEMTIERS_NAMESPACE)" in context and "name: Ada" in context
    assert not (home / "namespaces" / "elsewhere").exists()  # reading the profile creates nothing


# Claude Code's own CLI


def claude(tmp_path: Path, *args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{MEMTIERS.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp_path / "claude-home"),
        "MEMTIERS_HOME": str(home),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    return subprocess.run([str(CLAUDE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
@pytest.mark.parametrize("path", [PLUGIN, PLUGIN.parent], ids=["plugin", "marketplace"])
def test_claude_code_validates_the_plugin_and_its_marketplace_strictly(tmp_path: Path, path: Path) -> None:
    done = claude(tmp_path, "plugin", "validate", "--strict", str(path), cwd=tmp_path, home=tmp_path / "memtiers")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
def test_claude_code_installs_the_plugin_from_the_local_marketplace(tmp_path: Path) -> None:
    home = tmp_path / "memtiers"
    added = claude(tmp_path, "plugin", "marketplace", "add", str(PLUGIN.parent), cwd=tmp_path, home=home)
    installed = claude(tmp_path, "plugin", "install", "memtiers@memtiers", cwd=tmp_path, home=home)
    listed = claude(tmp_path, "plugin", "list", cwd=tmp_path, home=home)

    assert added.returncode == 0 and installed.returncode == 0, added.stdout + installed.stdout + installed.stderr
    assert "memtiers@memtiers" in listed.stdout and "enabled" in listed.stdout


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
def test_claude_code_runs_the_plugins_session_start_hook_and_starts_its_server(
    workspace: tuple[Path, Path, str], tmp_path: Path
) -> None:
    home, folder, namespace = workspace
    args = ["-p", "hello", "--plugin-dir", str(PLUGIN), "--output-format", "stream-json", "--verbose"]

    done = claude(tmp_path, *args, "--include-hook-events", cwd=folder, home=home)

    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    [answer] = [e for e in events if e.get("subtype") == "hook_response" and e["hook_event"] == "SessionStart"]
    [init] = [e for e in events if e.get("subtype") == "init"]
    assert answer["outcome"] == "success" and answer["exit_code"] == 0, answer
    context = json.loads(answer["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert f"namespace {namespace}" in context and "name: Ada" in context and "current_project: shop" in context
    assert [s["name"] for s in init["mcp_servers"]] == ["plugin:memtiers:memtiers"]
    assert init["plugins"][0]["name"] == "memtiers"
