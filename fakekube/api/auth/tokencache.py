"""kube-apiserver's cache of successful bearer-token authentications, on cluster time.

Upstream wraps its token authenticators in ``token/cache`` (``TokenSuccessCacheTTL``, 10 s;
failures are not cached, ``TokenFailureCacheTTL`` 0), keyed by the token and the audiences
asked for. So a service account's token keeps authenticating — requests and TokenReviews
alike — for up to 10 s after it last succeeded, even once its service account is deleted.
fakekube keeps the same cache with cluster time as its clock, so that window is exact and
the same on every run (in manual time it closes when the test advances the clock).

Bounded: at most :data:`MAX_ENTRIES` successes are kept; past it, the one expiring first
goes (upstream's expiring map is unbounded but every entry leaves after 10 s).
"""

from __future__ import annotations

import copy
from typing import Any

from fakekube.api.auth import tokens
from fakekube.api.registry import WriteContext

Obj = dict[str, Any]

#: kube-apiserver's ``TokenSuccessCacheTTL`` (``BuiltInAuthenticationOptions``).
SUCCESS_TTL_S = 10.0
#: How many successes are remembered at once.
MAX_ENTRIES = 4096


class TokenCache:
    """Successful :func:`tokens.examine` outcomes by (token, audiences), for 10 s of cluster time."""

    __slots__ = ("_entries", "max_entries")

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        #: (token, audiences) → (expiry in cluster seconds, outcome); insertion order is write order.
        self._entries: dict[tuple[str, tuple[str, ...]], tuple[float, tokens.Outcome]] = {}

    def examine(self, ctx: WriteContext, token: str, audiences: list[str]) -> tokens.Outcome:
        """The cached success for this token and these audiences if it is younger than
        10 s, else a fresh check (remembered when it succeeds)."""
        key = (token, tuple(audiences))
        now_s = ctx.now.timestamp()
        hit = self._entries.get(key)
        if hit is not None and now_s < hit[0]:
            return copy.deepcopy(hit[1])
        self._entries.pop(key, None)
        outcome = tokens.examine(ctx, token, audiences)
        if outcome.user is not None:
            self._remember(key, now_s + SUCCESS_TTL_S, outcome, now_s)
        return outcome

    def authenticate(self, ctx: WriteContext, token: str, audiences: list[str]) -> tuple[Obj, list[str]] | None:
        outcome = self.examine(ctx, token, audiences)
        return (outcome.user, outcome.audiences) if outcome.user is not None else None

    def __len__(self) -> int:
        return len(self._entries)

    def _remember(self, key: tuple[str, tuple[str, ...]], expires_s: float, outcome: tokens.Outcome,
                  now_s: float) -> None:
        if len(self._entries) >= self.max_entries:
            for stale in [k for k, (expiry, _) in self._entries.items() if expiry <= now_s]:
                del self._entries[stale]
        if len(self._entries) >= self.max_entries:  # all live: the one expiring first (the oldest) goes
            del self._entries[next(iter(self._entries))]
        self._entries[key] = (expires_s, copy.deepcopy(outcome))
