"""llama.cpp's own OpenAI-compatible HTTP server (the ``xllamacpp`` wheel) in its own process,
for the real-server tests (tests/test_openai_real.py).

Run as ``python tests/helpers/llama_server.py --model GGUF --port N [--ctx N] [--threads N]
[--api-key KEY]``. It serves ``/v1/chat/completions``, ``/v1/models`` and ``/health`` on
127.0.0.1 only, prints one JSON line ``{"event": "started", "url": ...}`` once the server object
exists (the model may still be loading: poll ``/health``), and stops when its stdin closes or a
signal arrives.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    if args.api_key:
        params.api_keys = [args.api_key]
    server = xllamacpp.Server(params)
    sys.stdout.write(json.dumps({"event": "started", "url": str(server.listening_address)}) + "\n")
    sys.stdout.flush()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        sys.stdin.read()  # until the test closes our stdin (or dies)
    except KeyboardInterrupt:
        pass
    del server


if __name__ == "__main__":
    main()
