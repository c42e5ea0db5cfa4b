"""What ``GET /fakekube/v1/`` and ``GET /fakekube/v1/openapi.json`` answer: the control API
described from its own routes (``ControlApp.routes``), as JSON, plain text or OpenAPI 3.0."""

from __future__ import annotations

from typing import Any, Sequence

from fakekube.control.routes import Route

#: Where the OpenAPI document is served, below the control API's prefix.
OPENAPI_PATH = "/openapi.json"
#: The widest path column of the text index (longer paths push their summary right).
PATH_COLUMN = 52


def index(routes: Sequence[Route], prefix: str) -> dict[str, Any]:
    """Every endpoint, one line each, in the order the router declares them."""
    return {"endpoints": [{"method": r.method, "path": prefix + r.template, "summary": r.summary} for r in routes],
            "openapi": prefix + OPENAPI_PATH,
            "errors": "every error is a Kubernetes Status object (kind, code, reason, message)"}


def index_text(routes: Sequence[Route], prefix: str) -> str:
    """The index for a terminal or a browser: ``METHOD  PATH  summary`` per line."""
    lines = [f"fakekube control API ({prefix}); OpenAPI: {prefix}{OPENAPI_PATH}", ""]
    lines += [f"{r.method:<7} {prefix + r.template:<{PATH_COLUMN}} {r.summary}" for r in routes]
    return "\n".join(lines) + "\n"


_STATUS = {"$ref": "#/components/schemas/Status"}


def openapi(routes: Sequence[Route], prefix: str, version: str) -> dict[str, Any]:
    """An OpenAPI 3.0 document of the routes: paths, parameters, request bodies; every answer
    is JSON (an object), every error a ``Status``."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(prefix + route.template, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.0.3",
        "info": {"title": "fakekube control API", "version": version,
                 "description": "What Kubernetes has no verb for: move the clock, settle, reset, inject node "
                                "faults, snapshots, scheduling explanations."},
        "paths": paths,
        "components": {"schemas": {"Status": {
            "type": "object", "description": "A Kubernetes meta/v1 Status: the body of every error.",
            "properties": {"kind": {"type": "string"}, "apiVersion": {"type": "string"},
                           "status": {"type": "string"}, "message": {"type": "string"},
                           "reason": {"type": "string"}, "code": {"type": "integer"}}}}},
    }


def _operation(route: Route) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "summary": route.summary,
        "operationId": _operation_id(route),
        "responses": {"200": {"description": "OK", "content": {route.produces: {
                          "schema": {"type": "object"} if route.produces == "application/json" else {"type": "string"}}}},
                      "default": {"description": "an error", "content": {"application/json": {"schema": _STATUS}}}},
    }
    if route.params:
        operation["parameters"] = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                                   for name in route.params]
    if route.body is not None:
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": route.body}}}
    return operation


def _operation_id(route: Route) -> str:
    """``postNodesNameFail``: the method and the template's words."""
    words = [part.strip("{}") for part in route.template.replace("-", "/").split("/") if part]
    return route.method.lower() + "".join(word[:1].upper() + word[1:] for word in words) if words else route.method.lower() + "Index"
