"""The model's own thread runs ahead of the peer's networking (specswarm/model/worker.py).
Checked in a fresh interpreter: prepare() lowers the priority of the thread that calls it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent(
    """
    import os, threading
    from specswarm.model import worker

    def nice():
        stat = open(f"/proc/self/task/{threading.get_native_id()}/stat").read()
        return int(stat.rsplit(")", 1)[1].split()[16])

    here = worker.run(threading.get_native_id)
    assert here == threading.get_native_id()  # no model thread yet: runs in the caller
    lowered = worker.prepare()
    model_tid, model_nice = worker.run(lambda: (threading.get_native_id(), nice()))
    later = []
    t = threading.Thread(target=lambda: later.append(nice()))
    t.start(); t.join()
    print(lowered, model_tid != threading.get_native_id(), model_nice, nice(), later[0])
    """
)


def _probe(**env: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={k: v for k, v in os.environ.items() if k != "SPECSWARM_NICE"} | env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="per-thread niceness is Linux's")
def test_the_model_thread_keeps_its_priority_and_the_rest_run_lower() -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    lowered, separate, model_nice, main_nice, new_thread_nice = _probe(SPECSWARM_NICE="5")
    assert (lowered, separate) == ("True", "True")
    assert int(model_nice) == base and int(main_nice) == base + 5 and int(new_thread_nice) == base + 5


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="per-thread niceness is Linux's")
def test_by_default_every_thread_keeps_the_same_priority() -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    for env in ({}, {"SPECSWARM_NICE": "0"}, {"SPECSWARM_NICE": "junk"}):
        lowered, separate, model_nice, main_nice, _ = _probe(**env)
        assert (lowered, separate) == ("False", "True") and int(model_nice) == int(main_nice) == base
