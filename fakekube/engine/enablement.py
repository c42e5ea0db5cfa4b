"""Which controllers run: kube-controller-manager's ``--controllers`` enable lists.

Upstream's rule (``IsControllerEnabled``): ``-name`` disables a controller, ``name``
enables it, ``*`` enables every controller that is on by default; names are the
controllers' own (``pod-garbage-collector-controller``) or their old aliases
(``podgc``). A name that matches no controller is an error, as upstream refuses to start.
The list is read from Python (``Cluster(controllers=...)``), the CLI
(``fakekube serve --controllers '*,-podgc'``) and the YAML config (``controllers:``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, NamedTuple, Sequence

#: Enable everything that is on by default (upstream's default flag value).
ALL = "*"


class ControllerSpec(NamedTuple):
    """A controller the cluster can run: its name, old aliases and how to build it."""

    name: str
    #: Builds the controller from the cluster's config.
    factory: Callable[[Any], Any]
    aliases: tuple[str, ...] = ()
    enabled_by_default: bool = True

    def known_as(self, word: str) -> bool:
        return word == self.name or word in self.aliases


def parse_enable_list(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"*,-podgc"`` (or a list of words) as a tuple of words, whitespace trimmed."""
    words = text.split(",") if isinstance(text, str) else list(text)
    return tuple(word.strip() for word in words if word.strip())


def enabled_controllers(specs: Sequence[ControllerSpec], enable_list: Iterable[str]) -> list[ControllerSpec]:
    """The specs the list enables, in the specs' order; ValueError for an unknown name."""
    words = tuple(enable_list)
    for word in words:
        name = word[1:] if word.startswith("-") else word
        if name != ALL and not any(spec.known_as(name) for spec in specs):
            known = ", ".join(spec.name for spec in specs)
            raise ValueError(f'"{name}" is not in the list of known controllers (known: {known})')
    return [spec for spec in specs if _enabled(spec, words)]


def _enabled(spec: ControllerSpec, words: tuple[str, ...]) -> bool:
    if any(word.startswith("-") and spec.known_as(word[1:]) for word in words):
        return False
    if any(spec.known_as(word) for word in words):
        return True
    return ALL in words and spec.enabled_by_default
