"""A real `serve --http` app under uvicorn in a thread, on 127.0.0.1 and a free port, with the shared real model."""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from server.http import build_http_app, uvicorn_config
from server.settings import Settings
from server.token import Grants, configured_tokens
from tiers.model.embedder import FastEmbedder


@contextmanager
def running_http(settings: Settings, embedder: FastEmbedder) -> Iterator[str]:
    """The base URL (`http://127.0.0.1:PORT`) of a server for `settings`; stopped, lifespans closed, on exit."""
    app = build_http_app(settings, Grants(configured_tokens(settings)), embedder=embedder)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)  # bound before the thread starts: clients queue on it until uvicorn accepts
    server = uvicorn.Server(uvicorn_config(app, settings))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, name="uvicorn", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        listener.close()
        assert not thread.is_alive(), "the HTTP server did not stop"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@asynccontextmanager
async def http_client(url: str, token: str, mode: str = "auto") -> AsyncIterator[Client]:
    """An SDK client over streamable HTTP that sends `token` on every request."""
    timeout = httpx2.Timeout(60, read=300)
    async with (
        httpx2.AsyncClient(headers=bearer(token), timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield client
