"""The control API explains itself: ``GET /fakekube/v1/`` lists every route the router
serves (the routes are read from the router itself, so a new endpoint without its line
fails here), its OpenAPI document describes each, and README.md names each."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import jsonschema
import pytest
import requests

from fakekube import Cluster
from fakekube.control import ControlApp, attach
from fakekube.control.routes import Route

README = Path(__file__).resolve().parents[2] / "README.md"
PREFIX = "/fakekube/v1"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Cluster, ControlApp]]:
    with Cluster(nodes=1) as cluster:
        yield cluster, attach(cluster)


def concrete(route: Route) -> str:
    """The route's path with every parameter filled in (a node and pod that do not exist)."""
    return PREFIX + re.sub(r"\{[^}]+\}", "x", route.template)


def test_every_route_is_served_and_nothing_else(served: tuple[Cluster, ControlApp]) -> None:
    cluster, app = served
    assert len(app.routes) >= 20
    for route in app.routes:
        answer = requests.request(route.method, cluster.url + concrete(route), json={}, timeout=10)
        not_routed = answer.status_code in (404, 405) and answer.json()["message"].startswith(
            ("no control endpoint", f"{route.method} is not allowed"))
        assert not not_routed, (route, answer.text)
    assert requests.get(f"{cluster.url}{PREFIX}/nope", timeout=10).status_code == 404


def test_the_index_lists_every_route_one_line_each(served: tuple[Cluster, ControlApp]) -> None:
    cluster, app = served
    for url in (f"{cluster.url}{PREFIX}/", f"{cluster.url}{PREFIX}"):
        answer = requests.get(url, timeout=10)
        assert answer.headers["Content-Type"] == "application/json"
        listed = [(e["method"], e["path"]) for e in answer.json()["endpoints"]]
        assert listed == [(r.method, PREFIX + r.template) for r in app.routes]
    for entry in answer.json()["endpoints"]:
        assert entry["summary"] and "\n" not in entry["summary"] and len(entry["summary"]) <= 100, entry
    assert answer.json()["openapi"] == f"{PREFIX}/openapi.json"


@pytest.mark.parametrize("accept", ["text/plain", "text/html,application/xhtml+xml,*/*;q=0.8"])
def test_the_index_is_text_for_a_terminal_or_a_browser(served: tuple[Cluster, ControlApp], accept: str) -> None:
    cluster, app = served
    answer = requests.get(f"{cluster.url}{PREFIX}/", headers={"Accept": accept}, timeout=10)
    assert answer.headers["Content-Type"].startswith("text/plain")
    lines = answer.text.splitlines()
    for route in app.routes:
        assert any(re.match(rf"{route.method} +{re.escape(PREFIX + route.template)} +\S", line) for line in lines), route


def test_the_openapi_document_describes_every_route(served: tuple[Cluster, ControlApp]) -> None:
    cluster, app = served
    document = requests.get(f"{cluster.url}{PREFIX}/openapi.json", timeout=10).json()
    assert document["openapi"] == "3.0.3"
    described = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert described == {(r.method, PREFIX + r.template) for r in app.routes}
    operation_ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert len(operation_ids) == len(set(operation_ids))
    for route in app.routes:
        operation = document["paths"][PREFIX + route.template][route.method.lower()]
        assert [p["name"] for p in operation.get("parameters", [])] == list(route.params)
        if route.body is not None:
            jsonschema.Draft7Validator.check_schema(operation["requestBody"]["content"]["application/json"]["schema"])
    advance = document["paths"][f"{PREFIX}/clock/advance"]["post"]["requestBody"]["content"]["application/json"]
    jsonschema.validate({"seconds": 90}, advance["schema"])


def test_the_readme_names_every_route(served: tuple[Cluster, ControlApp]) -> None:
    _, app = served
    readme = README.read_text(encoding="utf-8")
    missing = [f"{r.method} {PREFIX}{r.template}" for r in app.routes
               if f"`{r.method} {PREFIX}{r.template}`" not in readme]
    assert not missing, f"README.md's control API table lacks: {missing}"
