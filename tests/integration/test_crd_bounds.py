"""User-supplied rules never stall everyone: regular expressions, CEL rules and enums.

A CRD's author chooses patterns, CEL rules and enums that run on every write of its
objects, and those writes run under the store lock every other request needs. Each test
sends one hostile write from a thread and, while it is in flight, keeps asking the same
server for something else (:func:`served_meanwhile`): every such probe must be answered
(within a generous timeout), and the hostile write must get upstream's answer. Before
the bounds, each hostile write held the server for seconds to days, and the probes timed
out.

The server is a ``fakekube serve`` child process, so a write that wedges it (a
backtracking regular expression holds the interpreter, timeouts included) fails the test
instead of hanging it; a wedged server is replaced before the next test.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

Obj = dict[str, Any]
GROUP = "bounds.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#: How long a probe may wait for its answer: far beyond what a bounded write takes.
PROBE_TIMEOUT_S = 20.0
#: The safety net: the hostile write must be answered by then (it takes milliseconds).
WRITE_TIMEOUT_S = 60.0


class Server:
    """A ``fakekube serve`` child process, spoken to over raw HTTP."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fakekube", "serve", "--no-system-pods", "--no-metrics-server", "--time-scale", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().split(" at ")[1].strip()

    def request(self, method: str, path: str, body: Any = None, timeout_s: float = WRITE_TIMEOUT_S) -> tuple[int, Any]:
        url = urlsplit(self.url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout_s)
        try:
            payload = None if body is None else json.dumps(body).encode()
            connection.request(method, path, body=payload, headers={"Content-Type": "application/json",
                                                                     "Accept": "application/json"})
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    def healthy(self) -> bool:
        try:
            return self.request("GET", "/api/v1/namespaces/default", timeout_s=5)[0] == 200
        except OSError:
            return False

    def stop(self) -> None:
        self.process.kill()  # this test's own child, by its handle
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def servers() -> Iterator[list[Server]]:
    started: list[Server] = [Server()]
    yield started
    for server in started:
        server.stop()


@pytest.fixture
def server(servers: list[Server]) -> Server:
    """The module's server, replaced if a previous test left it wedged."""
    if not servers[-1].healthy():
        servers.append(Server())
    return servers[-1]


def crd(plural: str, kind: str, spec_schema: Obj) -> Obj:
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural[:-1], "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def create_crd(server: Server, body: Obj) -> None:
    code, answer = server.request("POST", CRDS, body)
    assert code == 201, answer


def resource(kind: str, spec: Obj) -> Obj:
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"name": "hostile"}, "spec": spec}


def served_meanwhile(server: Server, write: Callable[[], tuple[int, Any]]) -> tuple[int, Any]:
    """Send ``write`` from a thread; while it is in flight, probe the server with GETs,
    each of which must be answered within PROBE_TIMEOUT_S. The write's answer."""
    answers: list[tuple[int, Any]] = []
    failures: list[BaseException] = []

    def run() -> None:
        try:
            answers.append(write())
        except BaseException as exc:  # noqa: BLE001 - reported to the test below
            failures.append(exc)

    writer = threading.Thread(target=run, daemon=True)
    writer.start()
    probes = 0
    while probes == 0 or (writer.is_alive() and probes < 1_000):
        try:
            code, _ = server.request("GET", "/api/v1/namespaces/default", timeout_s=PROBE_TIMEOUT_S)
        except TimeoutError:
            pytest.fail(f"a GET waited more than {PROBE_TIMEOUT_S} s while the hostile write ran")
        assert code == 200
        probes += 1
    writer.join(timeout=WRITE_TIMEOUT_S)
    assert not writer.is_alive(), f"the hostile write was not answered within {WRITE_TIMEOUT_S} s"
    assert not failures, failures
    return answers[0]


def causes(answer: Obj) -> list[tuple[str, str]]:
    return [(c.get("field", ""), c["message"]) for c in answer["details"]["causes"]]


# -- regular expressions -------------------------------------------------------------------

CATASTROPHIC = "^(a+)+$"
#: Python's backtracking re took 12 s for 26 characters here, twice as long per character more.
HOSTILE_TEXT = "a" * 40 + "!"


def test_a_catastrophic_pattern_answers_at_once_while_others_are_served(server: Server) -> None:
    create_crd(server, crd("patterns", "Pattern", {"type": "object", "properties": {
        "name": {"type": "string", "pattern": CATASTROPHIC}}}))
    code, answer = served_meanwhile(server, lambda: server.request(
        "POST", f"/apis/{GROUP}/v1/namespaces/default/patterns", resource("Pattern", {"name": HOSTILE_TEXT})))
    assert code == 422, answer
    assert causes(answer) == [("spec.name", f'Invalid value: "{HOSTILE_TEXT}": spec.name in body should match '
                                            f"'{CATASTROPHIC}'")]


def test_cel_find_with_a_catastrophic_pattern_answers_at_once(server: Server) -> None:
    rule = {"rule": f"self.name.find('{CATASTROPHIC}') == self.name", "message": "name must be all a's"}
    create_crd(server, crd("finders", "Finder", {"type": "object", "x-kubernetes-validations": [rule],
                                                 "properties": {"name": {"type": "string"}}}))
    code, answer = served_meanwhile(server, lambda: server.request(
        "POST", f"/apis/{GROUP}/v1/namespaces/default/finders", resource("Finder", {"name": HOSTILE_TEXT})))
    assert code == 422, answer
    assert causes(answer) == [("spec", "Invalid value: name must be all a's")]


def test_an_invalid_pattern_is_refused_with_go_s_message(server: Server) -> None:
    """Upstream's integration test (validation_test.go): Go's regexp error text."""
    code, answer = server.request("POST", CRDS, crd("invalids", "Invalid", {"type": "object", "properties": {
        "foo": {"type": "string", "pattern": "+"}}}))
    assert code == 422, answer
    assert causes(answer) == [(
        "spec.validation.openAPIV3Schema.properties[spec].properties[foo].pattern",
        'Invalid value: "+": must be a valid regular expression, but isn\'t: error parsing regexp: '
        "missing argument to repetition operator: `+`")]


# -- CEL cost ---------------------------------------------------------------------------------

TRIPLE = "self.items.all(a, self.items.all(b, self.items.all(c, a + b + c >= 0)))"
RULE_PATH = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
BUDGET_ADVICE = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, "
                 "and strings are declared)")


def nested(plural: str, kind: str, **bounds: Any) -> Obj:
    return crd(plural, kind, {"type": "object", "x-kubernetes-validations": [{"rule": TRIPLE}], "properties": {
        "items": {"type": "array", "items": {"type": "integer"}, **bounds}}})


def test_a_rule_nesting_three_loops_over_an_unbounded_list_is_refused(server: Server) -> None:
    code, answer = server.request("POST", CRDS, nested("unboundeds", "Unbounded"))
    assert code == 422, answer
    assert causes(answer) == [
        (RULE_PATH, f"Forbidden: estimated rule cost exceeds budget by factor of more than 100x {BUDGET_ADVICE}"),
        (RULE_PATH, "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"),
        ("spec.validation.openAPIV3Schema", "Forbidden: x-kubernetes-validations estimated rule cost total "
                                                    f"for entire OpenAPIv3 schema exceeds budget by factor of more than "
                                                    f"100x {BUDGET_ADVICE}"),
    ]
    assert server.request("GET", f"{CRDS}/unboundeds.{GROUP}")[0] == 404


def test_the_same_rule_is_admitted_when_max_items_bounds_it(server: Server) -> None:
    create_crd(server, nested("smalls", "Small", maxItems=10))
    code, answer = server.request("POST", f"/apis/{GROUP}/v1/namespaces/default/smalls",
                                  resource("Small", {"items": list(range(10))}))
    assert code == 201, answer
    code, answer = server.request("POST", CRDS, nested("larges", "Large", maxItems=200))
    assert code == 422, answer
    assert causes(answer) == [(RULE_PATH, f"Forbidden: estimated rule cost exceeds budget by factor of 7.2x {BUDGET_ADVICE}")]


def test_a_costly_but_admitted_rule_is_cancelled_at_run_time_while_others_are_served(server: Server) -> None:
    """100 items: estimated 9.1 million units, admitted (10 million per rule); each run
    costs as much, past the per-call limit of one million: cancelled, as cel-go cancels it."""
    create_crd(server, nested("hundreds", "Hundred", maxItems=100))
    code, answer = served_meanwhile(server, lambda: server.request(
        "POST", f"/apis/{GROUP}/v1/namespaces/default/hundreds", resource("Hundred", {"items": list(range(100))})))
    assert code == 422, answer
    assert causes(answer) == [("spec", "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': "
                                       "no further validation rules will be run due to call cost exceeds limit for "
                                       f"rule: {TRIPLE}")]
    code, answer = server.request("POST", f"/apis/{GROUP}/v1/namespaces/default/hundreds",
                                  resource("Hundred", {"items": list(range(40))}))
    assert code == 201, answer  # 40 items: 600,000 units, within the limit


# -- enums ------------------------------------------------------------------------------------

ENUM = [f"value-{i}" for i in range(100_000)]


def enum_crd(plural: str, kind: str) -> Obj:
    return crd(plural, kind, {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string", "enum": ENUM}}}})


def test_a_large_enum_checked_per_list_item_does_not_stall_others(server: Server) -> None:
    """2,000 items of a 100,000-value enum: 200 million comparisons before (400 items took 22 s)."""
    create_crd(server, enum_crd("choices", "Choice"))
    items = [ENUM[(i * 7919) % len(ENUM)] for i in range(2_000)]
    code, answer = served_meanwhile(server, lambda: server.request(
        "POST", f"/apis/{GROUP}/v1/namespaces/default/choices", resource("Choice", {"items": items})))
    assert code == 201, answer
    assert answer["spec"]["items"] == items


def test_an_error_lists_a_large_enum_cut_short(server: Server) -> None:
    """Each unsupported value's error named all 100,000 supported values (1.2 MB) before."""
    create_crd(server, enum_crd("wrongs", "Wrong"))
    code, answer = served_meanwhile(server, lambda: server.request(
        "POST", f"/apis/{GROUP}/v1/namespaces/default/wrongs", resource("Wrong", {"items": ["nope"] * 50})))
    assert code == 422, answer
    found = causes(answer)
    assert [field for field, _ in found] == [f"spec.items[{i}]" for i in range(50)]
    for _, message in found:
        assert message.startswith('Unsupported value: "nope": supported values: "value-0", "value-1", ')
        assert message.endswith(", ... (100000 values in all, truncated)")
        assert len(message) < 17 * 1024
