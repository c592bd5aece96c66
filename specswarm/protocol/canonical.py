"""Canonical JSON: the byte form every hash and signature in specswarm is taken over.

Sorted keys, no whitespace, UTF-8, no NaN/Infinity. Floats keep Python's
shortest round-trip repr, which is stable across CPython versions; event
bodies still prefer integers (scores are 0..100).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_bytes(obj: Any) -> bytes:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest(obj: Any) -> str:
    """sha256 hex of the canonical bytes of ``obj``."""
    return sha256_hex(canonical_bytes(obj))
