"""Identities: our peer ids are libp2p's, base58 round-trips, keys live in files."""

from __future__ import annotations

import os
import stat

import pytest
from libp2p.crypto.ed25519 import create_new_key_pair
from libp2p.peer.id import ID

from specswarm.protocol.identity import (
    Identity,
    b58decode,
    b58encode,
    peer_id_from_public_key,
    public_key_from_peer_id,
    verify_signature,
)

SEEDS = [bytes(32), b"\x01" * 32, bytes(range(32)), b"\xff" * 32, bytes.fromhex("a5" * 32)]


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: s[:2].hex())
def test_peer_id_equals_libp2p(seed: bytes) -> None:
    kp = create_new_key_pair(seed)
    expected = ID.from_pubkey(kp.public_key).to_base58()
    ident = Identity(seed)
    assert ident.peer_id == expected
    assert ident.public_key == kp.public_key.to_bytes()
    assert ident.peer_id.startswith("12D3KooW")


def test_public_key_read_back_from_peer_id() -> None:
    ident = Identity(bytes(range(32)))
    assert public_key_from_peer_id(ident.peer_id) == ident.public_key
    assert peer_id_from_public_key(ident.public_key) == ident.peer_id


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00",
        b"\x00\x00\x01",
        b"\x00\xff",
        b"hello world",
        bytes(range(256)),
        b"\x00" * 5 + b"\x80" * 7,
    ],
)
def test_base58_round_trip(data: bytes) -> None:
    assert b58decode(b58encode(data)) == data


def test_base58_known_vectors() -> None:
    # Bitcoin alphabet test vectors.
    assert b58encode(b"hello world") == "StV1DL6CwTryKyV"
    assert b58encode(b"\x00\x00\x28\x7f\xb4\xcd") == "11233QC4"
    assert b58encode(b"") == ""
    assert b58decode("11233QC4") == b"\x00\x00\x28\x7f\xb4\xcd"


@pytest.mark.parametrize("bad", ["0", "O", "I", "l", "abc+", "12D3KooW!"])
def test_base58_rejects_foreign_characters(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid base58 character"):
        b58decode(bad)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "12D3KooW",
        "x" * 52,
        "Qm" + "1" * 44,
        # a valid base58 string of the right length but a sha256 multihash
        "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG",
    ],
)
def test_public_key_from_non_ed25519_peer_id(bad: str) -> None:
    with pytest.raises(ValueError):
        public_key_from_peer_id(bad)


def test_peer_id_needs_32_byte_key() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        peer_id_from_public_key(b"\x01" * 31)


def test_seed_must_be_32_bytes() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        Identity(b"\x01" * 31)


def test_sign_and_verify() -> None:
    ident = Identity(b"\x02" * 32)
    sig = ident.sign(b"message")
    assert len(sig) == 64
    assert verify_signature(ident.public_key, b"message", sig) is True
    assert verify_signature(ident.public_key, b"messagf", sig) is False
    assert verify_signature(Identity(b"\x03" * 32).public_key, b"message", sig) is False
    flipped = bytes([sig[0] ^ 1]) + sig[1:]
    assert verify_signature(ident.public_key, b"message", flipped) is False
    assert verify_signature(ident.public_key, b"message", sig[:63]) is False
    assert verify_signature(b"\x01" * 31, b"message", sig) is False


def test_from_secret_is_deterministic_and_purpose_bound() -> None:
    a = Identity.from_secret("s3cret", "admission")
    assert a == Identity.from_secret("s3cret", "admission")
    assert a.peer_id != Identity.from_secret("s3cret", "other").peer_id
    assert a.peer_id != Identity.from_secret("s3cres", "admission").peer_id


def test_generate_is_random() -> None:
    assert Identity.generate().seed != Identity.generate().seed


def test_key_file_created_0600_and_reloaded(tmp_path) -> None:
    path = tmp_path / "keys" / "peer.key"
    ident = Identity.load_or_create(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.read_text() == ident.seed.hex() + "\n"
    assert Identity.load_or_create(path) == ident


def test_bad_key_file_names_the_file(tmp_path) -> None:
    path = tmp_path / "peer.key"
    path.write_text("not hex\n")
    with pytest.raises(ValueError, match=r"peer\.key: not a specswarm key file"):
        Identity.load_or_create(path)
