"""The tools: thin wrappers that parse, call the memory off the event loop, and shape a compact answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any, Literal, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from server import shape
from server.errors import as_tool_errors
from server.runtime import Runtime
from tiers.model.rerank import THOROUGH
from tiers.records import Kind, MemoryIn, MetaValue, Tier
from tiers.scopes.routing import Scope
from tiers.text.timeparse import parse_time

T = TypeVar("T")

REMEMBER = """Store a memory for later: one (content plus optional fields) or a batch of up to 1,000 (memories).
Use it when the user states a fact about themselves, a preference, a constraint, a decision, or anything
they will expect you to know later. Give `kind` (identity, preference, constraint, relationship, health,
decision, task, event, note) when you know it: durable kinds are never demoted to cold. Give `key` to also
put the fact in the hot profile. Saying the same thing twice refreshes the stored memory (duplicate_of).
Facts about the person (who they are, health, family, the preferences and constraints they state of themselves)
go to the user scope, which every project reads; everything else stays in this project. Pass `scope` to choose.
Returns, per memory, its id, the tier it landed in (warm, or hot when it went into the profile), its scope when
the user's, and the earlier memories it may update ("may update [id] of <date>: <text>"): when it does, call
remember again with the same content and `supersedes` = those ids, and the earlier ones are kept as history
behind it."""

RECALL = """Search memory for what answers `query`. Use it before answering anything that may depend on
earlier conversations, decisions or facts about the user. Searches the hot profile and warm and cold memories by
meaning and by words, with the memories said just before and after a hit; cold (old) ones rank just below
equally good warm ones, in this project and in the user scope every project shares. Set `max_tokens` to cap
everything you read back. Returns the matching profile entries, then the best memories grouped under the day
they happened (under "user scope" for the user's) ("2026-11-30:" or "2026-11-30 cold:"),
one line each: [id] content #tags, then how many were left out by the budget. A long memory that does not fit
the budget whole is shown by its part nearest the query, marked "(excerpt: words 121-270 of 812; the whole is
1130 tokens)": recall again with a larger `max_tokens` to read it all. When what you need is not there, ask
again with `thorough`: a slower model reads the best candidates beside your query and finds what is said in
other words than yours. Where two hits may be the same fact at two times, the later comes first and the
earlier is marked "(later: [id])": that later memory may replace it."""

PROFILE = """Read or change the hot profile: the few facts carried every turn (name, current project,
preferences, hard constraints). With no arguments it returns the profile. `set` adds or changes entries
({key: value}); a changed value is kept in warm memory as history. `unset` removes entries (they go down
to warm, not away). `pin` keeps entries from being demoted when unused. The profile has a token cap:
a change past it is refused with the entries that could be demoted. Key the project being worked on as
`current_project` and its standing decisions as `project.<name>.<topic>`: another project's entries go down
to warm once it has not been current for 30 days (recall still finds them) and come back when it is again.
Entries about the person (name, pronouns, language, timezone, diet.*, health.*, family.*, preferences.*) live in the
user scope every project reads; the rest in this project. A key changed stays where it is; `scope` puts the keys
set there (moving one from the other scope). The two share the token cap."""

PROMOTE = """Move a memory up a tier when you judge it durable: to "hot" makes a profile entry under `key`
whose source is that memory; to "warm" brings a cold memory back into everyday search. Promoting to where
it already is says so and is no error. Use the id that recall or remember returned."""

FORGET = """Delete a memory from every tier and from search, for privacy or when the user asks; in this project
or in the user scope, wherever it is.
Profile entries that only this memory supported are named in the answer: unset them with profile if
they should go too. This cannot be undone."""


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def register(server: MCPServer, runtime: Runtime) -> None:
    """Add every memtiers tool to `server`."""

    async def call(work: Callable[[], T]) -> T:
        with as_tool_errors():
            result = await runtime.run(work)
        await runtime.notify_if_profile_changed()
        return result

    @server.tool(description=REMEMBER, annotations=ToolAnnotations(destructive_hint=False))
    async def remember(
        content: Annotated[str | None, Field(description="The memory (for a single memory).")] = None,
        tags: Annotated[list[str] | None, Field(description="Labels to filter recall by.")] = None,
        metadata: Annotated[dict[str, MetaValue] | None, Field(description="Flat map, returned unchanged.")] = None,
        source: Annotated[str | None, Field(description="Where it came from: URL, file, message id.")] = None,
        occurred_at: Annotated[str | None, Field(description="ISO 8601 time it happened; default now.")] = None,
        forget_after: Annotated[
            str | None, Field(description="ISO 8601 duration (P30D) or time after which it goes cold.")
        ] = None,
        kind: Annotated[Kind | None, Field(description="What the memory states.")] = None,
        key: Annotated[str | None, Field(description="Profile key: also carry this fact in the hot profile.")] = None,
        supersedes: Annotated[
            list[str] | None, Field(description="Ids of earlier memories this one replaces (kept as history).")
        ] = None,
        memories: Annotated[
            list[MemoryIn] | None,
            Field(description="A batch (imports), instead of the single-memory fields."),
        ] = None,
        scope: Annotated[
            Literal["user", "project"] | None,
            Field(description="user: about the person, read in every project; project: this one. Default: decided."),
        ] = None,
    ) -> CallToolResult:
        if memories is not None:
            if content is not None:
                raise ToolError("invalid input: give either content (one memory) or memories (a batch), not both")
            items = memories
        else:
            if content is None:
                raise ToolError("invalid input: content is required (or memories, for a batch)")
            with as_tool_errors():
                items = [_memory_in(content, tags, metadata, source, occurred_at, forget_after, kind, key, supersedes)]
        where = Scope(scope) if scope else None
        placed = await call(lambda: runtime.scoped.remember(items, runtime.clock(), where))
        return _result(shape.placed_text(placed), {"stored": [shape.placed_data(p) for p in placed]})

    @server.tool(description=RECALL, annotations=ToolAnnotations(read_only_hint=True))
    async def recall(
        query: Annotated[str, Field(min_length=1, description="What to look for, in plain words.")],
        limit: Annotated[int | None, Field(ge=1, le=200, description="Most memories to return (default 10).")] = None,
        max_tokens: Annotated[
            int | None, Field(ge=32, le=100_000, description="Token budget for everything returned.")
        ] = None,
        tiers: Annotated[
            list[Literal["hot", "warm", "cold"]] | None,
            Field(description="Tiers to search; default hot and warm."),
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Only memories with any of these tags.")] = None,
        since: Annotated[str | None, Field(description="Only memories that happened at or after (ISO 8601).")] = None,
        until: Annotated[str | None, Field(description="Only memories that happened at or before (ISO 8601).")] = None,
        thorough: Annotated[
            bool, Field(description=f"Read the best {THOROUGH} candidates again with a slower model (about a second).")
        ] = False,
    ) -> CallToolResult:
        with as_tool_errors():
            start = parse_time(since, "since") if since else None
            end = parse_time(until, "until") if until else None
        chosen = [Tier(t) for t in tiers] if tiers else None
        count = limit or (50 if max_tokens else 10)
        recalled = await call(
            lambda: runtime.scoped.recall(
                query, runtime.clock(), count, max_tokens, chosen, tuple(tags or ()), start, end, thorough
            )
        )
        return _result(recalled.text, shape.recalled_data(recalled))

    @server.tool(description=PROFILE)
    async def profile(
        set: Annotated[dict[str, str] | None, Field(description="Entries to add or change: {key: value}.")] = None,
        unset: Annotated[list[str] | None, Field(description="Keys to remove (kept in warm as history).")] = None,
        pin: Annotated[list[str] | None, Field(description="Keys never demoted for being unused.")] = None,
        unpin: Annotated[list[str] | None, Field(description="Keys to unpin.")] = None,
        dismiss: Annotated[
            list[str] | None,
            Field(description="Flagged keys to keep as they are (a newer memory does not update them)."),
        ] = None,
        scope: Annotated[
            Literal["user", "project"] | None,
            Field(description="Where the keys in `set` go: user (every project) or project. Default: decided."),
        ] = None,
    ) -> CallToolResult:
        scoped = runtime.scoped
        if dismiss:
            await call(lambda: scoped.dismiss(dismiss, runtime.clock()))
        if not (set or unset or pin or unpin):
            # The candidates are read off the loop too: listing them opens the store and reads LanceDB.
            profiles, flags = await call(lambda: (scoped.profiles(), scoped.flags()))
            return _result(*shape.profiles_view(profiles, flags, runtime.namespace))
        where = Scope(scope) if scope else None
        change = await call(
            lambda: scoped.set_profile(set or {}, runtime.clock(), unset or (), pin or (), unpin or (), where)
        )
        flags = await call(scoped.flags)
        text, data = shape.profiles_view(change, flags, runtime.namespace)
        if change.moved:
            text += f"\nmoved to the {scope} scope: {', '.join(change.moved)}"
        if change.demoted:
            text += f"\nold values kept in warm: {', '.join(change.demoted)}"
            data["history_ids"] = list(change.demoted)
        return _result(text, data)

    @server.tool(description=PROMOTE)
    async def promote(
        id: Annotated[str, Field(description="The memory's id, as remember or recall returned it.")],
        to: Annotated[Literal["hot", "warm"], Field(description="Target tier.")] = "hot",
        key: Annotated[str | None, Field(description="Profile key, when going hot.")] = None,
    ) -> CallToolResult:
        where, done = await call(lambda: runtime.scoped.promote(id, runtime.clock(), Tier(to), key))
        return _result(_in_scope(shape.promoted_text(done), where), asdict(done) | {"scope": where.value})

    @server.tool(description=FORGET, annotations=ToolAnnotations(destructive_hint=True))
    async def forget(
        id: Annotated[str, Field(description="The memory's id.")],
    ) -> CallToolResult:
        where, done = await call(lambda: runtime.scoped.forget(id, runtime.clock()))
        return _result(_in_scope(shape.forgotten_text(done), where), asdict(done) | {"scope": where.value})


def _in_scope(text: str, scope: Scope) -> str:
    return f"{text} (user scope)" if scope is Scope.USER else text


def _memory_in(
    content: str,
    tags: list[str] | None,
    metadata: dict[str, MetaValue] | None,
    source: str | None,
    occurred_at: str | None,
    forget_after: str | None,
    kind: Kind | None,
    key: str | None,
    supersedes: list[str] | None = None,
) -> MemoryIn:
    from pydantic import ValidationError

    try:
        return MemoryIn(
            content=content,
            tags=tags or [],
            metadata=metadata or {},
            source=source,
            occurred_at=occurred_at,
            forget_after=forget_after,
            kind=kind,
            key=key,
            supersedes=supersedes or [],
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ToolError(f"invalid input: {problems}") from None
