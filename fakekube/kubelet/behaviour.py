"""Container behaviour as data: what a simulated container does, chosen per image or annotation.

A :class:`ContainerBehaviour` says how long the image pull and the start take, whether the
container runs forever or exits after N seconds (with which exit code), what its probes
would see over time, which log lines it writes, and what the commands ``kubectl exec`` may
run print (``exec_commands``; kubelet/execs.py runs them). Nothing here knows about clocks or the
store: times are seconds since the container started (or since the pull began).

A :class:`BehaviourCatalog` picks the behaviour for one container, in layers, each layer
overriding only the fields it names:

1. :data:`DEFAULT_BEHAVIOUR` (or the catalog's own default); an init container that is not
   a sidecar exits 0 as soon as it runs unless that default gives a ``run_for_s``,
2. what the container's own command does, when kubelet/programs.py knows it (``echo``,
   ``sleep``, ``sh -c`` scripts of such commands): its run time, exit code and log lines,
3. the first image rule whose glob matches the image (rules keep the order given),
4. the pod annotation ``fakekube.io/behaviour`` — a YAML/JSON mapping. Keys that name
   behaviour fields apply to every container; a key whose value is itself a mapping names
   a container and overrides fields for that container only::

       fakekube.io/behaviour: '{"exit_code": 1, "sidecar": {"run_for_s": null}}'

Dict keys are the behaviour's field names (``run_for_s``, ``exit_code``, ...), so the Python
API and the YAML config read the same. ``ready_after_s: 5`` is shorthand for a readiness
timeline that is unhealthy until t=5.
"""

from __future__ import annotations

import fnmatch
import functools
import math
import reprlib
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from fakekube.engine.timers import MAX_DELAY_S
from fakekube.kubelet.httpmodel import HttpRoute, routes_from
from fakekube.kubelet.segments import Segments
from fakekube.kubelet.usage import UsageTimeline, parse_usage
from fakekube.record import FrozenRecord

#: The pod annotation that overrides behaviour for a pod's containers.
BEHAVIOUR_ANNOTATION = "fakekube.io/behaviour"

#: Upstream's reason strings for a failed pull and for waiting out the pull back-off.
ERR_IMAGE_PULL = "ErrImagePull"
IMAGE_PULL_BACKOFF = "ImagePullBackOff"

#: The pull error message used when config says only ``image_pull_error: true``: containerd's
#: for a tag the registry does not have (``{reference}``: the normalized reference).
DEFAULT_PULL_ERROR = ('rpc error: code = NotFound desc = failed to pull and unpack image "{reference}": '
                      'failed to resolve reference "{reference}": {reference}: not found')

#: The longest delay a behaviour may give, in seconds: Go's time.Duration range (int64
#: nanoseconds, about 292 years), the bound on every upstream timer. Past it: refused.
MAX_DURATION_S = MAX_DELAY_S

#: Distinct annotation values whose parse is cached (pods of one template share a value).
ANNOTATION_CACHE_SIZE = 256

#: The most a declared command may write to stdout, and to stderr (UTF-8 bytes): an exec's
#: answer is held whole in memory, so its size is bounded where it is declared.
MAX_EXEC_OUTPUT_BYTES = 1024 * 1024
#: Declared commands per behaviour (each exec tries them in order).
MAX_EXEC_COMMANDS = 256


def _require_seconds(name: str, value: Any) -> None:
    if not _is_seconds(value):
        raise ValueError(f"{name}: {_SECONDS_RULE}, got {brief(value)}")


#: What every behaviour duration must be (Go's time.Duration range: upstream's own bound).
_SECONDS_RULE = f"must be a number of seconds between 0 and {MAX_DURATION_S:.0f} (about 292 years)"


def _is_seconds(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and 0 <= value <= MAX_DURATION_S


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Timeline(Segments[bool]):
    """A probe's outcome over time: ``(from_s, healthy)`` segments since container start.

    The outcome at ``t`` is that of the last segment starting at or before ``t``; before the
    first segment the outcome is healthy. Segments are sorted with strictly rising starts.
    Immutable: one timeline is shared by every behaviour that names it.
    """

    __slots__ = ()

    def __init__(self, segments: tuple[tuple[float, bool], ...] = ()) -> None:
        previous = -math.inf
        for from_s, healthy in segments:
            if not isinstance(healthy, bool) or not _is_seconds(from_s):
                raise ValueError(f"timeline segment ({brief(from_s)}, {brief(healthy)}) must be (seconds >= 0, bool), "
                                 f"the seconds at most {MAX_DURATION_S:.0f}")
            if from_s <= previous:
                raise ValueError("timeline segments must start at strictly increasing times")
            previous = from_s
        super().__init__(segments)

    def healthy_at(self, t_s: float) -> bool:
        """The outcome a probe sees at ``t_s`` seconds after container start."""
        outcome = True
        for from_s, healthy in self.segments:
            if from_s > t_s:
                break
            outcome = healthy
        return outcome

    @property
    def always_healthy(self) -> bool:
        """Does a probe see success all the time (nothing for a test to observe without one)?"""
        return all(healthy for _, healthy in self.segments)

    @property
    def last_change_s(self) -> float:
        """After this instant the outcome never changes."""
        return self.segments[-1][0] if self.segments else 0.0

    @classmethod
    def constant(cls, healthy: bool) -> Timeline:
        return cls(((0.0, healthy),))

    @classmethod
    def healthy_after(cls, delay_s: float) -> Timeline:
        """Unhealthy until ``delay_s``, healthy from then on (``ready_after_s``)."""
        return cls(((0.0, False), (float(delay_s), True))) if delay_s > 0 else cls.constant(True)


ALWAYS_HEALTHY = Timeline()


class LogLine(NamedTuple):
    """One line the container writes, ``at_s`` seconds after it started (no trailing newline)."""

    at_s: float
    text: str


#: What a container uses unless its behaviour says otherwise: an idle nginx (1m, 4 MiB).
DEFAULT_CPU_USAGE = UsageTimeline.constant(1.0)
DEFAULT_MEMORY_USAGE = UsageTimeline.constant(4 * 1024 * 1024)


class ExecCommand(FrozenRecord):
    """What one declared command does when run by ``kubectl exec``: its whole output, at once.

    ``command`` is an fnmatch glob over the argv joined by single spaces: ``"cat /etc/*"``
    matches ``cat /etc/hosts``; a command without ``*?[`` matches exactly that argv.
    Immutable, as the behaviours holding it are.
    """

    __slots__ = ("command", "stdout", "stderr", "exit_code")
    command: str
    stdout: str
    stderr: str
    #: 0-255, as a process's exit status (kubectl parses it as a byte).
    exit_code: int

    def __init__(self, command: str, stdout: str = "", stderr: str = "", exit_code: int = 0) -> None:
        if not isinstance(command, str) or not command.strip():
            raise ValueError(f"command: must be a non-empty string (a glob over the argv), got {brief(command)}")
        for name, text in (("stdout", stdout), ("stderr", stderr)):
            if not isinstance(text, str):
                raise ValueError(f"{name}: must be a string, got {brief(text)}")
            _require_text(text)
            if len(text.encode("utf-8")) > MAX_EXEC_OUTPUT_BYTES:
                raise ValueError(f"{name}: at most {MAX_EXEC_OUTPUT_BYTES} bytes")
        if isinstance(exit_code, bool) or not isinstance(exit_code, int) or not 0 <= exit_code <= 255:
            raise ValueError(f"exit_code: must be an integer from 0 to 255, got {brief(exit_code)}")
        for name, value in zip(self.__slots__, (command, stdout, stderr, exit_code)):
            self._set(name, value)

    def matches(self, argv: Sequence[str]) -> bool:
        return fnmatch.fnmatchcase(" ".join(argv), self.command)


class ContainerBehaviour(FrozenRecord):
    """What one container does. Defaults: starts in about a second, runs forever, healthy.

    Immutable (:data:`DEFAULT_BEHAVIOUR` is shared by every container): ``replace()``
    makes a changed copy, checked as a new one is.
    """

    __slots__ = ("pull_delay_s", "start_delay_s", "run_for_s", "exit_code", "stop_delay_s", "readiness", "liveness",
                 "startup", "log_lines", "image_pull_error", "image_pull_failures", "exec_commands", "cpu_usage_m",
                 "memory_usage_bytes", "handles_sigterm", "stop_exit_code", "http")

    #: Seconds the image pull takes (the Pulling → Pulled events), each attempt.
    pull_delay_s: float
    #: Seconds from "pulled" to Running (container create + start).
    start_delay_s: float
    #: Seconds the process runs before exiting by itself; None = until it is stopped.
    run_for_s: float | None
    #: The exit code when it exits by itself.
    exit_code: int
    #: Seconds the process takes to exit once it got SIGTERM, when it handles it (capped by
    #: the grace period; kubelet/termination.py).
    stop_delay_s: float
    #: What a readinessProbe / livenessProbe / startupProbe would see over time.
    readiness: Timeline
    liveness: Timeline
    startup: Timeline
    #: Lines written to the container log, by time since start.
    log_lines: tuple[LogLine, ...]
    #: A pull error message ("{image}" is replaced by the image); None = pulls succeed.
    image_pull_error: str | None
    #: How many pulls fail before one succeeds; None = every pull fails.
    image_pull_failures: int | None
    #: Commands ``kubectl exec`` can run, tried in order before the built-in ones
    #: (kubelet/execs.py); any other command is not found, as in a container without it.
    exec_commands: tuple[ExecCommand, ...]
    #: CPU (millicores) and memory (bytes of working set) the running process uses, over
    #: time since it started (metrics.k8s.io, ``kubectl top``; fakekube/kubelet/usage.py).
    #: Default: an idle nginx's 1m and 4 MiB.
    cpu_usage_m: UsageTimeline
    memory_usage_bytes: UsageTimeline
    #: Does the process stop on SIGTERM? False: it ignores it (a program without a handler
    #: running as PID 1: ``sleep``, ``tail -f``, a shell loop) and is killed (SIGKILL, exit
    #: 137) when the grace period ends. Default True (servers handle it); a command the
    #: kubelet knows sets its own (kubelet/termination.py's table).
    handles_sigterm: bool
    #: The exit code of a process that stops on SIGTERM: 0 (a clean shutdown), or 143 for
    #: one the signal's default action ends (128 + 15).
    stop_exit_code: int
    #: What the container answers over HTTP, per port and path (port-forward, the
    #: apiserver's proxy, HTTP preStop hooks, ``curl`` from other pods: kubelet/httpmodel.py).
    http: tuple[HttpRoute, ...]

    def __init__(self, pull_delay_s: float = 0.0, start_delay_s: float = 1.0, run_for_s: float | None = None,
                 exit_code: int = 0, stop_delay_s: float = 0.0, readiness: Timeline = ALWAYS_HEALTHY,
                 liveness: Timeline = ALWAYS_HEALTHY, startup: Timeline = ALWAYS_HEALTHY,
                 log_lines: tuple[LogLine, ...] = (), image_pull_error: str | None = None,
                 image_pull_failures: int | None = None, exec_commands: tuple[ExecCommand, ...] = (),
                 cpu_usage_m: UsageTimeline = DEFAULT_CPU_USAGE,
                 memory_usage_bytes: UsageTimeline = DEFAULT_MEMORY_USAGE, handles_sigterm: bool = True,
                 stop_exit_code: int = 0, http: tuple[HttpRoute, ...] = ()) -> None:
        values = (pull_delay_s, start_delay_s, run_for_s, exit_code, stop_delay_s, readiness, liveness, startup,
                  log_lines, image_pull_error, image_pull_failures, exec_commands, cpu_usage_m, memory_usage_bytes,
                  handles_sigterm, stop_exit_code, http)
        for name, value in zip(self.__slots__, values):
            self._set(name, value)
        self._check()

    def _check(self) -> None:
        for name in ("pull_delay_s", "start_delay_s", "stop_delay_s"):
            _require_seconds(name, getattr(self, name))
        if self.run_for_s is not None:
            _require_seconds("run_for_s", self.run_for_s)
        for name in ("exit_code", "stop_exit_code"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name}: must be an integer, got {value!r}")
        if not isinstance(self.handles_sigterm, bool):
            raise ValueError(f"handles_sigterm: must be true or false, got {self.handles_sigterm!r}")
        if self.image_pull_failures is not None and (
                isinstance(self.image_pull_failures, bool) or not isinstance(self.image_pull_failures, int)
                or self.image_pull_failures < 0):
            raise ValueError(f"image_pull_failures: must be an integer >= 0 or null, got {self.image_pull_failures!r}")
        if list(self.log_lines) != sorted(self.log_lines, key=lambda line: line.at_s):
            raise ValueError("log_lines: lines must be in time order")
        if len(self.exec_commands) > MAX_EXEC_COMMANDS:
            raise ValueError(f"exec_commands: at most {MAX_EXEC_COMMANDS} commands")

    def pull_fails(self, attempt: int) -> bool:
        """Does pull attempt number ``attempt`` (1-based) fail?"""
        if self.image_pull_error is None:
            return False
        return self.image_pull_failures is None or attempt <= self.image_pull_failures

    def pull_error_message(self, image: str) -> str:
        """The declared error, ``{image}`` replaced by the image as written and ``{reference}``
        by its normalized reference (``docker.io/library/nginx:1.27``)."""
        return (self.image_pull_error or "").replace("{image}", image).replace("{reference}", normalize_image(image))


DEFAULT_BEHAVIOUR = ContainerBehaviour()

# -- parsing plain dicts (as loaded from YAML or JSON) --------------------------------------

_FIELDS = set(ContainerBehaviour.__slots__)
_SHORTHANDS = {"ready_after_s"}
#: The usage fields and the unit of their plain figures.
_USAGE_UNITS = {"cpu_usage_m": "m", "memory_usage_bytes": "bytes"}

#: One validated set of field overrides, as sorted (field, value) pairs: hashable, immutable.
Overlay = tuple[tuple[str, Any], ...]


def behaviour_overlay(data: Mapping[str, Any], where: str = "behaviour") -> Overlay:
    """Validate a mapping of behaviour fields into an overlay; ValueError names the field."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: must be a mapping of behaviour fields, got {type(data).__name__}")
    unknown = sorted(set(data) - _FIELDS - _SHORTHANDS)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}; "
                         f"known: {', '.join(sorted(_FIELDS | _SHORTHANDS))}")
    if "ready_after_s" in data and "readiness" in data:
        raise ValueError(f"{where}.ready_after_s: give either ready_after_s or readiness, not both")
    values: dict[str, Any] = {}
    for name, raw in data.items():
        try:
            parsed_name, value = _parse_field(str(name), raw)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}.{name}: {error}") from None
        values[parsed_name] = value
    if "stop_delay_s" in values and "handles_sigterm" not in values:
        values["handles_sigterm"] = True  # a declared stop delay says the process stops on SIGTERM
    overlay = tuple(sorted(values.items()))
    apply_overlay(DEFAULT_BEHAVIOUR, overlay, where)  # cross-field checks, once
    return overlay


def apply_overlay(base: ContainerBehaviour, overlay: Overlay, where: str = "behaviour") -> ContainerBehaviour:
    """``base`` with the overlay's fields replaced."""
    try:
        return base.replace(**dict(overlay))
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def behaviour_from_dict(data: Mapping[str, Any], base: ContainerBehaviour = DEFAULT_BEHAVIOUR,
                        where: str = "behaviour") -> ContainerBehaviour:
    """A behaviour from a plain mapping; fields it does not name keep ``base``'s values."""
    return apply_overlay(base, behaviour_overlay(data, where), where)


def _parse_field(name: str, raw: Any) -> tuple[str, Any]:
    if name == "ready_after_s":
        return "readiness", Timeline.healthy_after(_seconds(raw))
    if name in ("readiness", "liveness", "startup"):
        return name, _timeline(raw)
    if name == "log_lines":
        return name, _log_lines(raw)
    if name == "exec_commands":
        return name, _exec_commands(raw)
    if name == "http":
        return name, routes_from(raw)
    if name in _USAGE_UNITS:
        return name, parse_usage(raw, _USAGE_UNITS[name])
    if name == "run_for_s":
        return name, None if raw is None else _seconds(raw)
    if name == "handles_sigterm":
        if not isinstance(raw, bool):
            raise ValueError(f"must be true or false, got {brief(raw)}")
        return name, raw
    if name in ("exit_code", "stop_exit_code", "image_pull_failures"):
        if raw is None and name == "image_pull_failures":
            return name, None
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise ValueError(f"must be an integer, got {brief(raw)}")
        return name, raw
    if name == "image_pull_error":
        if raw is None or raw is False:
            return name, None
        if raw is True:
            return name, DEFAULT_PULL_ERROR
        if not isinstance(raw, str) or not raw:
            raise ValueError(f"must be a message string, true or null, got {brief(raw)}")
        _require_text(raw)
        return name, raw
    return name, _seconds(raw)


def _timeline(raw: Any) -> Timeline:
    """A timeline from ``true``/``false`` (constant) or a list of ``[from_s, healthy]``."""
    if isinstance(raw, bool):
        return Timeline.constant(raw)
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
        raise ValueError(f"must be true, false or a list of [from_s, healthy] pairs, got {brief(raw)}")
    segments = []
    for item in raw:
        if isinstance(item, Mapping):
            item = (item.get("from_s"), item.get("healthy"))
        if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) != 2:
            raise ValueError(f"segment {brief(item)} must be [from_s, healthy]")
        segments.append((_seconds(item[0]), item[1]))
    return Timeline(tuple(segments))


def _log_lines(raw: Any) -> tuple[LogLine, ...]:
    """Log lines from a list of ``[at_s, text]``, ``{at_s, text}`` or bare strings (at t=0)."""
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
        raise ValueError(f"must be a list of [at_s, text] pairs, got {brief(raw)}")
    lines = []
    for item in raw:
        if isinstance(item, str):
            item = (0.0, item)
        elif isinstance(item, Mapping):
            item = (item.get("at_s"), item.get("text"))
        if not isinstance(item, Sequence) or len(item) != 2 or not isinstance(item[1], str):
            raise ValueError(f"line {brief(item)} must be [at_s, text]")
        if "\n" in item[1]:
            raise ValueError(f"line {brief(item[1])} must not contain a newline; give one entry per line")
        _require_text(item[1])
        lines.append(LogLine(_seconds(item[0]), item[1]))
    return tuple(lines)


def _exec_commands(raw: Any) -> tuple[ExecCommand, ...]:
    """Declared commands from a list of ``{command, stdout, stderr, exit_code}`` mappings;
    ``command`` may also be a list of argv words (joined by spaces)."""
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
        raise ValueError(f"must be a list of {{command, stdout, stderr, exit_code}} mappings, got {brief(raw)}")
    commands = []
    for index, item in enumerate(raw):
        if index >= MAX_EXEC_COMMANDS:
            raise ValueError(f"at most {MAX_EXEC_COMMANDS} commands")
        if not isinstance(item, Mapping):
            raise ValueError(f"command {brief(item)} must be a mapping with a 'command' glob")
        unknown = sorted(map(str, set(item) - {"command", "stdout", "stderr", "exit_code"}))
        if unknown:
            raise ValueError(f"[{index}]: unknown field(s) {', '.join(unknown)}; known: command, exit_code, stderr, stdout")
        command = item.get("command")
        if isinstance(command, list) and all(isinstance(word, str) for word in command):
            command = " ".join(command)
        try:
            commands.append(ExecCommand(command, item.get("stdout", ""), item.get("stderr", ""),  # type: ignore[arg-type]
                                        item.get("exit_code", 0)))
        except ValueError as error:
            raise ValueError(f"[{index}].{error}") from None
    return tuple(commands)


def _require_text(text: str) -> None:
    """Text the kubelet writes to events and logs must encode as UTF-8 (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"text {brief(text)} is not valid Unicode (a lone surrogate)") from None


def _seconds(raw: Any) -> float:
    if not _is_seconds(raw):
        raise ValueError(f"{_SECONDS_RULE}, got {brief(raw)}")
    return float(raw)


# -- the catalog ---------------------------------------------------------------------------

class ImageRule(NamedTuple):
    """Containers whose image matches ``pattern`` (an fnmatch glob) get ``overlay`` on the default."""

    pattern: str
    overlay: Overlay = ()

    def matches(self, image: str) -> bool:
        return any(fnmatch.fnmatchcase(candidate, self.pattern) for candidate in (image, normalize_image(image)))


class BehaviourCatalog(NamedTuple):
    """Picks a container's behaviour: default ← first matching image rule ← pod annotation."""

    rules: tuple[ImageRule, ...] = ()
    default: ContainerBehaviour = DEFAULT_BEHAVIOUR

    @classmethod
    def from_config(cls, data: Mapping[str, Any] | None) -> BehaviourCatalog:
        """From ``{"default": {...fields}, "images": [{"image": "glob", ...fields}, ...]}``."""
        data = data or {}
        if not isinstance(data, Mapping):
            raise ValueError("behaviours: must be a mapping with 'default' and/or 'images'")
        unknown = sorted(set(data) - {"default", "images"})
        if unknown:
            raise ValueError(f"behaviours: unknown key(s) {', '.join(map(str, unknown))}; known: default, images")
        default = behaviour_from_dict(data.get("default") or {}, where="behaviours.default")
        images = data.get("images") or []
        if not isinstance(images, list):
            raise ValueError("behaviours.images: must be a list of {image: glob, ...fields}")
        rules = tuple(_rule_from_dict(entry, f"behaviours.images[{index}]") for index, entry in enumerate(images))
        return cls(rules, default)

    def with_image(self, pattern: str, behaviour: ContainerBehaviour | Mapping[str, Any]) -> BehaviourCatalog:
        """A catalog with one more rule, checked after the existing ones."""
        if isinstance(behaviour, ContainerBehaviour):
            overlay = _overlay_of(behaviour)
        else:
            overlay = behaviour_overlay(behaviour, f"image rule {pattern!r}")
        return self._replace(rules=self.rules + (ImageRule(pattern, overlay),))

    def for_image(self, image: str) -> ContainerBehaviour:
        """The default with the first matching rule applied (rules are tried in the order given)."""
        return self._with_rule(self.default, image)

    def _with_rule(self, base: ContainerBehaviour, image: str) -> ContainerBehaviour:
        for rule in self.rules:
            if rule.matches(image):
                return apply_overlay(base, rule.overlay, f"image rule {rule.pattern!r}")
        return base

    def for_container(self, pod: Mapping[str, Any], container_name: str, program: Overlay = ()) -> ContainerBehaviour:
        """The behaviour of one container of ``pod`` (init containers included).

        Layers: the default (for an init container that is not a sidecar, one that exits 0
        as soon as it runs, unless the default says how long containers run: an init
        container that never exits would hold its pod forever), then ``program`` — what
        the container's own command does when that is known (kubelet/programs.py) — then
        the first matching image rule, then the pod's annotation."""
        container, init = _find_container(pod, container_name)
        base = self.default
        if init and container.get("restartPolicy") != "Always" and base.run_for_s is None:
            base = base.replace(run_for_s=0.0)
        behaviour = self._with_rule(apply_overlay(base, program, "command"), str(container.get("image") or ""))
        annotations = (pod.get("metadata") or {}).get("annotations") or {}
        raw = annotations.get(BEHAVIOUR_ANNOTATION)
        if raw is None:
            return behaviour
        shared, per_container = parse_annotation(str(raw))
        where = f"annotation {BEHAVIOUR_ANNOTATION}"
        behaviour = apply_overlay(behaviour, shared, where)
        return apply_overlay(behaviour, dict(per_container).get(container_name, ()), f"{where}.{container_name}")


    def declares(self, pod: Mapping[str, Any], container_name: str) -> bool:
        """Did the user say what this container does — an image rule matching its image, or
        the pod's annotation with fields for every container or for this one? (A declared
        container's command needs no "not simulated" warning: kubelet/pods.py.)"""
        container, _ = _find_container(pod, container_name)
        if any(rule.matches(str(container.get("image") or "")) for rule in self.rules):
            return True
        raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(BEHAVIOUR_ANNOTATION)
        if raw is None:
            return False
        try:
            shared, per_container = parse_annotation(str(raw))
        except ValueError:
            return False
        return bool(shared) or container_name in dict(per_container)


def _rule_from_dict(entry: Any, where: str) -> ImageRule:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("image"), str) or not entry["image"]:
        raise ValueError(f"{where}.image: each rule needs an image glob, e.g. {{image: 'busybox*', exit_code: 1}}")
    fields = {key: value for key, value in entry.items() if key != "image"}
    return ImageRule(entry["image"], behaviour_overlay(fields, where))


def _overlay_of(behaviour: ContainerBehaviour) -> Overlay:
    """Every field of a full behaviour, so a Python-built rule replaces the default entirely."""
    return tuple(sorted(behaviour.fields().items()))


def _find_container(pod: Mapping[str, Any], name: str) -> tuple[Mapping[str, Any], bool]:
    """The named container of the pod, and whether it is an init container."""
    spec = pod.get("spec") or {}
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            if container.get("name") == name:
                return container, key == "initContainers"
    raise KeyError(f"pod has no container named {name!r}")


def annotation_problem(pod: Mapping[str, Any]) -> str | None:
    """Why the pod's ``fakekube.io/behaviour`` annotation cannot be used, or None when it
    can (or is absent): the FakekubeBehaviour admission check, so a bad value is refused
    at the API with this reason instead of failing in the kubelet."""
    raw = (((pod.get("metadata") or {}).get("annotations")) or {}).get(BEHAVIOUR_ANNOTATION)
    if raw is None:
        return None
    if not isinstance(raw, str):
        return f"must be a string, got {brief(raw)}"
    try:
        parse_annotation(raw)
    except ValueError as error:
        return str(error).removeprefix(f"annotation {BEHAVIOUR_ANNOTATION}").lstrip(": ") or str(error)
    return None


_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxother = 80
_BRIEF.maxlist = _BRIEF.maxdict = _BRIEF.maxtuple = 4
_BRIEF.maxlevel = 3


def brief(value: Any) -> str:
    """A bounded repr for messages: YAML aliases can make a 300-byte value a billion items."""
    return _BRIEF.repr(value)


@functools.lru_cache(maxsize=ANNOTATION_CACHE_SIZE)
def parse_annotation(raw: str) -> tuple[Overlay, tuple[tuple[str, Overlay], ...]]:
    """Split an annotation value into (overlay for all containers, per-container overlays)."""
    where = f"annotation {BEHAVIOUR_ANNOTATION}"
    import yaml  # PyYAML loads on first use, not with the package (cold start)
    try:
        data = yaml.safe_load(raw) if raw.strip() else {}
    except yaml.YAMLError as error:
        raise ValueError(f"{where}: not valid YAML/JSON: {brief(str(error))}") from None
    except RecursionError:
        raise ValueError(f"{where}: nested too deeply") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: must be a mapping, got {brief(data)}")
    shared = {key: value for key, value in data.items() if not isinstance(value, Mapping)}
    per_container = tuple(sorted(
        (str(key), behaviour_overlay(value, f"{where}.{key}"))
        for key, value in data.items() if isinstance(value, Mapping)))
    return behaviour_overlay(shared, where), per_container


def normalize_image(image: str) -> str:
    """The fully qualified reference (``nginx`` → ``docker.io/library/nginx:latest``)."""
    if not image:
        return image
    name, digest = (image.split("@", 1) + [""])[:2]
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    if digest:
        return f"{name}@{digest}"
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"
