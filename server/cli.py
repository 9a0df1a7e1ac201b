"""The `memtiers` command: serve over stdio or HTTP, token, sweep, stats, log, reembed, export, import, hook."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from server.settings import ConfigError, Settings
from tiers.errors import MemtiersError
from tiers.text.timeparse import iso, parse_time

if TYPE_CHECKING:
    from tiers.memory import Memory
    from tiers.model.embedder import LoadingEmbedder
    from tiers.transfer.jsonl import Imported, Progress


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memtiers", description="Tiered memory for AI agents, over MCP.")
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve", help="run the MCP server over stdio (what hosts start), or over HTTP")
    serving.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp[/<namespace>] instead")
    serving.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default 127.0.0.1)")
    serving.add_argument("--port", type=int, default=8765, help="port with --http (default 8765; 0 picks a free one)")
    serving.add_argument("--expose", action="store_true", help="allow --host to be an address other machines reach")
    serving.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also accept this Host header (a name clients use to reach an exposed server); repeatable",
    )
    commands.add_parser("token", help="print the bearer token of `serve --http` (made on first use)")
    sweep = commands.add_parser("sweep", help="one pass of the demotion timer, printing what moved")
    sweep.add_argument("--at", help="as of this ISO 8601 time (default now)")
    sweep.add_argument("--dry-run", action="store_true", help="only show what would move")
    stats = commands.add_parser("stats", help="counts per tier, profile tokens, data folder, model")
    stats.add_argument("--json", action="store_true")
    history = commands.add_parser("log", help="the tier moves, newest first")
    history.add_argument("--id", help="only the moves of this memory id (and the profile entries it stated) or key")
    history.add_argument("--limit", type=int, default=50)
    commands.add_parser("reembed", help="re-embed every memory with MEMTIERS_EMBED_MODEL")
    export = commands.add_parser("export", help="write the whole namespace as memtiers JSONL (backup, move)")
    export.add_argument("--out", type=Path, help="file to write (default stdout); written whole or not at all")
    export.add_argument("--vectors", action="store_true", help="include each vector, so an import need not embed")
    export.add_argument(
        "--scope",
        choices=["project", "user"],
        default="project",
        help="the namespace (default), or the user scope every namespace reads (facts about the person)",
    )
    imports = commands.add_parser("import", help="bring memories in from a memtiers export or another tool")
    imports.add_argument("file", type=Path, help="the file (or a folder of Markdown notes)")
    imports.add_argument(
        "--from",
        dest="fmt",
        choices=["memtiers", "memory-server", "mem0", "markdown"],
        help="its format (default: detected)",
    )
    imports.add_argument(
        "--scope",
        choices=["project", "user"],
        help="import all of it into the namespace or the user scope (default: a memtiers export where it came from, "
        "other files each memory where remember puts it)",
    )
    hook = commands.add_parser("hook", help="answer a Claude Code hook (stdin JSON in, its answer out; docs/hosts/)")
    hook.add_argument("event", choices=["session-start", "pre-compact"])
    args = parser.parse_args(argv)

    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        print(f"memtiers: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        stream=sys.stderr, level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        if args.command == "serve" and args.http:
            from server.http import serve_http

            return serve_http(settings, args.host, args.port, args.expose, args.allow_host)
        if args.command == "serve":
            from server.app import serve

            return serve(settings)
        if args.command == "token":
            return _token(settings)
        if args.command == "hook":
            from server import hooks

            return hooks.main(args.event, settings)
        return _offline(args, settings)
    except ConfigError as exc:
        print(f"memtiers: {exc}", file=sys.stderr)
        return 2
    except MemtiersError as exc:
        print(f"memtiers: {exc}", file=sys.stderr)
        return 1


def _token(settings: Settings) -> int:
    from server.token import file_token

    if settings.http_tokens:
        print("memtiers: the tokens come from MEMTIERS_HTTP_TOKEN / MEMTIERS_HTTP_TOKENS here", file=sys.stderr)
        return 1
    print(file_token(settings.token_file))
    return 0


def _offline(args: argparse.Namespace, settings: Settings) -> int:
    from tiers.memory import Memory
    from tiers.model.catalog import open_embedder
    from tiers.privacy.folders import open_private
    from tiers.transfer.reembed import reembed

    open_private(settings.home)
    embedder = open_embedder(settings.embed_model, cache_dir=settings.model_cache)
    if args.command == "reembed":
        options = settings.memory
        with _progress("re-embedding") as progress:
            count = reembed(
                settings.folder,
                embedder,
                cold_uri=options.cold_uri,
                storage_options=options.storage_options,
                progress=progress,
            )
        print(f"re-embedded {count} memories with {embedder.name}")
        return 0
    if args.command == "export" and args.scope == "user":
        settings = _user_settings(settings)
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        if args.command == "export":
            _export(memory, settings, args.out, args.vectors)
        elif args.command == "import":
            _import(memory, settings, embedder, args.file, args.fmt, args.scope)
        elif args.command == "sweep":
            at = parse_time(args.at, "--at") if args.at else datetime.now(UTC)
            with _progress("sweeping") as progress:
                report = memory.sweep(at, dry_run=args.dry_run, progress=progress)
            verb = "would move" if report.dry_run else "moved"
            print(f"sweep as of {iso(at)}: {verb} {len(report.moves)}")
            for planned in report.moves:
                label = planned.key or planned.rid
                print(f"  {label} {planned.src.value} -> {planned.dst.value} ({planned.rule}, heat {planned.heat:.3f})")
            if report.pieces_filled:
                print(f"  gave {report.pieces_filled} long memories stored before pieces were kept their pieces")
            if report.dry_run:
                for rid, value in report.hot_candidates[:20]:
                    print(f"  would propose for the profile: {rid} (heat {value:.2f})")
            for c in memory.candidates() if not report.dry_run else ():
                why = f"heat {c['heat']:.2f}" if c.get("heat") is not None else c["reason"]
                key = f" as {c['key']}" if c.get("key") else ""
                print(f"  candidate for the profile: {c['id']}{key} ({why}); `promote` it to carry it every turn")
        elif args.command == "stats":
            data = memory.stats() | {"namespace": settings.namespace}
            if args.json:
                print(json.dumps(data, indent=2))
            else:
                for key, value in data.items():
                    print(f"{key}: {value}")
                print("(`memtiers reembed` moves every memory to the model MEMTIERS_EMBED_MODEL names)")
        elif args.command == "log":
            moves = memory.moves(args.id, args.limit)
            if not moves:
                print("no moves" + (f" of {args.id}" if args.id else ""))
            for m in moves:
                heat_then = "" if m.heat is None else f", heat {m.heat:.3f}"
                key = f" [{m.key}]" if m.key and m.key != m.rid else ""
                shown = f": {m.note}" if m.note else ""
                print(f"{iso(m.at)} {m.rid}{key} {m.src} -> {m.dst} ({m.rule}{heat_then}){shown}")
    finally:
        memory.close()
    return 0


@contextmanager
def _progress(label: str) -> Iterator[Progress]:
    """A progress bar on stderr when it is a terminal, silent otherwise (a pipe, a log file, a test)."""
    from tqdm import tqdm

    bar = tqdm(desc=label, unit=" memories", file=sys.stderr, disable=not sys.stderr.isatty(), dynamic_ncols=True)

    def update(done: int, total: int | None) -> None:
        if total is not None and bar.total != total:
            bar.total = total
            bar.refresh()
        bar.update(done - bar.n)

    try:
        yield update
    finally:
        bar.close()


def _export(memory: Memory, settings: Settings, out: Path | None, vectors: bool) -> None:
    from tiers.transfer.jsonl import export

    now = datetime.now(UTC)
    with _progress("exporting") as progress:
        lines = export(memory, settings.namespace, now, vectors=vectors, progress=progress)
        if out is None:
            for line in lines:
                sys.stdout.write(line + "\n")
            return
        partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
        try:
            with open(partial, "w", encoding="utf-8") as handle:
                count = sum(1 for line in lines if handle.write(line + "\n"))
            os.replace(partial, out)
        finally:
            partial.unlink(missing_ok=True)
    print(f"exported {settings.namespace} to {out} ({count} lines)", file=sys.stderr)


def _user_settings(settings: Settings) -> Settings:
    if settings.user_namespace is None:
        raise ConfigError("the user scope is off here (MEMTIERS_USER_SCOPE=off)")
    return settings.for_namespace(settings.user_namespace)


def _import(
    memory: Memory, settings: Settings, embedder: LoadingEmbedder, path: Path, fmt: str | None, scope: str | None
) -> None:
    """Import into the namespace and the user scope (tiers/scopes/transfer.py), each part reported apart."""
    from tiers.memory import Memory
    from tiers.scopes.routing import Scope
    from tiers.scopes.scoped import Scoped
    from tiers.scopes.transfer import import_file

    user = None
    if settings.user_namespace is not None and settings.user_namespace != settings.namespace:
        user_settings = _user_settings(settings)
        user = Memory(user_settings.folder, embedder, user_settings.memory)
    try:
        started = time.perf_counter()
        with _progress("importing") as progress:
            reports = import_file(
                Scoped(memory, user), path, datetime.now(UTC), fmt, Scope(scope) if scope else None, progress
            )
        seconds = max(time.perf_counter() - started, 1e-9)
    finally:
        if user is not None:
            user.close()
    for where, report in reports:
        into = f" into the user scope ({settings.user_namespace})" if where is Scope.USER else ""
        _report_import(report, path, into, seconds)


def _report_import(report: Imported, path: Path, into: str, seconds: float) -> None:
    print(
        f"imported {report.read} memories from {path} ({report.format}){into}: {report.added} new, "
        f"{report.duplicates} already stored, {report.protected} protected, {report.embedded} embedded, "
        f"{report.renamed} given new ids, {report.profile_set} profile entries, {report.moves} moves logged; "
        f"{report.read / seconds:.0f} memories/s"
    )
    for key in report.profile_kept:
        print(f"  profile {key!r} kept its current value; the imported one stays in its source records")
    for key in report.profile_unfit:
        print(f"  profile {key!r} left out: the profile is at its cap; its records still hold it (`promote` them)")
    if not report.complete:
        print(f"  {path} ends before its end line: it may be cut short; import the whole file again to finish")


if __name__ == "__main__":
    sys.exit(main())
