"""The shared model service's llama.cpp workers (``model.runtime``), on the embedded model.

A worker keeps earlier prompts evaluated, and the plan must not depend on that: a request gets
the same greedy text whether its prompt is read whole by a fresh worker, read after an earlier
prompt that shares its beginning (the slot's own cache), after a detour through another prompt
(a saved state restored), or asked a second time. With llama.cpp's repacked weights or flash
attention on, or a repeated prompt taken whole from the cache (its last token then computed
alone), the text differed on these very requests. Slow (loads the 1.1 GB model twice and
generates on the CPU).
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


BEGINNING = (ROOT / "README.md").read_text(encoding="utf-8")[:1500]


def _ask(task: str) -> GenerationRequest:
    return GenerationRequest(prompt=f"{BEGINNING}\nTask: {task}", system=SYSTEM, max_tokens=48)


def test_an_answer_does_not_depend_on_what_the_worker_read_before() -> None:
    kyoto, tokyo, osaka = (_ask(f"list three things to do in {city}") for city in ("Kyoto", "Tokyo", "Osaka"))
    used = LlamaCppWorker(ensure_default_model(), threads=1)
    service = ModelService(used)
    first = service.answer(kyoto).gen
    assert first is not None and first.text.startswith("-")
    read_whole = service.counts.prompt_tokens
    assert read_whole > 300 and service.counts.reused_tokens == 0

    after_kyoto = used.generate(tokyo)  # the same beginning: most of it found evaluated
    assert used.reused_tokens > 300
    used.generate(GenerationRequest(prompt="Name two colours. " * 20, system="Be brief.", max_tokens=16))
    after_detour = used.generate(osaka)  # its beginning restored from a saved state
    assert used.reused_tokens > 600, "the saved state was not used"
    again = used.generate(kyoto)  # asked twice: read whole again

    fresh = LlamaCppWorker(ensure_default_model(), threads=1, copy=1)
    assert fresh.generate(tokyo).text == after_kyoto.text
    assert fresh.generate(osaka).text == after_detour.text
    assert again.text == first.text
