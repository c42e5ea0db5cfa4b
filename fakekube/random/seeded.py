"""One seeded generator per cluster, passed explicitly to whatever needs randomness.

UIDs, generateName suffixes and IP allocation draw from it, so the same seed and the
same calls give the same identifiers in any process (DESIGN.md, determinism).
"""

from __future__ import annotations

import hashlib
import random
import threading
from typing import Any, Sequence

# apimachinery's util/rand alphabet: no vowels (no accidental words), no confusable 0/1/3.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class SeededRandom:
    """A thread-safe wrapper over :class:`random.Random` with Kubernetes-shaped helpers."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._generator: random.Random | None = random.Random(seed)
        #: The generator's state while it is not made yet (a restored copy: see ``__reduce__``).
        self._pending: tuple[Any, ...] | None = None
        self._lock = threading.Lock()

    @property
    def _random(self) -> random.Random:
        generator = self._generator
        if generator is None:
            generator = random.Random(0)
            generator.setstate(self._pending)  # type: ignore[arg-type]  # set whenever _generator is None
            self._generator, self._pending = generator, None
        return generator

    def __reduce__(self) -> tuple[Any, ...]:
        """A copy (a snapshot's) carries the stream as its state, an immutable tuple shared
        by every copy, and makes the generator when first drawn from: most of a cluster's
        streams are not drawn from after a restore, and making one costs a Mersenne
        Twister's 625 words."""
        with self._lock:
            state = self._pending if self._generator is None else self._generator.getstate()
        return _pending_stream, (self.seed, state)

    def uid(self) -> str:
        """A version-4-shaped UUID string drawn from the seed."""
        with self._lock:
            bits = self._random.getrandbits(128)
        return uuid4_text(bits)

    def name_suffix(self, length: int = 5) -> str:
        """A generateName suffix like upstream's ``utilrand.String(5)``."""
        with self._lock:
            return "".join(self._random.choice(_SUFFIX_ALPHABET) for _ in range(length))

    def randrange(self, start: int, stop: int) -> int:
        with self._lock:
            return self._random.randrange(start, stop)

    def choice(self, seq: Sequence[Any]) -> Any:
        with self._lock:
            return self._random.choice(seq)

    def random(self) -> float:
        with self._lock:
            return self._random.random()

    def secret(self, label: str, length: int = 32) -> bytes:
        """Bytes derived from the seed and ``label`` alone, without drawing from the stream:
        a stable per-cluster key (e.g. the service-account token signer) whose first use
        does not shift any identifier drawn after it."""
        return hashlib.shake_256(f"{self.seed}:{label}".encode()).digest(length)

    def fork(self, label: str) -> "SeededRandom":
        """An independent generator derived from this seed and ``label`` alone.

        It draws nothing from this stream, so forking in another order, or forking one
        more stream (a new controller), changes no identifier any other stream makes.
        """
        digest = hashlib.shake_256(f"{self.seed}/{label}".encode()).digest(8)
        return SeededRandom(int.from_bytes(digest, "big"))


#: The bits ``uuid.UUID(int=..., version=4)`` overwrites: the variant (RFC 4122) and version.
_VARIANT_VERSION_MASK = ~((0xc000 << 48) | (0xf000 << 64))
_VARIANT_VERSION_BITS = (0x8000 << 48) | (4 << 76)


def uuid4_text(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))`` without building the UUID object (a UID per
    create): the same variant and version bits, the same hyphenated hex."""
    text = f"{(bits & _VARIANT_VERSION_MASK) | _VARIANT_VERSION_BITS:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _pending_stream(seed: int, state: tuple[Any, ...]) -> SeededRandom:
    stream = SeededRandom.__new__(SeededRandom)
    stream.seed, stream._generator, stream._pending, stream._lock = seed, None, state, threading.Lock()
    return stream
