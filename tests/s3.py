"""A real S3-compatible server for the tests: moto's server mode, as a subprocess on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KEY_ID = "memtiers-test"
SECRET = "memtiers-test-secret"
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    """A running moto server and one bucket on it."""

    endpoint: str
    bucket: str
    env: dict[str, str] = field(default_factory=dict)

    @property
    def storage_options(self) -> dict[str, str]:
        """What LanceDB needs to reach the bucket (as server/settings.py builds it from the AWS variables)."""
        return {
            "aws_access_key_id": KEY_ID,
            "aws_secret_access_key": SECRET,
            "region": REGION,
            "endpoint": self.endpoint,
            "allow_http": "true",
        }

    def uri(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix.strip('/')}"

    def client(self) -> Any:
        import boto3  # comes with moto; imported here so that tests without S3 never pay for it

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=KEY_ID,
            aws_secret_access_key=SECRET,
            region_name=REGION,
        )

    def objects(self, prefix: str) -> dict[str, int]:
        """Every object under `prefix` in the bucket: key and size in bytes."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix.strip("/"))
        return {item["Key"]: int(item["Size"]) for page in pages for item in page.get("Contents", [])}

    def keys(self, prefix: str) -> list[str]:
        return sorted(self.objects(prefix))

    def containing(self, prefix: str, needle: bytes) -> list[str]:
        """Keys of the objects under `prefix` whose bytes contain `needle`."""
        client = self.client()
        return [
            key for key in self.keys(prefix) if needle in client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def moto_server(bucket: str = "memtiers", timeout: float = 60.0, log: Path | None = None) -> Iterator[S3Server]:
    """Start `python -m moto.server` on a free loopback port, wait until it answers, make `bucket`; stop it after.

    `log` receives the server's output: one line per request it answered.
    """
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    output = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=output,
        stderr=output,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"moto's server exited with {process.returncode} before answering on {endpoint}")
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"moto's server did not answer on {endpoint} within {timeout:.0f} s") from None
                time.sleep(0.1)  # polling a port that is not open yet: there is no event to wait for
        server = S3Server(
            endpoint,
            bucket,
            {
                "AWS_ACCESS_KEY_ID": KEY_ID,
                "AWS_SECRET_ACCESS_KEY": SECRET,
                "AWS_REGION": REGION,
                "AWS_ENDPOINT_URL": endpoint,
            },
        )
        server.client().create_bucket(Bucket=bucket)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log:
            output.close()  # type: ignore[union-attr]
