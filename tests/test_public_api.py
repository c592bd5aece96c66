"""The curated public API in ``specswarm/__init__.py``: every name resolves, lazily."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

import specswarm


def test_every_public_name_resolves_to_its_implementation() -> None:
    for name in specswarm.__all__:
        home = import_module(specswarm._MODULE_OF[name])
        assert getattr(specswarm, name) is getattr(home, name), name
    assert {"load_spec", "fold", "render_plan", "check_event", "GoalSpec"} <= set(specswarm.__all__)


def test_importing_the_package_loads_nothing_heavy() -> None:
    heavy = "('jsonschema', 'jinja2', 'trio', 'libp2p')"
    code = f"import sys, specswarm; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        specswarm.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert str(exc) == "module 'specswarm' has no attribute 'no_such_thing'"
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")
