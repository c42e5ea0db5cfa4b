"""UIDs are written by hand for speed; they must stay exactly what ``uuid.UUID`` wrote
(the same seed gives the same UIDs as before, and they stay valid version-4 UUIDs)."""

from __future__ import annotations

import random
import uuid

from fakekube.random.seeded import SeededRandom, uuid4_text


def test_uuid4_text_is_uuids_own_text() -> None:
    draws = random.Random(7)
    for bits in [0, 2**128 - 1, *(draws.getrandbits(128) for _ in range(20_000))]:
        assert uuid4_text(bits) == str(uuid.UUID(int=bits, version=4))


def test_a_seed_gives_the_uids_it_always_gave() -> None:
    reference = random.Random(42)
    expected = [str(uuid.UUID(int=reference.getrandbits(128), version=4)) for _ in range(5)]
    seeded = SeededRandom(42)
    assert [seeded.uid() for _ in range(5)] == expected
    assert all(uuid.UUID(u).version == 4 for u in expected)
