"""What a command run by ``kubectl exec`` does in a simulated container.

A simulated container runs no process; an exec is answered by the container model at once (its
output is whole when it answers, in cluster time): the argv runs on the container's filesystem
(kubelet/fs.py, kubelet/podfs.py) with the container's environment, through kubelet/coreutils.py:
its declared ``exec_commands`` first (behaviour data, kubelet/behaviour.py), then the shells
(``sh``/``bash``/``ash``/``dash`` run scripts, kubelet/shell.py) and the commands the image has.
Anything else is not found, with the message containerd and runc give for an executable
missing from ``$PATH``. Commands are matched by the basename of ``argv[0]`` (``/bin/echo`` is
``echo``); a path outside the system directories names a script file.

The environment is ``PATH``, ``HOSTNAME``, the container's ``env`` (values with their ``$(VAR)``
references expanded, downward-API ``fieldRef`` values; ConfigMap, Secret and resource
references, ``envFrom`` and the service link variables are not simulated) and ``HOME``.
``sleep`` and ``wait`` move the exec's own clock (``date`` after ``sleep 5`` says five seconds
later) but not the cluster's. Pure apart from the filesystem written.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from typing import Any, Mapping, NamedTuple, Sequence

from fakekube.kubelet import coreutils
from fakekube.kubelet.behaviour import ExecCommand
from fakekube.kubelet.fs import FileSystem, Mount
from fakekube.kubelet.shell import (
    MAX_DEPTH, NOT_FOUND_EXIT_CODE, SHELLS, Capture, Environment, Forever, HandOver, Limits, NotSimulated, Process, Run, Shell, Source,
    Streams, _Fatal)

Obj = dict[str, Any]

#: ``PATH`` in a typical image (the busybox and debian images' value).
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SHELL_SYNTAX_EXIT_CODE = 2
#: How many shells may nest (kubelet/shell.py's bound).
MAX_SHELL_DEPTH = MAX_DEPTH
#: The most output one exec writes to each of stdout and stderr (``kubectl cp`` of a large file).
MAX_EXEC_STREAM_BYTES = 512 * 1024 * 1024
#: Simple commands one exec runs (loops multiply them): past it the exec stops with exit 2.
MAX_SCRIPT_COMMANDS = 100_000
#: What an exec whose command never ends answers (after the output it wrote): exit 2.
FOREVER_MESSAGE = ("fakekube: this command would run until stopped (sleep infinity, tail -f, an endless loop); "
                   "an exec answers once its command has finished")
#: When an exec is answered without a cluster instant (unit tests), ``date`` reads this.
EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)


class ExecResult(NamedTuple):
    """A finished exec: what the command wrote and its exit code; or ``error``, the runtime's
    reason it could not start the command (then nothing was written)."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
    error: str | None = None


def not_found(argv: Sequence[str], exec_id: str) -> ExecResult:
    """containerd's error for an executable runc cannot find (CRI ``execInternal``, wrapped
    by its streaming server as "failed to exec in container")."""
    return ExecResult(error=f'failed to exec in container: failed to start exec "{exec_id}": OCI runtime exec failed: '
                            f'exec failed: unable to start container process: exec: "{argv[0] if argv else ""}": '
                            f'executable file not found in $PATH: unknown')


def exec_id(container_id: str, sequence: int) -> str:
    """A containerd-shaped exec id (64 hex digits), derived rather than random: deterministic."""
    return hashlib.sha256(f"{container_id}/exec/{sequence}".encode()).hexdigest()


def scratch_filesystem(pod: Mapping[str, Any], container: Mapping[str, Any]) -> FileSystem:
    """A throwaway filesystem of the container's image (an exec asked without the kubelet's)."""
    from fakekube.kubelet import rootfs
    stores = {"root": rootfs.root_store(pod, container, [], [])}
    return FileSystem(stores, (Mount("/", "root"),), EPOCH.timestamp(), str(container.get("workingDir") or "/"))


def toolbox_for(container: Mapping[str, Any], commands: Sequence[ExecCommand] = (),
                network: object | None = None) -> coreutils.Toolbox:
    from fakekube.kubelet import rootfs
    family = rootfs.family(str(container.get("image") or ""))
    return coreutils.Toolbox(tuple(commands), family.missing, network, family.bin_dir)


def run(commands: Sequence[ExecCommand], argv: Sequence[str], pod: Mapping[str, Any],
        container: Mapping[str, Any], exec_id_: str, now: datetime | None = None, fs: FileSystem | None = None,
        stdin: bytes = b"", network: object | None = None) -> ExecResult:
    """The outcome of running ``argv`` in ``container`` of ``pod`` at cluster time ``now``, on
    ``fs`` (default: a scratch copy of the image's files)."""
    if not argv:
        return not_found(argv, exec_id_)
    filesystem = fs if fs is not None else scratch_filesystem(pod, container)
    toolbox = toolbox_for(container, commands, network)
    environment = Environment(pod, container, now or EPOCH, coreutils.dispatcher(toolbox), unknown_is_missing=True)
    session = Run(environment, filesystem, Limits(MAX_SCRIPT_COMMANDS, 2 * MAX_EXEC_STREAM_BYTES))
    stdout, stderr = Capture(session), Capture(session)
    shell = Shell(session, dict(environment_of(pod, container)), Streams(Source(stdin), stdout, stderr))
    process = Process(shell, list(argv), shell.streams)
    problem = b""
    try:
        status = environment.command(process)
    except (NotSimulated, _Fatal) as error:
        problem, status = f"{error}\n".encode(), SHELL_SYNTAX_EXIT_CODE
    except Forever:
        problem, status = f"{FOREVER_MESSAGE}\n".encode(), SHELL_SYNTAX_EXIT_CODE
    except HandOver:
        status = None
    if status is None:
        return not_found(argv, exec_id_)
    return ExecResult(bytes(stdout.buffer[:MAX_EXEC_STREAM_BYTES]),
                      bytes(stderr.buffer[:MAX_EXEC_STREAM_BYTES]) + problem, status & 0xFF)


def environment_of(pod: Mapping[str, Any], container: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The variables ``env`` prints (see the module docstring), later values replacing earlier."""
    values: dict[str, str] = {"PATH": DEFAULT_PATH, "HOSTNAME": _hostname(pod)}
    values.update(spec_environment(pod, container))
    values.setdefault("HOME", "/root")
    return list(values.items())


def spec_environment(pod: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, str]:
    """The container's ``env`` as the kubelet resolves it (``makeEnvironmentVariables``), in
    order, later ones replacing earlier: a ``value`` with its ``$(VAR)`` references expanded
    from the variables before it, or a ``fieldRef`` of the pod (the downward API).
    ``configMapKeyRef``, ``secretKeyRef``, ``resourceFieldRef`` and ``envFrom`` are not
    simulated (such variables are left out)."""
    values: dict[str, str] = {}
    for var in container.get("env") or []:
        if not isinstance(var, Mapping) or not isinstance(var.get("name"), str):
            continue
        source = var.get("valueFrom")
        if source is None:
            values[var["name"]] = expand_references(str(var.get("value") or ""), values)
            continue
        field = (source.get("fieldRef") or {}).get("fieldPath") if isinstance(source, Mapping) else None
        found = field_value(pod, str(field)) if field else None
        if found is not None:
            values[var["name"]] = found
    return values


#: The kubelet's ``$(VAR)`` references in command, args and env values (``$$`` escapes a ``$``).
_REFERENCE = re.compile(r"\$\$|\$\(([^)]*)\)")


def expand_references(word: str, env: Mapping[str, str]) -> str:
    """Upstream's ``expansion.Expand``: ``$(NAME)`` becomes NAME's value when it is defined
    and stays as written when not; ``$$`` is a literal ``$``."""
    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return _REFERENCE.sub(replace, word)


_LABEL_PATH = re.compile(r"metadata\.(labels|annotations)\['([^']*)'\]")
_FIELD_PATHS = {"metadata.name": ("metadata", "name"), "metadata.namespace": ("metadata", "namespace"),
                "metadata.uid": ("metadata", "uid"), "spec.nodeName": ("spec", "nodeName"),
                "spec.serviceAccountName": ("spec", "serviceAccountName"), "status.hostIP": ("status", "hostIP"),
                "status.podIP": ("status", "podIP")}


def field_value(pod: Mapping[str, Any], path: str) -> str | None:
    """A downward-API ``fieldRef`` of the pod, or None when the path is not one a container's
    env may name or the pod does not have it yet."""
    keyed = _LABEL_PATH.fullmatch(path)
    if keyed is not None:
        return str(((pod.get("metadata") or {}).get(keyed.group(1)) or {}).get(keyed.group(2), ""))
    where = _FIELD_PATHS.get(path)
    if where is None:
        return None
    value = (pod.get(where[0]) or {}).get(where[1])
    return None if value is None else str(value)


def _hostname(pod: Mapping[str, Any]) -> str:
    spec = pod.get("spec") or {}
    return str(spec.get("hostname") or (pod.get("metadata") or {}).get("name") or "")

#: The name callers used before: the variables ``env`` prints.
environment = environment_of
