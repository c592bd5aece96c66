"""The shared model service's llama.cpp workers (``model.runtime``), on the embedded model.

A worker keeps earlier prompts evaluated, and the plan must not depend on that: a request gets
the same greedy text whether its prompt is read whole, read after an earlier prompt that
shares its beginning (the slot's own cache), or restored from a saved state after the slot
served something else. With llama.cpp's repacked weights or flash attention on, the second and
third differed from the first on this very request; the worker turns both off. Slow (loads the
1.1 GB model and generates on the CPU).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from specswarm.model import GenerationRequest
from specswarm.model.assets import ensure_default_model
from specswarm.model.llamacpp_worker import LlamaCppWorker
from specswarm.model.service import ModelService

pytestmark = [pytest.mark.slow, pytest.mark.model]

ROOT = Path(__file__).resolve().parent.parent
SYSTEM = "You are a practical assistant. Answer with 5 lines starting with '- '."


def _ask(task: str) -> GenerationRequest:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")[:1500]
    return GenerationRequest(prompt=f"{readme}\nTask: {task}", system=SYSTEM, max_tokens=48)


def test_an_answer_does_not_depend_on_what_the_worker_read_before() -> None:
    kyoto = _ask("list three things to do in Kyoto")
    fresh = LlamaCppWorker(ensure_default_model(), threads=1)
    service = ModelService(fresh)
    whole = service.answer(kyoto).gen
    assert whole is not None and whole.text.startswith("-")
    read_whole = service.counts.prompt_tokens
    assert read_whole > 300 and service.counts.reused_tokens == 0

    # the same beginning, another task: most of it is found evaluated
    assert service.answer(_ask("list three museums in Tokyo")).gen is not None
    assert service.counts.reused_tokens > 300
    again = fresh.generate(kyoto)
    # another prompt in between; then the Kyoto one comes back from a saved state
    assert service.answer(GenerationRequest(prompt="Name two colours. " * 20, system="Be brief.")).gen
    restored = fresh.generate(kyoto)
    assert again.text == whole.text and restored.text == whole.text
    assert fresh.prompt_tokens < 3 * read_whole, "the repeated prompts were read whole again"
