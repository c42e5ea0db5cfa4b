"""What ``Cluster.wait_for`` waits for: a condition on one object, as ``kubectl wait --for`` reads it.

A condition is a callable of the object (``None`` once it is gone) or a string:

* ``"delete"`` — the object is gone (``kubectl wait --for=delete``);
* ``"condition=Ready"``, ``"condition=Ready=False"`` — ``status.conditions`` has that type with
  that status (``True`` when not said; compared case-insensitively, as kubectl does);
* ``"jsonpath={.status.phase}=Running"`` — the path's value, as a string, equals the text
  (``jsonpath={.status.readyReplicas}`` alone: the path finds something);
* a bare word: a pod phase (``Pending``, ``Running``, ``Succeeded``, ``Failed``) is
  ``status.phase``; anything else a condition type (``Ready``, ``Available``, ``Complete``).

Parsing is eager, so a malformed condition is a ValueError before any time moves.
"""

from __future__ import annotations

import json
from typing import Any, Callable, NamedTuple, Union

Obj = dict[str, Any]
#: What a caller may pass: a predicate of the object (None: gone) or kubectl's text.
Condition = Union[str, Callable[[Union[Obj, None]], bool]]
#: The phases a bare word names (PodPhase); any other word is a condition type.
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed")
#: The longest last status a timeout's message quotes (a Pod's status can be kilobytes).
MAX_STATUS_CHARS = 1000


class WaitTimeout(TimeoutError):
    """A ``wait_for`` whose condition did not hold in time; ``str()`` names the object, the
    condition, the virtual time and the object's last status. ``last`` is the object (None: gone)."""

    def __init__(self, message: str, last: Obj | None) -> None:
        super().__init__(message)
        self.last = last


class Predicate(NamedTuple):
    """A parsed condition: its test and how an error names it."""

    test: Callable[[Obj | None], bool]
    text: str


def parse(condition: Condition) -> Predicate:
    """``condition`` as a test of the object (ValueError: a string kubectl would refuse)."""
    if callable(condition):
        name = getattr(condition, "__name__", "") or repr(condition)
        return Predicate(condition, f"{name}()")
    if not isinstance(condition, str) or not condition.strip():
        raise ValueError(f"condition must be a callable or a string such as 'Ready', 'condition=Available', "
                         f"'delete' or 'jsonpath={{.status.phase}}=Running', got {condition!r}")
    text = condition.strip()
    if text == "delete":
        return Predicate(lambda obj: obj is None, text)
    if text.startswith("condition="):
        return _condition(text, text[len("condition="):])
    if text.startswith("jsonpath="):
        return _jsonpath(text, text[len("jsonpath="):])
    if "=" in text:
        raise ValueError(f"unrecognized condition {text!r}: use 'condition=TYPE[=STATUS]', "
                         "'jsonpath={.path}=VALUE', 'delete', a pod phase or a condition type")
    if text in POD_PHASES:
        return Predicate(lambda obj: obj is not None and (obj.get("status") or {}).get("phase") == text,
                         f"phase={text}")
    return _condition(f"condition={text}", text)


def _condition(text: str, spec: str) -> Predicate:
    kind, _, wanted = spec.partition("=")
    if not kind:
        raise ValueError(f"{text!r}: a condition type is required, e.g. condition=Ready")
    wanted = wanted or "True"

    def holds(obj: Obj | None) -> bool:
        conditions = ((obj or {}).get("status") or {}).get("conditions") or []
        return any(isinstance(c, dict) and c.get("type") == kind and str(c.get("status", "")).lower() == wanted.lower()
                   for c in conditions)
    return Predicate(holds, f"condition={kind}={wanted}")


def _jsonpath(text: str, spec: str) -> Predicate:
    """``{.path}=value`` or ``{.path}`` (kubectl's jsonpath condition; the braces are optional)."""
    if spec.startswith("{"):
        end = spec.find("}")
        if end < 0:
            raise ValueError(f"{text!r}: the path's '{{' is not closed")
        path_text, rest = spec[:end + 1], spec[end + 1:]
    else:
        path_text, separator, after = spec.partition("=")
        rest = separator + after
    if rest and not rest.startswith("="):
        raise ValueError(f"{text!r}: expected '=' after the path")
    value = rest[1:] if rest else None
    from fakekube.api.table.jsonpath import compile_path  # only a jsonpath condition needs it
    path = compile_path(path_text)  # ValueError naming the problem

    def holds(obj: Obj | None) -> bool:
        if obj is None:
            return False
        found = path.find(obj)
        if value is None:
            return bool(found)
        return len(found) == 1 and _as_text(found[0]) == value
    return Predicate(holds, text)


def _as_text(value: Any) -> str:
    """A value as kubectl's jsonpath prints it (strings bare, booleans lower-case)."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def last_status(obj: Obj | None) -> str:
    """The object's status in one line, for a timeout's message: its phase, each condition
    (``Ready=False (ContainersNotReady)``), its counts, each container's state; cut at
    MAX_STATUS_CHARS."""
    if obj is None:
        return "the object does not exist"
    status = obj.get("status") or {}
    parts = [f"phase={status['phase']}"] if isinstance(status.get("phase"), str) else []
    parts += [_condition_text(c) for c in status.get("conditions") or [] if isinstance(c, dict)]
    parts += [f"{key}={value}" for key, value in status.items()
              if isinstance(value, int) and not isinstance(value, bool)]
    for key in ("initContainerStatuses", "containerStatuses"):
        parts += [_container_text(c) for c in status.get(key) or [] if isinstance(c, dict)]
    text = ", ".join(parts) if parts else json.dumps(status, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= MAX_STATUS_CHARS else text[:MAX_STATUS_CHARS] + "…"


def _condition_text(condition: Obj) -> str:
    reason = condition.get("reason")
    return f"{condition.get('type')}={condition.get('status')}" + (f" ({reason})" if reason else "")


def _container_text(container: Obj) -> str:
    """``container c: waiting (CrashLoopBackOff), 4 restarts``."""
    state = container.get("state") or {}
    name = next(iter(state), "unknown")
    reason = (state.get(name) or {}).get("reason") if isinstance(state.get(name), dict) else None
    restarts = container.get("restartCount") or 0
    return (f"container {container.get('name')}: {name}" + (f" ({reason})" if reason else "")
            + (f", {restarts} restarts" if restarts else ""))
