"""The server with MEMTIERS_COLD_URI and the AWS variables pointed at moto's S3 server, over an in-memory MCP client."""

from __future__ import annotations

import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from mcp import Client

from server.app import build_server
from server.settings import Settings
from tests.helpers import T0, Clock, call
from tests.s3 import S3Server
from tiers.memory import Memory
from tiers.model.embedder import FastEmbedder
from tiers.records import Kind, MemoryIn

pytestmark = pytest.mark.anyio


async def test_a_server_with_cold_on_s3_recalls_promotes_and_forgets_what_the_sweep_sent_there(
    tmp_path: Path, embedder: FastEmbedder, s3: S3Server
) -> None:
    prefix = f"server-{uuid.uuid4().hex[:10]}"
    env = {"MEMTIERS_HOME": str(tmp_path / "home"), "MEMTIERS_COLD_URI": f"s3://{s3.bucket}/{prefix}/", **s3.env}
    settings = Settings.from_env(env)
    assert settings.memory.cold_uri == f"s3://{s3.bucket}/{prefix}/default"
    assert settings.memory.storage_options == s3.storage_options  # allow_http: the endpoint is http://
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        staging, zeppelin = (
            s.id
            for s in memory.remember(
                [
                    MemoryIn(content="The staging database lives on host db-stage-3", kind=Kind.NOTE),
                    MemoryIn(content="The zeppelin hangar key hides under the blue doormat", kind=Kind.NOTE),
                ],
                T0,
            )
        )
        assert len(memory.sweep(T0 + timedelta(days=60)).moves) == 2
    finally:
        memory.close()
    assert s3.containing(prefix, b"zeppelin")

    clock = Clock(T0 + timedelta(days=61))
    async with Client(build_server(settings, clock=clock, run_timer=False, embedder=embedder)) as client:
        found = await call(client, "recall", query="which machine hosts the staging DB?", max_tokens=1024)
        promoted = await call(client, "promote", id=staging, to="warm")
        forgotten = await call(client, "forget", id=zeppelin)
        again = await call(client, "recall", query="staging database host", tiers=["warm"])

    assert (found["memories"][0]["id"], found["memories"][0]["tier"]) == (staging, "cold")
    assert (promoted["outcome"], promoted["src"]) == ("promoted", "cold")
    assert forgotten["tier"] == "cold"
    assert [m["id"] for m in again["memories"]] == [staging]
    assert s3.containing(prefix, b"zeppelin") == []
    assert s3.keys(prefix)  # the cold table is still there, empty
