"""Run one scenario against one apiserver and return its normalized exchanges.

The recorder and the replay call :func:`run` the same way; only the server differs. Each
run starts clean: the scenario's namespaces are new (named ``<var>-<run token>``, since a
bare apiserver never finishes deleting a namespace, names cannot be reused), its
cluster-scoped objects are deleted before and after (:func:`cluster_objects`), and nothing
of the setup or cleanup is recorded.
"""

from __future__ import annotations

import json
import re
import secrets
import string
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from tools.conformance import normalize, paths
from tools.conformance.client import RawResponse, Server
from tools.conformance.scenario import Scenario, Step, substitute, substitute_text
from tools.conformance.webhook import WebhookServer

Obj = dict[str, Any]

#: How long a ``poll`` step retries (wall clock) before it records the last answer.
POLL_TIMEOUT_S = 30.0
POLL_INTERVAL_S = 0.2
_VAR = re.compile(r"\$\{([A-Za-z0-9_.]+)\}")
_TOKEN_ALPHABET = string.ascii_lowercase + string.digits


def run_token() -> str:
    """A new run's token: five characters, a letter first (names stay DNS labels)."""
    return secrets.choice(string.ascii_lowercase) + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(4))


@dataclass
class Result:
    """A scenario's run: the recorded exchanges, and what went wrong on the way."""

    exchanges: list[Obj] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class Run:
    """One scenario against one server."""

    scenario: Scenario
    server: Server
    token: str
    webhook: WebhookServer | None = None
    #: Delete the cluster-scoped objects and namespaces afterwards (a fake reset instead skips it).
    cleanup: bool = True
    poll_timeout_s: float = POLL_TIMEOUT_S
    variables: dict[str, Any] = field(default_factory=dict)
    result: Result = field(default_factory=Result)

    def __post_init__(self) -> None:
        self.variables["tok"] = self.token
        for ns in self.scenario.namespaces:
            self.variables[ns] = f"{ns}-{self.token}"
        literals = {self.token: "${tok}"}
        if self.webhook is not None:
            self.variables.update(webhook_url=self.webhook.url, webhook_host=self.webhook.host,
                                  webhook_ca=self.webhook.ca_bundle)
            literals.update({self.webhook.host: "${webhook_host}", self.webhook.ca_bundle: "${webhook_ca}"})
        self.masker = normalize.Masker(literals)

    # -- the run ----------------------------------------------------------------------------
    def run(self) -> Result:
        objects = cluster_objects(self.scenario, self.variables)
        if self.cleanup:
            for path in objects:
                self._delete_fully(path)
        try:
            self._setup()
            for step in self.scenario.steps:
                self._step(step)
        finally:
            if self.cleanup:
                for path in reversed(objects):
                    self._delete_fully(path)
                for ns in self.scenario.namespaces:
                    self._quiet("DELETE", f"/api/v1/namespaces/{self.variables[ns]}")
        return self.result

    def _setup(self) -> None:
        for ns in self.scenario.namespaces:
            name = self.variables[ns]
            self._must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            if self.scenario.service_accounts:
                self._must("POST", f"/api/v1/namespaces/{name}/serviceaccounts",
                           {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})

    def _step(self, step: Step) -> None:
        try:
            path = fill_path(step.path, self.variables)
            headers = {k: substitute(v, self.variables) for k, v in step.headers.items()}
            body = substitute(step.body, self.variables) if step.body is not None else None
            raw = substitute_text(step.raw, self.variables) if step.raw is not None else None
        except KeyError as missing:
            self.result.problems.append(f"step {step.index}: {missing.args[0]}")
            if step.record:
                self.result.exchanges.append({"index": step.index, "request": step.describe(),
                                              "response": {"error": f"not sent: {missing.args[0]}"}})
            return
        self.masker.note_request(step.body)
        data = raw.encode() if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if step.pad:
            data = (data or b"") + b" " * step.pad
        user = self.variables.get(step.user[2:-1], step.user) if step.user.startswith("${") else step.user
        if self.webhook is not None:
            self.webhook.take_reviews()
        response = self._send(step, path, headers, data, user)
        reviews = self.webhook.take_reviews() if self.webhook is not None and step.reviews else None
        self._capture(step, response)
        if step.expect is not None and response.status != step.expect:
            self.result.problems.append(f"step {step.index} ({step.method} {step.path}): expected {step.expect}, "
                                        f"got {response.status}: {response.body[:300]!r}")
        if step.record:
            self.result.exchanges.append(self._exchange(step, response, reviews))

    def _send(self, step: Step, path: str, headers: dict[str, Any], data: bytes | None, user: str) -> RawResponse:
        events = int(step.watch["events"]) if step.watch else (0 if _is_watch(path) else None)
        response = self.server.send(step.method, path, headers, data, user, watch_events=events)
        if not step.poll:
            return response
        deadline = time.monotonic() + self.poll_timeout_s
        while not _holds(step.poll, response, self.variables) and time.monotonic() < deadline:
            time.sleep(POLL_INTERVAL_S)
            response = self.server.send(step.method, path, headers, data, user, watch_events=events)
        if not _holds(step.poll, response, self.variables):
            self.result.problems.append(f"step {step.index}: poll {step.poll} never held")
        return response

    def _capture(self, step: Step, response: RawResponse) -> None:
        if not step.capture:
            return
        parsed = response.json()
        for var, path in step.capture.items():
            value = paths.get(parsed, path)
            if value is paths.MISSING:
                self.result.problems.append(f"step {step.index}: nothing at {path} to capture as {var}")
                value = f"<capture-missing:{var}>"
            self.variables[var] = value

    def _exchange(self, step: Step, response: RawResponse, reviews: list[Obj] | None) -> Obj:
        media = normalize.content_type(response.headers)
        chosen = step.select
        select = (lambda value: paths.select(value, chosen)) if chosen else None
        raw_body = response.body
        if step.grep is not None:
            pattern = re.compile(step.grep)
            raw_body = b"\n".join(line for line in raw_body.split(b"\n")
                                  if pattern.search(line.decode("utf-8", "replace")))
        out: Obj = {"status": response.status, "contentType": media,
                    "warnings": [self.masker.text(w) for w in response.header_values("Warning")]}
        if response.events is not None:
            out["events"] = [normalize.body(line, "application/json", self.masker) for line in response.events]
            if response.watch_timed_out:
                out["watchTimedOut"] = True
        else:
            out["body"] = normalize.body(raw_body, media, self.masker, select)
        if reviews is not None:
            # validating webhooks are called in parallel: the order they are reached in is not the
            # API's, so they are sorted (by path, then content) before their uids are numbered
            out["reviews"] = [self.masker.value(_review(entry)) for entry in sorted(reviews, key=_review_order)]
        return {"index": step.index, "request": step.describe(), "response": out}

    # -- plumbing (not recorded) ---------------------------------------------------------------
    def _must(self, method: str, path: str, body: Obj) -> RawResponse:
        response = self.server.send(method, path, {"Content-Type": "application/json"}, json.dumps(body).encode())
        if response.status >= 300:
            raise RuntimeError(f"setup {method} {path}: {response.status} {response.body[:500]!r}")
        return response

    def _quiet(self, method: str, path: str, body: Obj | None = None, content_type: str = "application/json"
               ) -> RawResponse:
        data = json.dumps(body).encode() if body is not None else None
        return self.server.send(method, path, {"Content-Type": content_type} if data else {}, data)

    def _delete_fully(self, path: str) -> None:
        """Delete a cluster-scoped object whatever holds it: its finalizers are removed first
        (no controller of a bare apiserver would), a namespace is finalized and deleted again."""
        current = self._quiet("GET", path)
        if current.status == 404:
            return
        if (current.json() or {}).get("metadata", {}).get("finalizers"):
            self._quiet("PATCH", path, {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        self._quiet("DELETE", path)
        if path.startswith("/api/v1/namespaces/") and path.count("/") == 4:
            name = path.rsplit("/", 1)[1]
            self._quiet("PUT", f"{path}/finalize", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": name}, "spec": {"finalizers": []}})
            self._quiet("DELETE", path)


def run(scenario: Scenario, server: Server, token: str, webhook: WebhookServer | None = None,
        cleanup: bool = True, poll_timeout_s: float = POLL_TIMEOUT_S) -> Result:
    return Run(scenario, server, token, webhook, cleanup, poll_timeout_s).run()


def cluster_objects(scenario: Scenario, variables: dict[str, Any]) -> list[str]:
    """The cluster-scoped objects a scenario makes: its ``cleanup`` list and every object it
    POSTs to a collection outside its namespaces (templates filled where they can be)."""
    found: list[str] = []
    for path in scenario.cleanup:
        found.append(substitute_text(path, variables))
    for step in scenario.steps:
        if step.method != "POST" or "/namespaces/" in step.path or "?" in step.path and "dryRun" in step.path:
            continue
        name = ((step.body or {}).get("metadata") or {}).get("name") if isinstance(step.body, dict) else None
        if not isinstance(name, str) or not name:
            continue
        try:
            path = f"{substitute_text(step.path.split('?')[0], variables)}/{substitute_text(name, variables)}"
        except KeyError:
            continue
        if _is_cluster_collection(path) and path not in found:
            found.append(path)
    return found


def _is_cluster_collection(path: str) -> bool:
    """Does ``…/collection/name`` name a cluster-scoped object a scenario should clean up?
    (Reviews are never stored; a namespace's own objects go with it.)"""
    parts = path.strip("/").split("/")
    if "namespaces" in parts[:-1] and parts[-2] != "namespaces":
        return False
    return not parts[-2].endswith("reviews")


def fill_path(template: str, variables: dict[str, Any]) -> str:
    """A step's path with its variables filled; those in the query are URL-encoded."""
    head, sep, query = template.partition("?")
    head = substitute_text(head, variables)
    if sep:
        query = _VAR.sub(lambda m: quote(_as_text(_value(variables, m.group(1))), safe=""), query)
    return head + sep + query


def _value(variables: dict[str, Any], name: str) -> Any:
    if name not in variables:
        raise KeyError(f"template variable ${{{name}}} is not set (captured by an earlier step?)")
    return variables[name]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _holds(condition: Obj, response: RawResponse, variables: dict[str, Any]) -> bool:
    if "status" in condition and response.status != condition["status"]:
        return False
    if "path" in condition:
        found = paths.get(response.json(), condition["path"])
        wanted = substitute(condition.get("equals"), variables)
        if "equals" in condition and found != wanted:
            return False
        if "equals" not in condition and found is paths.MISSING:
            return False
    if "absent" in condition and paths.get(response.json(), condition["absent"]) is not paths.MISSING:
        return False
    if "warning" in condition and not any(substitute_text(condition["warning"], variables) in w
                                          for w in response.header_values("Warning")):
        return False
    if "contains" in condition and substitute_text(condition["contains"], variables).encode() not in response.body:
        return False
    return True


def _is_watch(path: str) -> bool:
    """A watch request (its answer is a stream that never ends by itself)?"""
    head, _, query = path.partition("?")
    return "/watch/" in head or any(p.split("=", 1)[0] == "watch" and p.split("=", 1)[-1].lower() in ("1", "true")
                                    for p in query.split("&"))


def _review_order(entry: Obj) -> tuple[str, str]:
    request = dict((entry.get("review") or {}).get("request") or {})
    request.pop("uid", None)
    return entry["path"], json.dumps(request, sort_keys=True)


def _review(entry: Obj) -> Obj:
    return {"path": entry["path"], "review": entry["review"]}
