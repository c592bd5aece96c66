"""The real embedded model, offline: generation runs in a process with no network at all.

Slow (loads a 1.1 GB model): marked ``slow`` and ``model``; CI runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model]

REPO = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent("""
    import json, socket, sys
    from specswarm.model import GenerationRequest, load_model
    from specswarm.model.assets import ensure_default_model
    from specswarm.spec import ModelSettings

    # Prove the namespace really has no network before trusting the result.
    try:
        socket.create_connection(("1.1.1.1", 443), timeout=2)
        online = True
    except OSError:
        online = False
    ensure_default_model()
    model = load_model(ModelSettings(backend="gpt4all", threads=2))
    gen = model.generate(GenerationRequest(
        system="You are a concise travel planner.",
        prompt="List 3 cities to visit on a trip to Japan, one per line starting with '- '.",
        max_tokens=80))
    print(json.dumps({"online": online, "text": gen.text, "tokens": gen.tokens,
                      "model": gen.model}))
""")


def _offline_command() -> list[str]:
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed: cannot cut the network off")
    if os.geteuid() != 0:
        pytest.skip("unshare -n needs root to create a network namespace")
    return ["unshare", "-n", sys.executable, "-c", CHILD]


def test_default_model_generates_on_topic_text_offline() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(_offline_command(), capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Failed to load libllamamodel" not in proc.stderr  # the harmless noise is filtered
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["online"] is False
    assert result["model"] == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    text = result["text"]
    assert text.strip(), "empty generation"
    assert 0 < result["tokens"] <= 80
    cities = {"tokyo", "kyoto", "osaka", "hiroshima", "nara", "sapporo", "yokohama", "fukuoka"}
    assert sum(c in text.lower() for c in cities) >= 2, text
    assert sum(line.lstrip().startswith("- ") for line in text.splitlines()) >= 3, text
