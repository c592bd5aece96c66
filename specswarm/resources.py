"""Locate the data folders (schemas/, templates/, goals/) in a checkout or an installed wheel.

In a wheel they are packed into ``specswarm/_data/``; in a checkout (or an
editable install) they sit beside the package at the repository's top level.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_PKG = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``schemas``, ``templates`` or ``goals``)."""
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"specswarm data folder {name!r} not found beside {_PKG}")


def schema_path(name: str) -> Path:
    return data_dir("schemas") / name


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Load ``schemas/NAME`` (e.g. ``goal.schema.json``) as a dict."""
    with open(schema_path(name), encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def template_dir() -> Path:
    return data_dir("templates")
