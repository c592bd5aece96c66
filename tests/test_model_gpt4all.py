"""The gpt4all backend's own logic (ChatML turns, stops, loop guard, stderr filter) on a fake."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from specswarm.model import GenerationRequest
from specswarm.model import gpt4all_backend as gb
from specswarm.model._common import cut_at_stop


class FakeGPT4All:
    """Stands in for gpt4all.GPT4All: streams scripted pieces through the callback."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces
        self.sessions: list[tuple[str, str]] = []
        self.kwargs: dict = {}

    @contextmanager
    def chat_session(self, system_prompt: str, prompt_template: str) -> Iterator[None]:
        self.sessions.append((system_prompt, prompt_template))
        yield

    def generate(self, prompt: str, **kwargs) -> str:  # type: ignore[no-untyped-def]
        self.kwargs = {"prompt": prompt, **kwargs}
        out = ""
        for i, piece in enumerate(self.pieces[: kwargs["max_tokens"]]):
            out += piece
            if not kwargs["callback"](i, piece):
                break
        return out


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    model_file = tmp_path / "m.gguf"
    model_file.write_bytes(b"GGUF")

    def install(pieces: list[str]) -> tuple[gb.Gpt4AllModel, FakeGPT4All]:
        fake = FakeGPT4All(pieces)
        monkeypatch.setitem(gb._LOADED, (str(tmp_path), "m.gguf", 2), fake)
        return gb.Gpt4AllModel(model_file, threads=2), fake

    return install


def test_chatml_turns_and_sampling_settings(fake) -> None:  # type: ignore[no-untyped-def]
    model, gpt = fake(["- Tokyo", "\n- Kyoto"])
    gen = model.generate(
        GenerationRequest(prompt="List cities", system="Be brief.", max_tokens=9, top_k=1, repeat_penalty=1.1)
    )
    assert gen.text == "- Tokyo\n- Kyoto" and gen.tokens == 2 and gen.model == "m.gguf"
    assert gpt.sessions == [
        (
            "<|im_start|>system\nBe brief.<|im_end|>\n",
            "<|im_start|>user\n{0}<|im_end|>\n<|im_start|>assistant\n",
        )
    ]
    assert {
        k: gpt.kwargs[k] for k in ("prompt", "max_tokens", "temp", "top_k", "repeat_penalty", "n_batch")
    } == {
        "prompt": "List cities",
        "max_tokens": 9,
        "temp": 0.0,
        "top_k": 1,
        "repeat_penalty": 1.1,
        "n_batch": 512,
    }


def test_stop_strings_end_generation_and_are_cut(fake) -> None:  # type: ignore[no-untyped-def]
    model, _ = fake(["- a", "\n- b", "\nEND", " more", " and more"])
    gen = model.generate(GenerationRequest(prompt="x", stop=("END",)))
    assert gen.text == "- a\n- b"
    assert gen.tokens == 3  # nothing generated after the stop string


def test_chat_end_marker_is_never_returned(fake) -> None:  # type: ignore[no-untyped-def]
    model, _ = fake(["ok", "<|im_end|>", "junk"])
    assert model.generate(GenerationRequest(prompt="x")).text == "ok"


def test_a_line_repeated_three_times_in_a_row_stops_the_model(fake) -> None:  # type: ignore[no-untyped-def]
    model, _ = fake(["- a\n"] + ["- same\n"] * 50)
    gen = model.generate(GenerationRequest(prompt="x", max_tokens=100))
    assert gen.tokens == 4
    assert gen.text == "- a\n- same\n- same\n- same"


def test_helpers() -> None:
    assert cut_at_stop("abcSTOPdefEND", ("END", "STOP")) == ("abc", True)
    assert cut_at_stop("abc", ("", "Z")) == ("abc", False)
    assert gb.is_looping("x\ny\ny\ny\n")
    assert not gb.is_looping("y\ny\ny")  # the last line is not complete yet
    assert not gb.is_looping("\n\n\n\n")


def test_filtered_stderr_drops_only_the_harmless_lines(capfd: pytest.CaptureFixture[str]) -> None:
    with gb._filtered_stderr(re.compile(r"^Failed to load libllamamodel-mainline-cuda")):
        os.write(2, b"Failed to load libllamamodel-mainline-cuda.so: dlopen: nope\n")
        os.write(2, b"real problem\n")
    assert capfd.readouterr().err == "real problem\n"


def test_threads_zero_leaves_one_core_to_the_swarm(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from specswarm.model._common import model_threads

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert model_threads(0) == 3 and model_threads(2) == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert model_threads(0) == 1
