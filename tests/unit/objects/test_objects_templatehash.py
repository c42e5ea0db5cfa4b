"""The template hash: FNV-1a as Go's hash/fnv, safe characters, collisionCount folded in."""

from __future__ import annotations

from fakekube.objects.templatehash import SAFE_ALPHABET, compute_hash, fnv32, fnv32a, safe_encode_string


def test_fnv32a_matches_go_hash_fnv() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968


def test_fnv32_matches_go_hash_fnv_new32() -> None:
    """FNV-1 (multiply, then xor), which ``history.HashControllerRevision`` uses."""
    assert fnv32(b"") == 0x811C9DC5
    assert fnv32(b"a") == 0x050C5D7E
    assert fnv32(b"foobar") == 0x31F0B262


def test_safe_encoding_maps_digits_onto_the_alphabet() -> None:
    assert safe_encode_string("0123456789") == "".join(SAFE_ALPHABET[ord(c) % 27] for c in "0123456789")
    assert safe_encode_string("48") == "8d"  # "4" is 52: 52 % 27 = 25 → "8"; "8" is 56: 56 % 27 = 2 → "d"


def test_the_hash_depends_on_the_template_and_the_collision_count_only() -> None:
    template = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    reordered = {"spec": {"containers": [{"image": "x", "name": "c"}]}, "metadata": {"labels": {"app": "a"}}}
    assert compute_hash(template) == compute_hash(reordered)
    assert compute_hash(template) != compute_hash(template, 0) != compute_hash(template, 1)
    assert set(compute_hash(template)) <= set(SAFE_ALPHABET)
