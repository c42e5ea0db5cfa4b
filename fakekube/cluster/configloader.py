"""Reading a cluster config file's YAML strictly (a key given twice is an error).

Apart from :mod:`fakekube.cluster.configfile` so that PyYAML loads only when a config
file is read: the control API uses the rest of that module in every ``fakekube serve``.
"""

from __future__ import annotations

from typing import Any

import yaml

from fakekube.cluster.configfile import ConfigError, _one_line


def load_yaml(text: str) -> Any:
    """The config file's YAML, or ConfigError naming the problem and where it is."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except ConfigError:
        raise
    except yaml.YAMLError as error:
        raise ConfigError(f"not valid YAML: {_yaml_problem(error)}") from None


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (PyYAML keeps the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                continue  # not hashable here; the config's own checks refuse non-string keys
            if key in seen:
                mark = key_node.start_mark
                raise ConfigError(f"{key}: given twice in one mapping (line {mark.line + 1}, column {mark.column + 1})")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _yaml_problem(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return _one_line(f"{problem}{where}")
