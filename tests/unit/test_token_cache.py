"""The apiserver's token cache: successes for 10 s of cluster time, bounded."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from fakekube.api.auth import identity
from fakekube.api.auth.tokencache import SUCCESS_TTL_S, TokenCache
from fakekube.api.registry import WriteContext
from fakekube.random import SeededRandom

START = datetime(2025, 1, 1, tzinfo=timezone.utc)


class _Empty:
    def get_object(self, group: str, resource: str, namespace: str, name: str) -> None:
        return None


def _ctx(after_s: float = 0) -> WriteContext:
    return WriteContext(START + timedelta(seconds=after_s), SeededRandom(0), _Empty())


def test_successes_are_remembered_for_10_s_failures_never() -> None:
    cache = TokenCache()
    audiences = list(identity.API_AUDIENCES)
    assert cache.examine(_ctx(), identity.ADMIN_TOKEN, audiences).user is not None
    assert cache.examine(_ctx(), "junk", audiences).user is None
    assert len(cache) == 1
    assert cache.examine(_ctx(SUCCESS_TTL_S), identity.ADMIN_TOKEN, audiences).user is not None  # checked again
    assert len(cache) == 1


def test_at_its_limit_the_entry_expiring_first_goes() -> None:
    cache = TokenCache(max_entries=2)
    for step, audience in enumerate(("a", "b", "c")):
        cache.examine(_ctx(step), identity.ADMIN_TOKEN, [audience])
    assert len(cache) == 2
