"""Credentials in what an agent asks to store: found before anything is embedded or written.

A pattern set rather than a scanner library: the maintained ones on PyPI scan source files line by
line, miss the token formats agents paste most (GitHub fine-grained, GitLab, OpenAI, Anthropic),
return no positions, and keep their settings in process-global state (see the commit that added this).

Each finding names its kind and where it is, never the secret itself; `redact` replaces each with a
marker such as `[redacted aws-access-key]`, which is itself never found again.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from tiers.errors import SecretFound
from tiers.records import MemoryIn

T = TypeVar("T")


class SecretPolicy(StrEnum):
    """What `remember` and `profile set` do with a credential: refuse the call, or store it redacted."""

    REFUSE = "refuse"
    REDACT = "redact"


@dataclass(frozen=True)
class Finding:
    """One credential: its kind (`aws-access-key`), what to call it, and its span (0-based, end excluded)."""

    kind: str
    label: str
    start: int
    end: int


@dataclass(frozen=True)
class _Pattern:
    kind: str
    label: str
    hints: tuple[str, ...]  # one of these is in any text the regex can match: a cheap test first
    regex: re.Pattern[str]
    group: int = 0  # the part of the match that is the secret
    check: Callable[[str], bool] = lambda _: True


def _mixed(value: str) -> bool:
    """Random keys mix letters and digits; words and names (`sk-learn-is-great`) do not."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _random(value: str) -> bool:
    """A token that looks generated: mixed letters and digits, not hex alone (git hashes, checksums, UUIDs)."""
    body = value.strip("'\"")
    if len(body) < 16 or not _mixed(body) or _HEXISH.fullmatch(body):
        return False
    return entropy(body) >= 3.5


_HEXISH = re.compile(r"[0-9a-f-]+|[0-9A-F-]+")
_B = r"(?<![A-Za-z0-9_-])"  # a token starts here
_E = r"(?![A-Za-z0-9_-])"  # and ends here

_PATTERNS = [
    _Pattern(
        "private-key",
        "a private key block",
        ("PRIVATE KEY",),
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    _Pattern(
        "aws-access-key",
        "an AWS access key",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ),
    _Pattern(
        "github-token",
        "a GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        re.compile(_B + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}" + _E),
    ),
    _Pattern(
        "github-token", "a GitHub token", ("github_pat_",), re.compile(_B + r"github_pat_[A-Za-z0-9_]{22,255}" + _E)
    ),
    _Pattern(
        "gitlab-token",
        "a GitLab token",
        ("gl",),
        re.compile(_B + r"gl(?:pat|dt|rt|ptt|soat|cbt)-[A-Za-z0-9_-]{20,}" + _E),
    ),
    _Pattern(
        "anthropic-api-key", "an Anthropic API key", ("sk-ant-",), re.compile(_B + r"sk-ant-[A-Za-z0-9_-]{20,}" + _E)
    ),
    _Pattern(
        "openai-api-key",
        "an OpenAI API key",
        ("sk-",),
        re.compile(_B + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}" + _E),
        check=_mixed,
    ),
    _Pattern(
        "slack-token", "a Slack token", ("xox",), re.compile(_B + r"xox[abposre]-[A-Za-z0-9-]{10,}" + _E), check=_mixed
    ),
    _Pattern(
        "slack-webhook",
        "a Slack webhook URL",
        ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    ),
    _Pattern(
        "stripe-key",
        "a Stripe secret key",
        ("_live_", "_test_"),
        re.compile(_B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _E),
    ),
    _Pattern("google-api-key", "a Google API key", ("AIza",), re.compile(_B + r"AIza[0-9A-Za-z_-]{35}" + _E)),
    _Pattern(
        "huggingface-token",
        "a Hugging Face token",
        ("hf_",),
        re.compile(_B + r"hf_[A-Za-z0-9]{34,}" + _E),
        check=_mixed,
    ),
    _Pattern("npm-token", "an npm token", ("npm_",), re.compile(_B + r"npm_[A-Za-z0-9]{36}" + _E), check=_mixed),
    _Pattern("pypi-token", "a PyPI token", ("pypi-AgE",), re.compile(_B + r"pypi-AgE[A-Za-z0-9_-]{50,}" + _E)),
    _Pattern(
        "sendgrid-key",
        "a SendGrid API key",
        ("SG.",),
        re.compile(_B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E),
    ),
    _Pattern(
        "jwt",
        "a JSON web token",
        ("eyJ",),
        re.compile(_B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _E),
    ),
    _Pattern(
        "url-password",
        "a password in a URL",
        ("://",),
        re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{1,64}:([^\s:/@]{3,128})@[^\s/@]"),
        group=1,
        check=lambda v: not _placeholder(v),
    ),
]

# `password: x`, `passwd=x`, `"api_key": "x"`, `secret=x`, `the password is x`: the value is the secret.
_STRONG = r"pass(?:word|wd|phrase)|pwd"
_WEAK = (
    r"secret(?:[_ -]?key)?|client[_ -]?secret|api[_ -]?key|apikey|access[_ -]?key(?:[_ -]?id)?|"
    r"auth[_ -]?token|access[_ -]?token|refresh[_ -]?token|bearer[_ -]?token|token|private[_ -]?key|"
    r"credentials?|aws[_ -]?secret[_ -]?access[_ -]?key"
)
_VALUE = r"(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s\"'`,;]{1,200})"
_ASSIGNED = re.compile(
    rf"(?<![A-Za-z0-9])(?:({_STRONG})|({_WEAK}))[\"']?\s*(?:[:=]|=>|\bis\b)\s*{_VALUE}",
    re.IGNORECASE,
)
_NEAR = re.compile(
    rf"(?<![A-Za-z0-9])(?:{_STRONG}|{_WEAK}|key|bearer|authorization)\b(?:\W+\w+){{0,3}}?\W+([A-Za-z0-9+/=_.-]{{16,}})",
    re.IGNORECASE,
)
_WORDS = ("pass", "pwd", "secret", "key", "token", "credential", "bearer", "authorization")
_PLACEHOLDER = re.compile(
    r"^(?:\[redacted\b.*|<[^>]*>?|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\(?[A-Za-z_]*\)?s?|\*+|x+|\.+|"
    r"none|null|nil|empty|unset|redacted|hidden|changeme|required|optional|example|placeholder|true|false|"
    r"env(?:iron)?\b.*|os\.environ.*|getenv.*)$",
    re.IGNORECASE,
)


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.match(value.strip("'\"")))


def _assigned_secret(value: str, strong: bool, by_is: bool) -> bool:
    """Whether a value given to a credential word is itself a credential (not `<your key>` or a plain word)."""
    body = value.strip("'\"")
    if len(body) < 4 or _placeholder(body):
        return False
    if by_is:  # "the password is in the vault": only a value that looks made up counts
        return strong and len(body) >= 6 and any(not c.isalpha() for c in body)
    if strong:
        return True
    return len(body) >= 8 and _mixed(body) and not body.isdigit()


def find_secrets(text: str) -> list[Finding]:
    """Every credential in `text`, in order, overlaps merged into the first (most specific) finding."""
    found: list[Finding] = []
    for pattern in _PATTERNS:
        if not any(hint in text for hint in pattern.hints):
            continue
        for match in pattern.regex.finditer(text):
            if pattern.check(match.group(pattern.group)):
                found.append(Finding(pattern.kind, pattern.label, match.start(pattern.group), match.end(pattern.group)))
    lowered = text.lower()
    if not any(word in lowered for word in _WORDS):
        return _merged(found)
    for match in _overlapping(_ASSIGNED, text, resume=lambda m: m.start(3)):
        strong = match.group(1) is not None
        if _assigned_secret(match.group(3), strong, _by_is(match)):
            kind, label = ("password", "a password") if strong else ("secret", "a secret value")
            start, end = _unquoted(match, 3)
            found.append(Finding(kind, label, start, end))
    for match in _overlapping(_NEAR, text, resume=lambda m: m.start() + 1):
        if _random(match.group(1)):
            found.append(Finding("high-entropy", "a random-looking key", match.start(1), match.end(1)))
    return _merged(found)


def _overlapping(regex: re.Pattern[str], text: str, resume: Callable[[re.Match[str]], int]) -> Iterator[re.Match[str]]:
    """Matches of `regex`, each search resuming inside the last match ("api-key: api_key: X" holds two)."""
    at = 0
    while (match := regex.search(text, at)) is not None:
        yield match
        at = max(resume(match), match.start() + 1)


def _by_is(match: re.Match[str]) -> bool:
    """Whether the word and its value are joined by `is` rather than `:` or `=`."""
    word_end = match.end(1) if match.group(1) is not None else match.end(2)
    return match.string[word_end : match.start(3)].strip(" \t\"'").lower().startswith("is")


def _unquoted(match: re.Match[str], group: int) -> tuple[int, int]:
    start, end = match.span(group)
    if match.group(group)[0] in "\"'":
        return start + 1, end - 1
    return start, end


def _merged(found: Iterable[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for finding in sorted(found, key=lambda f: (f.start, -(f.end - f.start))):
        if out and finding.start < out[-1].end:
            last = out[-1]
            out[-1] = Finding(last.kind, last.label, last.start, max(last.end, finding.end))
            continue
        out.append(finding)
    return out


def redact(text: str, findings: Iterable[Finding]) -> str:
    """`text` with every finding replaced by a marker naming its kind."""
    parts: list[str] = []
    at = 0
    for finding in sorted(findings, key=lambda f: f.start):
        parts += [text[at : finding.start], f"[redacted {finding.kind}]"]
        at = finding.end
    return "".join([*parts, text[at:]])


def describe(findings: Iterable[Finding], where: str) -> str:
    """'an AWS access key at characters 16-35 of content': kinds and 1-based positions, never the values."""
    return "; ".join(f"{f.label} at characters {f.start + 1}-{f.end} of {where}" for f in findings)


class Screen:
    """Applies one policy to many fields: collects what would be refused, or returns each field redacted."""

    def __init__(self, policy: SecretPolicy) -> None:
        self.policy = policy
        self.problems: list[str] = []
        self.kinds: list[str] = []

    def text(self, value: str, where: str) -> str:
        findings = find_secrets(value)
        if not findings:
            return value
        self.kinds += [f.kind for f in findings]
        if self.policy is SecretPolicy.REDACT:
            return redact(value, findings)
        self.problems.append(describe(findings, where))
        return value

    def mapping(self, values: Mapping[str, T], where: str, of: str = "") -> dict[str, T]:
        """String values of a flat map, each named `where 'key' of`."""
        return {k: self.text(v, f"{where} {k!r}{of}") if isinstance(v, str) else v for k, v in values.items()}  # type: ignore[misc]

    def raise_if_refused(self, what: str) -> None:
        if self.problems:
            raise SecretFound(
                f"{what} holds what looks like a credential: {'; '.join(self.problems)}. Nothing was stored. "
                "Store the fact without the secret itself (say what the key or password is for and where it is "
                "kept, e.g. 'the deploy key is in the team vault')",
                tuple(self.kinds),
            )


def screen_memories(items: Sequence[MemoryIn], policy: SecretPolicy) -> list[MemoryIn]:
    """The batch as it may be stored: refused whole if any field of any memory holds a credential, or redacted."""
    screen = Screen(policy)
    out: list[MemoryIn] = []
    for number, item in enumerate(items, start=1):
        of = "" if len(items) == 1 else f" of memory {number}"
        content = screen.text(item.content, "content" + of)
        tags = [screen.text(tag, f"tag {i}{of}") for i, tag in enumerate(item.tags, start=1)]
        metadata = screen.mapping(item.metadata, "metadata", of)
        source = None if item.source is None else screen.text(item.source, "source" + of)
        changed = (content, tags, metadata, source) != (item.content, item.tags, item.metadata, item.source)
        out.append(
            item.model_copy(update={"content": content, "tags": tags, "metadata": metadata, "source": source})
            if changed
            else item
        )
    screen.raise_if_refused("the memory" if len(items) == 1 else "the batch")
    return out


def screen_values(values: Mapping[str, str], policy: SecretPolicy) -> dict[str, str]:
    """Profile values as they may be stored: refused if one holds a credential, or redacted."""
    screen = Screen(policy)
    out = {key: screen.text(value, f"profile value {key!r}") for key, value in values.items()}
    screen.raise_if_refused("the profile change")
    return out
