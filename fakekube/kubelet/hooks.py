"""How long a container's preStop hook runs, and whether it fails (kubelet/termination.py
takes its time from the grace period).

Upstream's handler runner (``pkg/kubelet/lifecycle/handlers.go``):

* ``exec``: the command runs in the container as an exec does, on the container's own
  filesystem (its writes to an emptyDir or a PVC are there for the pod's other containers
  and for later execs, at the hook's times). A command the program model
  runs (``sleep 5``, ``sh -c 'echo bye; sleep 3'``: kubelet/programs.py) takes its time and
  fails on a non-zero exit; any other is answered as ``kubectl exec`` answers it
  (kubelet/execs.py: declared ``exec_commands`` and the built-ins), at once, failing when
  not found or non-zero — except the container's own server binary (``nginx -s quit`` in an
  nginx image), which is there and succeeds at once;
* ``httpGet``: a request to the pod's IP and the port (a name resolves through the
  container's ports), answered by the container's HTTP behaviour (kubelet/httpmodel.py):
  it takes the answer's ``delay_s``, and fails only when nothing listens (any status counts
  as success, as upstream only fails on a transport error);
* ``sleep``: takes its seconds;
* anything else (``tcpSocket``): fails at once, "invalid handler".
"""

from __future__ import annotations

import posixpath
from datetime import datetime
from typing import Any, Mapping

from fakekube.kubelet import execs, httpmodel, programs
from fakekube.kubelet.behaviour import ContainerBehaviour
from fakekube.kubelet.fs import FileSystem
from fakekube.kubelet.termination import IMAGE_PROGRAMS, HookOutcome
from fakekube.kubelet.imageref import familiar_repository

Obj = Mapping[str, Any]


def prestop_outcome(pod: Obj, container: Obj, behaviour: ContainerBehaviour, at: datetime,
                    fs: FileSystem | None = None, network: object | None = None) -> HookOutcome | None:
    """The container's preStop hook run at ``at`` on ``fs`` (an overlay of the container's
    filesystem that records the hook's writes; default: a scratch copy of the image's files);
    None when it has none."""
    handler = ((container.get("lifecycle") or {}).get("preStop")) or None
    if not isinstance(handler, Mapping):
        return None
    if isinstance(handler.get("exec"), Mapping):
        return _exec(pod, container, behaviour, list(handler["exec"].get("command") or []), at, fs, network)
    if isinstance(handler.get("httpGet"), Mapping):
        return _http_get(container, behaviour, handler["httpGet"])
    if isinstance(handler.get("sleep"), Mapping):
        seconds = handler["sleep"].get("seconds")
        return HookOutcome(float(seconds) if isinstance(seconds, int) and seconds >= 0 else 0.0)
    return HookOutcome(0.0, failed=True)


def _exec(pod: Obj, container: Obj, behaviour: ContainerBehaviour, argv: list[str], at: datetime,
          fs: FileSystem | None, network: object | None) -> HookOutcome:
    if not argv or not all(isinstance(word, str) for word in argv):
        return HookOutcome(0.0, failed=True)
    hook = dict(container, command=argv, args=[])
    filesystem = fs if fs is not None else execs.scratch_filesystem(pod, container)
    program = programs.run_program(pod, hook, filesystem, at, behaviour.exec_commands, network)
    overlay = dict(program.overlay()) if program is not None else {}
    if overlay:
        return HookOutcome(overlay.get("run_for_s"), failed=overlay.get("exit_code", 0) != 0)
    result = execs.run(behaviour.exec_commands, argv, pod, container, exec_id_="", now=at, fs=filesystem,
                       network=network)
    if result.error is not None and _own_binary(argv[0], container):
        return HookOutcome(0.0)
    return HookOutcome(0.0, failed=result.error is not None or result.exit_code != 0)


def _own_binary(executable: str, container: Obj) -> bool:
    """Is ``executable`` the program the container's image runs (it is in the image)?"""
    name = posixpath.basename(executable)
    command = container.get("command") or []
    own = posixpath.basename(command[0]) if command and isinstance(command[0], str) else ""
    return name in (own, IMAGE_PROGRAMS.get(familiar_repository(str(container.get("image") or "")), "")) and bool(name)


def _http_get(container: Obj, behaviour: ContainerBehaviour, action: Obj) -> HookOutcome:
    port = resolve_port(action.get("port"), container)
    if port is None:
        return HookOutcome(0.0, failed=True)
    request = httpmodel.HttpRequest(method="GET", target=str(action.get("path") or "/"),
                                    headers=tuple((str(h.get("name")), str(h.get("value")))
                                                  for h in action.get("httpHeaders") or [] if isinstance(h, Mapping)))
    answer = httpmodel.answer(behaviour.http, container, str(container.get("image") or ""), port, request,
                              own_program=not container.get("command"))
    if answer is None:
        return HookOutcome(0.0, failed=True)
    return HookOutcome(answer.delay_s)


def resolve_port(port: Any, container: Obj) -> int | None:
    """A port number, or a port name resolved through the container's ``ports``."""
    if isinstance(port, int) and not isinstance(port, bool):
        return port if 0 < port < 65536 else None
    if isinstance(port, str):
        if port.isdigit():
            return int(port)
        for declared in container.get("ports") or []:
            if isinstance(declared, Mapping) and declared.get("name") == port:
                number = declared.get("containerPort")
                return number if isinstance(number, int) else None
    return None
