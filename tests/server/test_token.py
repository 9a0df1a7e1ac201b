"""The HTTP bearer tokens: the generated 0600 file, the settings that name tokens, and the constant-time check."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from server.settings import ConfigError, HttpToken, Settings
from server.token import Grants, configured_tokens, file_token

TOKEN = "a-token-of-enough-length"


def test_the_token_file_is_made_once_with_mode_0600_and_read_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "home" / "http-token"

    first = file_token(path)
    again = file_token(path)

    assert first == again
    assert len(first) >= 40
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["http-token"]  # no draft left behind


def test_a_token_file_others_can_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "http-token"
    path.write_text(TOKEN)
    path.chmod(0o644)

    with pytest.raises(ConfigError, match="chmod 600"):
        file_token(path)


def test_a_token_file_without_a_usable_token_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "http-token"
    path.write_text("short\n")
    path.chmod(0o600)

    with pytest.raises(ConfigError, match="delete it to make a new one"):
        file_token(path)


def test_without_configured_tokens_the_file_token_opens_every_namespace(tmp_path: Path) -> None:
    settings = Settings.from_env({"MEMTIERS_HOME": str(tmp_path)})

    [token] = configured_tokens(settings)

    assert token.namespaces is None
    assert token.value == (tmp_path / "http-token").read_text().strip()


def test_configured_tokens_come_from_both_variables_and_no_file_is_made(tmp_path: Path) -> None:
    env = {
        "MEMTIERS_HOME": str(tmp_path),
        "MEMTIERS_HTTP_TOKEN": TOKEN,
        "MEMTIERS_HTTP_TOKENS": "work-token-0123456789=work,notes ; every-token-0123456789=*",
    }

    tokens = configured_tokens(Settings.from_env(env))

    assert tokens == (
        HttpToken(TOKEN),
        HttpToken("work-token-0123456789", frozenset({"work", "notes"})),
        HttpToken("every-token-0123456789"),
    )
    assert not (tmp_path / "http-token").exists()


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"MEMTIERS_HTTP_TOKEN": "short"}, "MEMTIERS_HTTP_TOKEN must be 16 to 512 printable characters"),
        ({"MEMTIERS_HTTP_TOKEN": "has a space in it, long enough"}, "MEMTIERS_HTTP_TOKEN must be"),
        ({"MEMTIERS_HTTP_TOKENS": "secret-secret-secret"}, "MEMTIERS_HTTP_TOKENS entry 1 is not `token=namespace"),
        ({"MEMTIERS_HTTP_TOKENS": f"{TOKEN}=a;secret-secret-secret="}, "entry 2 names no namespace"),
        ({"MEMTIERS_HTTP_TOKENS": "secret-secret-secret=../up"}, "entry 1: namespace '../up' is not valid"),
    ],
)
def test_a_bad_token_setting_is_named_without_showing_the_token(env: dict[str, str], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env)

    assert problem in str(caught.value)
    assert "secret-secret" not in str(caught.value) and TOKEN not in str(caught.value)


def test_settings_never_show_a_token_in_their_repr() -> None:
    settings = Settings.from_env({"MEMTIERS_HTTP_TOKEN": TOKEN, "MEMTIERS_HTTP_TOKENS": f"x{TOKEN}=work"})

    assert TOKEN not in repr(settings)
    assert TOKEN not in repr(settings.http_tokens)


@pytest.mark.parametrize(
    ("authorization", "opens"),
    [
        (f"Bearer {TOKEN}".encode(), "any"),
        (f"bearer   {TOKEN}  ".encode(), "any"),
        (b"Bearer work-token-0123456789", "work"),
        (None, None),
        (b"", None),
        (b"Bearer", None),
        (TOKEN.encode(), None),
        (f"Basic {TOKEN}".encode(), None),
        (f"Bearer {TOKEN[:-1]}".encode(), None),
        (f"Bearer {TOKEN}x".encode(), None),
        (b"Bearer \xff\xfe\x00", None),
    ],
)
def test_grants_accept_exactly_the_configured_bearer_tokens(authorization: bytes | None, opens: str | None) -> None:
    grants = Grants([HttpToken(TOKEN), HttpToken("work-token-0123456789", frozenset({"work"}))])

    grant = grants.check(authorization)

    if opens is None:
        assert grant is None
    else:
        assert grant is not None
        assert grant.opens("work")
        assert grant.opens("home") is (opens == "any")
