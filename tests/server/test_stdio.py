"""The real thing on the wire: `memtiers serve` as a subprocess over stdio, with the real model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers import text

pytestmark = pytest.mark.anyio

MEMTIERS = Path(sys.executable).with_name("memtiers")


def server_env(home: Path) -> dict[str, str]:
    return {"MEMTIERS_HOME": str(home), "MEMTIERS_LOG_LEVEL": "INFO"}


async def test_remember_then_recall_over_stdio_with_an_sdk_client(tmp_path: Path) -> None:
    params = StdioServerParameters(command=str(MEMTIERS), args=["serve"], env=server_env(tmp_path / "home"))
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            stored = await client.call_tool("remember", {"content": "The release train leaves every other Monday"})
            found = await client.call_tool("recall", {"query": "when does the release train leave?"})

    assert not stored.is_error and not found.is_error
    assert stored.structured_content is not None
    rid = stored.structured_content["stored"][0]["id"]
    assert f"[{rid}] " in text(found)
    assert "The release train leaves every other Monday" in text(found)
    assert "memtiers serving namespace 'default'" in (tmp_path / "stderr.log").read_text()


class Wire:
    """A raw JSON-RPC line reader and writer over a subprocess, keeping every stdout line it reads."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.lines: list[str] = []
        self._buffer = b""

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps(message) + "\n").encode())

    async def read_line(self) -> str:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            self._buffer += await self.process.stdout.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.lines.append(line.decode())
        return self.lines[-1]

    async def answer(self, rid: int) -> dict[str, Any]:
        while True:
            message = json.loads(await self.read_line())
            if message.get("id") == rid:
                return message


async def test_stdout_carries_only_protocol_messages_while_logs_go_to_stderr(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)} | server_env(tmp_path / "home")
    with open(tmp_path / "stderr.log", "wb") as errlog, anyio.fail_after(120):
        process = await anyio.open_process([str(MEMTIERS), "serve"], env=env, stderr=errlog)
        wire = Wire(process)
        await wire.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        assert "result" in await wire.answer(1)
        await wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "remember", "arguments": {"content": "Standup is at 9:15"}}
        await wire.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        remembered = await wire.answer(2)
        call = {"name": "recall", "arguments": {"query": "standup time"}}
        await wire.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        recalled = await wire.answer(3)
        assert process.stdin is not None
        await process.stdin.aclose()  # how hosts stop a stdio server
        assert await process.wait() == 0
        assert process.stdout is not None
        rest = b""
        async for chunk in process.stdout:
            rest += chunk
        wire.lines += [line.decode() for line in (wire._buffer + rest).split(b"\n") if line.strip()]

    assert remembered["result"]["isError"] is False
    assert "Standup is at 9:15" in recalled["result"]["content"][0]["text"]
    for line in wire.lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    logs = (tmp_path / "stderr.log").read_text()
    assert "memtiers serving namespace 'default'" in logs
