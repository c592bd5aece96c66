"""What both real backends (gpt4all and llama-cpp-python) share: context size, batch
size and the stop-string cut. Neutral ground, so neither backend imports the other."""

from __future__ import annotations

N_CTX = 4096
"""Context window in tokens (prompt plus answer)."""
N_BATCH = 512
"""Prompt tokens evaluated per batch. gpt4all's default of 8 reads prompts slowly;
gpt4all 2.8.2 caps any larger value at 128, so there 512 acts as 128, while
llama-cpp-python uses it as given (docs/MODELS.md)."""


def cut_at_stop(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    """Cut ``text`` at the earliest stop string; return (text, whether one was found)."""
    cut = min((i for s in stops if s and (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


def model_threads(setting: int) -> int:
    """The CPU threads a model process uses: ``setting``, or for 0 one less than this machine's
    cores (at least 1). Peers on one machine take turns on the model, but their networking
    keeps running: a model thread that waits at llama.cpp's spinning barrier for a sibling the
    OS has not scheduled wastes its turn (docs/MODELS.md)."""
    if setting > 0:
        return setting
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - 1)
