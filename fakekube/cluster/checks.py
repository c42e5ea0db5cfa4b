"""One set of checks for every way a cluster is configured, so each says the same thing.

``Cluster(...)`` and ``ClusterConfig`` arguments, the pytest marker and ``fakekube_config``,
the YAML config file and ``fakekube serve``'s flags all pass their values through the
functions here; only the name differs, as each entry point spells it (``time_scale``,
``timeScale``, ``--time-scale``). A message is ``<name>: <what is wrong>, got <value>``, on
one line; the same bad value gives the same text after the name wherever it came from.
"""

from __future__ import annotations

import difflib
import math
from datetime import datetime
from typing import Any, Callable, Iterable, Mapping


class ConfigError(ValueError):
    """A cluster setting that cannot be used; ``str()`` is one line starting with its name."""


class UnknownSetting(ConfigError, TypeError):
    """A setting no entry point knows (a misspelt argument, key or flag). A TypeError too, as
    Python's own error for an unexpected keyword argument is."""


def unknown(name: str, known: Iterable[str], what: str) -> UnknownSetting:
    """``name: unknown <what> (did you mean <closest>?)``."""
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return UnknownSetting(f"{name}: unknown {what}{hint}")


def known_names(given: Iterable[str], known: Iterable[str], what: str) -> None:
    """Refuse the first of ``given`` not in ``known`` (in the order given)."""
    allowed = tuple(known)
    for name in given:
        if name not in allowed:
            raise unknown(name, allowed, what)


# -- scalars -----------------------------------------------------------------------------------

def describe(raw: Any) -> str:
    """A value as an error shows it: its type (YAML's words), and the value when short."""
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "a mapping", type(None): "null", datetime: "a timestamp"}
    kind = next((name for cls, name in kinds.items() if type(raw) is cls), type(raw).__name__)
    if raw is None or isinstance(raw, (list, dict)):
        return kind
    text = repr(raw)
    return f"{kind} ({text})" if len(text) <= 40 else kind


def _shown(value: float) -> str:
    """A number as every entry point shows it: ``-1`` whether it came as -1 or -1.0."""
    return f"{value:g}"


def is_number(raw: Any) -> bool:
    return isinstance(raw, (int, float)) and not isinstance(raw, bool)


def number(raw: Any, name: str, minimum: float | None = None) -> float:
    """A finite number (NaN and infinities refused), at least ``minimum``."""
    if not is_number(raw):
        raise ConfigError(f"{name}: must be a number, got {describe(raw)}")
    if not math.isfinite(raw):
        raise ConfigError(f"{name}: must be a finite number, got {_shown(raw)}")
    if minimum is not None and raw < minimum:
        raise ConfigError(f"{name}: must be >= {minimum:g}, got {_shown(raw)}")
    return float(raw)


def integer(raw: Any, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """A whole number (not a boolean) in ``[minimum, maximum]``."""
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ConfigError(f"{name}: must be an integer, got {describe(raw)}")
    if minimum is not None and raw < minimum:
        raise ConfigError(f"{name}: must be >= {minimum}, got {raw}")
    if maximum is not None and raw > maximum:
        raise ConfigError(f"{name}: must be <= {maximum}, got {raw}")
    return raw


def seconds(raw: Any, name: str) -> float:
    """A duration in seconds: a finite number >= 0 (time never goes back)."""
    if not is_number(raw) or not math.isfinite(raw) or raw < 0:
        shown = _shown(raw) if is_number(raw) else describe(raw)
        raise ConfigError(f"{name}: must be a number of seconds >= 0, got {shown}")
    return float(raw)


def time_scale(raw: Any, name: str) -> float:
    """Cluster time per wall second: 0 is manual time."""
    return number(raw, name, minimum=0.0)


def node_count(raw: Any, name: str) -> int:
    return integer(raw, name, minimum=0)


def port(raw: Any, name: str) -> int:
    """A TCP port to bind: 0 picks a free one."""
    return integer(raw, name, minimum=0, maximum=65535)


def start_time(raw: Any, name: str) -> datetime:
    if not isinstance(raw, datetime):
        raise ConfigError(f"{name}: must be an RFC 3339 time such as 2025-01-01T00:00:00Z, got {describe(raw)}")
    if raw.tzinfo is None:
        raise ConfigError(f"{name}: needs a timezone, e.g. 2025-01-01T00:00:00Z")
    return raw


def _nodes(raw: Any, name: str) -> Any:
    """A count (node specs, a tuple or list, are checked by the config file or NodeSpec itself)."""
    return raw if isinstance(raw, (tuple, list)) else node_count(raw, name)


#: ClusterConfig fields whose values every entry point checks here, by field name.
FIELD_CHECKS: Mapping[str, Callable[[Any, str], Any]] = {
    "seed": integer,
    "nodes": _nodes,
    "port": port,
    "time_scale": time_scale,
    "start_time": start_time,
}


def check_fields(values: Mapping[str, Any], names: Mapping[str, str] | None = None) -> None:
    """Run :data:`FIELD_CHECKS` over ``values`` (ClusterConfig field names), naming each as
    ``names`` says (an entry point's spelling; the field name itself by default)."""
    for field, value in values.items():
        check = FIELD_CHECKS.get(field)
        if check is not None:
            check(value, (names or {}).get(field, field))


class PortInUse(OSError):
    """The port a cluster was asked to listen on is taken (or refused): ``str()`` names it and
    how to get a free one, in one line."""

    def __init__(self, host: str, port: int, reason: str, name: str = "port") -> None:
        super().__init__(f"{name} {port}: cannot listen on {host}:{port}: {reason}; {name} 0 picks a free port")
        self.host, self.port, self.reason = host, port, reason

    def named(self, name: str) -> "PortInUse":
        """The same error, naming the setting as an entry point spells it (``--port``)."""
        return PortInUse(self.host, self.port, self.reason, name)
