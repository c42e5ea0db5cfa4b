"""FakekubeBehaviour: fakekube's own plugin (no upstream twin).

A pod's ``fakekube.io/behaviour`` annotation must parse (fields, types, durations within
Go's time.Duration range), or the pod is refused with a 422 naming
``metadata.annotations[fakekube.io/behaviour]`` and the reason — rather than accepted and
then never started by its kubelet. The kubelet part owns the annotation's format, so the
cluster hands its parser in (``AdmissionOptions.behaviour_problem``).
"""

from __future__ import annotations

import reprlib
from typing import Any, Callable

from fakekube.api.admission.attributes import CREATE, UPDATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.api.machinery import errors
from fakekube.objects.kinds import PODS

Obj = dict[str, Any]

BEHAVIOUR_ANNOTATION = "fakekube.io/behaviour"
#: The longest piece of a refused value a 422 repeats.
ECHOED_VALUE_CHARS = 200

_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxother = 80


class FakekubeBehaviour(Handler):
    name = "FakekubeBehaviour"
    operations = frozenset((CREATE, UPDATE))
    resources = {"validate": frozenset((PODS,))}

    def __init__(self, problem: Callable[[Obj], str | None] | None) -> None:
        self.problem = problem

    def validate(self, a: Attributes) -> None:
        if a.rt.key != PODS or a.subresource == "status" or a.obj is None or self.problem is None:
            return
        problem = self.problem(a.obj)
        if problem is None:
            return
        value = ((a.obj.get("metadata") or {}).get("annotations") or {}).get(BEHAVIOUR_ANNOTATION)
        shown = value if isinstance(value, str) and len(value) <= ECHOED_VALUE_CHARS else _BRIEF.repr(value)
        raise errors.invalid_object(a.rt.group, a.rt.kind, a.object_name(),
                                    [errors.invalid(f"metadata.annotations[{BEHAVIOUR_ANNOTATION}]", shown, problem)])


def new(context: PluginContext) -> FakekubeBehaviour:
    return FakekubeBehaviour(context.options.behaviour_problem)
