"""The user-service files shipped in docs/service start `serve --http` on loopback and stop it with SIGTERM."""

from __future__ import annotations

import configparser
import plistlib
import shlex
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[2] / "docs" / "service"


def test_the_systemd_user_unit_serves_http_on_loopback_and_stops_with_sigterm() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    unit.read_string((SERVICE / "memtiers.service").read_text())

    command = shlex.split(unit["Service"]["ExecStart"])
    assert command[0].endswith("/.venv/bin/memtiers")
    assert command[1:] == ["serve", "--http", "--host", "127.0.0.1", "--port", "8765"]
    assert unit["Service"]["KillSignal"] == "SIGTERM"
    assert unit["Install"]["WantedBy"] == "default.target"


def test_the_launchd_agent_serves_http_on_loopback_and_logs_stderr_to_a_file() -> None:
    with (SERVICE / "com.memtiers.server.plist").open("rb") as file:
        agent = plistlib.load(file)

    assert agent["Label"] == "com.memtiers.server"
    assert agent["ProgramArguments"][0].endswith("/.venv/bin/memtiers")
    assert agent["ProgramArguments"][1:] == ["serve", "--http", "--host", "127.0.0.1", "--port", "8765"]
    assert agent["RunAtLoad"] is True
    assert agent["Umask"] == 0o077
    assert agent["StandardErrorPath"].endswith("memtiers.log")
