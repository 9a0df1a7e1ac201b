"""Credentials are found before anything is stored: refused by default, redacted when asked; ordinary text passes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import T0, count_rows
from tiers.errors import InvalidInput, SecretFound
from tiers.memory import Memory, MemorySettings
from tiers.model.embedder import FastEmbedder
from tiers.privacy.secrets import SecretPolicy, entropy, find_secrets, redact
from tiers.records import MemoryIn

# Fake but realistic: the formats as issued, random bodies (AWS's own documented example key included).
SAMPLES = {
    "aws-access-key": ("my AWS key is AKIAIOSFODNN7EXAMPLE for the deploy user", "AKIAIOSFODNN7EXAMPLE"),
    "github-token": (
        "CI pushes with ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    "github-token-fine-grained": (
        "use github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijABCDEFGHIJKLMNOPQRSTUVWXYZ01234567 to push",
        "github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijABCDEFGHIJKLMNOPQRSTUVWXYZ01234567",
    ),
    "gitlab-token": ("the gitlab token glpat-xY3kP9qLmN2vR8sT4wZ1 expires in May", "glpat-xY3kP9qLmN2vR8sT4wZ1"),
    "openai-api-key": (
        "OpenAI: sk-proj-3Fh8Kq2LmN9pRt5VwX7yZa1Bc4De6Fg8Hj0Kl2Mn4Op6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh",
        "sk-proj-3Fh8Kq2LmN9pRt5VwX7yZa1Bc4De6Fg8Hj0Kl2Mn4Op6Qr8St0Uv2Wx4Yz6Ab8Cd0Ef2Gh",
    ),
    "anthropic-api-key": (
        "export ANTHROPIC_API_KEY="
        "sk-ant-api03-Xy7kP3qLmN9vR2sT8wZ5aB1cD4eF6gH0jK2lM4nO6pQ8rS0tU2vW4xY6zA8bC0dE2fG4hI6jK8-AbCdEfAA",
        "sk-ant-api03-Xy7kP3qLmN9vR2sT8wZ5aB1cD4eF6gH0jK2lM4nO6pQ8rS0tU2vW4xY6zA8bC0dE2fG4hI6jK8-AbCdEfAA",
    ),
    "slack-token": (
        "the bot posts with xoxb-2345678901-2345678901234-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-2345678901-2345678901234-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    "stripe-key": ("billing uses sk_live_4eC39HqLyjWDarjtT1zdp7dc in prod", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    "jwt": (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    "private-key": (
        "my deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz"
        "\nc2gtZWQyNTUxOQAAACDl9Vd3Vn8C\n-----END OPENSSH PRIVATE KEY-----\nthanks",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz",
    ),
    "password": ("the database password: Tr0ub4dor&3x!", "Tr0ub4dor&3x!"),
    "passwd": ("mysql -u root passwd=hunter2hunter2", "hunter2hunter2"),
    "secret": ('oauth config: client_secret = "d9Fk2LmQ8pR4sT7vW1xZ3yB6"', "d9Fk2LmQ8pR4sT7vW1xZ3yB6"),
    "secret-in-json": ('{"client_secret": "Qm9Fk2LmQ8pR4sT7vW1xZ3yB"}', "Qm9Fk2LmQ8pR4sT7vW1xZ3yB"),
    "api-key": ("api_key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    "assignment-after-a-word": ("api-key: api_key: 7Hq2Lm9Pz4Xw8Rt3Vb6N", "7Hq2Lm9Pz4Xw8Rt3Vb6N"),
    "url-password": ("connect to postgres://app:s3cr3tPa55@db.internal:5432/app", "s3cr3tPa55"),
    "near-a-word": (
        "the AWS secret key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY is in my notes",
        "wJalrXUtnFEMI/K7MDENG",
    ),
}

ORDINARY = [
    "the fix landed in commit 3f9c0a1b2c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f yesterday",
    "the key commit is 3f9c0a1 and its parent 9b8a7c6",
    "session 123e4567-e89b-12d3-a456-426614174000 was slow",
    "we upgraded lancedb to 0.40.0 and pyarrow to 26.0.1; mcp>=2.3,<3",
    "sha256 of the release tarball is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "the checksum key: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "docs are at https://example.com/docs/getting-started?ref=nav#install",
    "my password manager is 1Password",
    "I forgot my password again; the password is in the vault",
    "base64 words like SGVsbG8gd29ybGQ and dGVzdA== appear in the tutorial",
    "the token budget is 1024 tokens per recall; token: 1024",
    "The API key rotation policy is every 90 days",
    "scikit-learn, sk-learn-is-a-great-library-for-machine-learning",
    "api_key: <your key here>, token: ${GITHUB_TOKEN}, password: ********",
    "set secret=None in the tests, then password=os.environ['DB_PASSWORD']",
    "I am allergic to peanuts",
    "the database password: [redacted password]",
    "ETag 5d41402abc4b2a76b9719d911017c592, key id 1234567890",
]


@pytest.mark.parametrize(("text", "secret"), SAMPLES.values(), ids=list(SAMPLES))
def test_a_realistic_credential_is_found_and_its_span_covers_the_secret(text: str, secret: str) -> None:
    found = find_secrets(text)

    assert found, text
    start = text.index(secret)
    assert any(f.start <= start and start + len(secret) <= f.end for f in found), [
        (f.kind, f.start, f.end) for f in found
    ]
    assert secret not in redact(text, found)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_with_hashes_ids_versions_and_urls_is_no_secret(text: str) -> None:
    assert find_secrets(text) == []


def test_no_memory_or_question_of_the_multilingual_set_is_taken_for_a_credential() -> None:
    """Every note, fact and question in eight languages and six scripts (tests/bench/multilingual.py): long CJK runs,
    Arabic, Cyrillic, product codes and plate numbers among them."""
    from tests.bench.multilingual import facts, ordinary, questions

    texts = [n.text for n in ordinary()] + [f.text for f in facts()] + [q.text for q in questions()]

    assert len(texts) > 1_900
    assert [(text, find_secrets(text)) for text in texts if find_secrets(text)] == []


def test_a_finding_names_the_kind_of_credential_and_redact_leaves_a_marker_that_is_never_found_again() -> None:
    text = SAMPLES["aws-access-key"][0]

    [finding] = find_secrets(text)
    redacted = redact(text, [finding])

    assert (finding.kind, finding.label) == ("aws-access-key", "an AWS access key")
    assert (finding.start, finding.end) == (14, 34)
    assert redacted == "my AWS key is [redacted aws-access-key] for the deploy user"
    assert find_secrets(redacted) == []


def test_a_private_key_without_its_end_line_is_redacted_to_the_end_of_the_text() -> None:
    text = "key follows\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi3w5Y0nd7a"

    assert redact(text, find_secrets(text)) == "key follows\n[redacted private-key]"


def test_entropy_of_a_random_key_is_above_that_of_a_word() -> None:
    assert entropy("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") > 4.0 > entropy("passwordpassword")


# wired into the memory


@pytest.fixture
def redacting(tmp_path: Path, embedder: FastEmbedder) -> Iterator[Memory]:
    mem = Memory(tmp_path / "ns", embedder, MemorySettings(secrets=SecretPolicy.REDACT))
    yield mem
    mem.close()


def test_remember_refuses_a_credential_naming_it_and_where_without_echoing_it(memory: Memory) -> None:
    text, secret = SAMPLES["aws-access-key"]

    with pytest.raises(SecretFound) as refused:
        memory.remember([MemoryIn(content=text)], T0)

    assert "an AWS access key at characters 15-34 of content" in str(refused.value)
    assert "Nothing was stored" in str(refused.value)
    assert secret not in str(refused.value)
    assert isinstance(refused.value, InvalidInput)
    assert refused.value.kinds == ("aws-access-key",)
    assert count_rows(memory.folder) == 0
    assert memory.moves() == []


def test_one_credential_in_a_batch_refuses_the_whole_batch_and_names_the_memory_and_field(memory: Memory) -> None:
    batch = [
        MemoryIn(content="We deploy on Tuesdays"),
        MemoryIn(content="CI settings", metadata={"token": SAMPLES["github-token"][1], "runs": 3}),
        MemoryIn(content="Release notes", tags=["ops", SAMPLES["stripe-key"][1]]),
    ]

    with pytest.raises(SecretFound) as refused:
        memory.remember(batch, T0)

    message = str(refused.value)
    assert "a GitHub token at characters 1-40 of metadata 'token' of memory 2" in message
    assert "a Stripe secret key at characters 1-32 of tag 2 of memory 3" in message
    assert count_rows(memory.folder) == 0


def test_profile_set_refuses_a_credential_value_and_leaves_the_profile_unchanged(memory: Memory) -> None:
    memory.set_profile({"name": "Ana"}, T0)

    with pytest.raises(SecretFound, match=r"a password at characters \d+-\d+ of profile value 'db'"):
        memory.set_profile({"db": SAMPLES["password"][0], "project": "memtiers"}, T0)

    assert set(memory.profile()) == {"name"}


def test_redact_mode_stores_the_memory_with_a_marker_and_recall_finds_it(redacting: Memory) -> None:
    text, secret = SAMPLES["github-token"]

    [stored] = redacting.remember([MemoryIn(content=text, metadata={"note": f"old one was {secret}"})], T0)

    record = redacting.get(stored.id)
    assert record.content == "CI pushes with [redacted github-token]"
    assert record.metadata["note"] == "old one was [redacted github-token]"
    found = redacting.recall("how does CI push?", T0)
    assert [h.record.id for h in found.hits] == [stored.id]


def test_redact_mode_stores_a_profile_value_with_the_secret_replaced(redacting: Memory) -> None:
    change = redacting.set_profile({"openai": SAMPLES["openai-api-key"][0]}, T0)

    assert change.entries["openai"].value == "OpenAI: [redacted openai-api-key]"


def test_a_repeat_of_a_redacted_memory_is_the_same_memory(redacting: Memory) -> None:
    [first] = redacting.remember([MemoryIn(content=SAMPLES["aws-access-key"][0])], T0)
    [again] = redacting.remember([MemoryIn(content="my AWS key is AKIAI44QH8DHBEXAMPLE for the deploy user")], T0)

    assert again.duplicate_of == first.id
