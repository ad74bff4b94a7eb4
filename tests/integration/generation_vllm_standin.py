"""A stand-in for `vllm serve`: same argv shape, same /health, /v1/models, /v1/chat/completions.

Run as a script by the vLLM supervision tests (never imported by the product). Extra flags
mimic what the tests need from a real server: forked workers in the same process group, a
server that ignores SIGTERM, one that never becomes ready, one that dies on later starts.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("subcommand", choices=["serve"])
    parser.add_argument("model")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--worker-pidfile")
    parser.add_argument("--starts-file", help="append a start time; exit 3 unless first start")
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--never-ready", action="store_true")
    args = parser.parse_args()

    if args.starts_file:
        first = not os.path.exists(args.starts_file)
        with open(args.starts_file, "a") as f:
            f.write(f"{time.monotonic()}\n")
        if not first:
            print("stand-in: refusing to start again", flush=True)
            sys.exit(3)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.worker_pidfile:
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(args.worker_pidfile, "a") as f:
            f.write(f"{worker.pid}\n")
    if args.never_ready:
        print("stand-in: loading forever", flush=True)
        time.sleep(600)

    served = os.environ.get("STANDIN_SERVED_NAME", args.model)

    class Handler(BaseHTTPRequestHandler):
        def _json(self, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path == "/health":
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path == "/v1/models":
                self._json({"object": "list", "data": [{"id": served, "object": "model"}]})
            else:
                self.send_error(404)

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = "echo: " + request["messages"][-1]["content"]
            self._json({
                "id": f"chatcmpl-{os.getpid()}",
                "object": "chat.completion",
                "model": served,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
            })

        def log_message(self, format: str, *fargs: object) -> None:
            pass

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"stand-in: serving {served} on port {args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
