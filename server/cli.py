"""The `memtiers` command: serve over stdio, sweep, stats, log, reembed."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from server.settings import ConfigError, Settings
from tiers.errors import MemtiersError
from tiers.timeparse import iso, parse_time


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memtiers", description="Tiered memory for AI agents, over MCP.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="run the MCP server over stdio (what hosts start)")
    sweep = commands.add_parser("sweep", help="one pass of the demotion timer, printing what moved")
    sweep.add_argument("--at", help="as of this ISO 8601 time (default now)")
    sweep.add_argument("--dry-run", action="store_true", help="only show what would move")
    stats = commands.add_parser("stats", help="counts per tier, profile tokens, data folder, model")
    stats.add_argument("--json", action="store_true")
    history = commands.add_parser("log", help="the tier moves, newest first")
    history.add_argument("--id", help="only the moves of this memory id (and the profile entries it stated) or key")
    history.add_argument("--limit", type=int, default=50)
    commands.add_parser("reembed", help="re-embed every memory with MEMTIERS_EMBED_MODEL")
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
        if args.command == "serve":
            from server.app import serve

            return serve(settings)
        return _offline(args, settings)
    except MemtiersError as exc:
        print(f"memtiers: {exc}", file=sys.stderr)
        return 1


def _offline(args: argparse.Namespace, settings: Settings) -> int:
    from tiers.embedder import FastEmbedder
    from tiers.memory import Memory
    from tiers.privacy import open_private
    from tiers.reembed import reembed

    open_private(settings.home)
    embedder = FastEmbedder(settings.embed_model, cache_dir=settings.model_cache)
    if args.command == "reembed":
        count = reembed(settings.folder, embedder)
        print(f"re-embedded {count} memories with {embedder.name}")
        return 0
    memory = Memory(settings.folder, embedder, settings.memory)
    try:
        if args.command == "sweep":
            at = parse_time(args.at, "--at") if args.at else datetime.now(UTC)
            report = memory.sweep(at, dry_run=args.dry_run)
            verb = "would move" if report.dry_run else "moved"
            print(f"sweep as of {iso(at)}: {verb} {len(report.moves)}")
            for planned in report.moves:
                label = planned.key or planned.rid
                print(f"  {label} {planned.src.value} -> {planned.dst.value} ({planned.rule}, heat {planned.heat:.3f})")
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


if __name__ == "__main__":
    sys.exit(main())
