"""Ed25519 identities that are also libp2p peer ids, usable without importing libp2p.

A peer id for an Ed25519 key is the base58btc form of an *identity* multihash
of the protobuf-encoded public key, so the key can be read back from the id:
any peer verifies any event offline, knowing only its author's peer id.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import nacl.exceptions
import nacl.signing

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}
# protobuf PublicKey{Type: Ed25519 (1), Data: 32 bytes}, wrapped in an identity multihash (0x00, len 36)
_PB_PREFIX = bytes([0x08, 0x01, 0x12, 0x20])
_MH_PREFIX = bytes([0x00, len(_PB_PREFIX) + 32])


def b58encode(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    out = []
    while n:
        n, rem = divmod(n, 58)
        out.append(_B58[rem])
    zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * zeros + "".join(reversed(out))


def b58decode(text: str) -> bytes:
    n = 0
    for ch in text:
        try:
            n = n * 58 + _B58_INDEX[ch]
        except KeyError:
            raise ValueError(f"invalid base58 character {ch!r}") from None
    zeros = len(text) - len(text.lstrip("1"))
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    return b"\0" * zeros + body


@lru_cache(maxsize=4096)
def peer_id_from_public_key(public_key: bytes) -> str:
    if len(public_key) != 32:
        raise ValueError("an Ed25519 public key has 32 bytes")
    return b58encode(_MH_PREFIX + _PB_PREFIX + public_key)


@lru_cache(maxsize=4096)
def public_key_from_peer_id(peer_id: str) -> bytes:
    """The 32-byte Ed25519 key inside ``peer_id``; ValueError if it holds none."""
    if not isinstance(peer_id, str) or not 40 <= len(peer_id) <= 60:
        raise ValueError("not an Ed25519 peer id")
    raw = b58decode(peer_id)
    if len(raw) != 38 or not raw.startswith(_MH_PREFIX + _PB_PREFIX):
        raise ValueError("not an Ed25519 peer id (expected an identity multihash of an Ed25519 key)")
    return raw[len(_MH_PREFIX) + len(_PB_PREFIX) :]


@lru_cache(maxsize=4096)
def short_id(peer_id: str) -> str:
    """The last six characters of a peer id: what people read (every id starts 12D3KooW)."""
    return peer_id[-6:]


def _verify_key(public_key: bytes) -> nacl.signing.VerifyKey:
    return nacl.signing.VerifyKey(public_key)


def verify_signature(public_key: bytes, message: bytes, signature: bytes) -> bool:
    try:
        _verify_key(public_key).verify(message, signature)
    except (nacl.exceptions.BadSignatureError, ValueError, TypeError):
        return False
    return True


@dataclass(frozen=True)
class Identity:
    """An Ed25519 key pair, known by its 32-byte seed (the same seed gives the libp2p host key)."""

    seed: bytes
    """The private 32-byte seed. Never published."""
    _key: nacl.signing.SigningKey = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.seed) != 32:
            raise ValueError("an identity seed has 32 bytes")
        object.__setattr__(self, "_key", nacl.signing.SigningKey(self.seed))

    @classmethod
    def generate(cls) -> Identity:
        return cls(secrets.token_bytes(32))

    @classmethod
    def from_secret(cls, secret: str, purpose: str) -> Identity:
        """A deterministic identity derived from a shared secret (e.g. the swarm admission key)."""
        import hashlib

        return cls(hashlib.sha256(f"specswarm/{purpose}\n{secret}".encode()).digest())

    @property
    def public_key(self) -> bytes:
        return bytes(self._key.verify_key)

    @property
    def peer_id(self) -> str:
        return peer_id_from_public_key(self.public_key)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message).signature

    # -- key files ----------------------------------------------------------------
    @classmethod
    def load_or_create(cls, path: Path) -> Identity:
        """Read a key file (hex seed); create it with mode 0600 when missing."""
        if path.exists():
            text = path.read_text(encoding="utf-8").strip()
            try:
                return cls(bytes.fromhex(text))
            except ValueError:
                raise ValueError(f"{path}: not a specswarm key file (expected 64 hex digits)") from None
        ident = cls.generate()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(ident.seed.hex() + "\n")
        return ident
