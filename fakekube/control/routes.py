"""The control API's routes: one declaration each, which the router, the index and the
OpenAPI document all read, so an endpoint cannot be served without being listed.

A route is a method, a path template below ``/fakekube/v1`` (``/nodes/{name}/fail``: a
``{param}`` is one non-empty path segment), a one-line summary, and optionally its request
body's schema. Matching is by segments; where two templates match, the one with fewer
parameters wins. A path no template matches is a 404, a path matched only for other
methods a 405 — as the hand-written dispatch before it answered.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

#: A route's handler: ``handler(request, params)`` → the JSON answer.
Handler = Callable[..., Any]


class Route(NamedTuple):
    """One endpoint: ``handler`` gets the request and the path's parameters by name."""

    method: str
    template: str
    summary: str
    handler: Handler
    #: JSON Schema of the request body (None: no body).
    body: dict[str, Any] | None = None
    #: The media type of a 200 answer (the OpenAPI document says it).
    produces: str = "application/json"

    @property
    def segments(self) -> tuple[str, ...]:
        return _segments(self.template)

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(part[1:-1] for part in self.segments if _is_param(part))


class Match(NamedTuple):
    route: Route | None
    params: dict[str, str]
    #: The methods the path is served for (a 405 when ``route`` is None and this is not empty).
    allowed: tuple[str, ...]


def match(routes: Sequence[Route], method: str, path: str) -> Match:
    """The route serving ``method`` on ``path`` (below the prefix), and its parameters."""
    found = [(route, params) for route in routes if (params := _params(route.segments, _segments(path))) is not None]
    found.sort(key=lambda pair: len(pair[1]))  # literal segments before parameters
    for route, params in found:
        if route.method == method:
            return Match(route, params, ())
    return Match(None, {}, tuple(dict.fromkeys(route.method for route, _ in found)))


def _segments(path: str) -> tuple[str, ...]:
    return tuple(part for part in path.strip("/").split("/")) if path.strip("/") else ()


def _is_param(part: str) -> bool:
    return part.startswith("{") and part.endswith("}")


def _params(template: tuple[str, ...], path: tuple[str, ...]) -> dict[str, str] | None:
    if len(template) != len(path):
        return None
    params: dict[str, str] = {}
    for want, got in zip(template, path):
        if _is_param(want):
            if not got:
                return None
            params[want[1:-1]] = got
        elif want != got:
            return None
    return params

