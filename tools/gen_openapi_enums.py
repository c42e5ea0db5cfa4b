"""Generate ``fakekube/api/verbs/openapi_enums.json``: upstream's OpenAPI enums, per release.

Why: fakekube's schemas come from kubernetes-validate, which carries neither the ``enum``
lists nor the "Possible enum values:" paragraphs that kube-openapi's generator writes for
every field whose Go type is marked ``+enum`` (DeploymentStrategy.type, JobSpec.completionMode,
Container.imagePullPolicy, …). kubectl explain prints them and clients generate code from them.

Two inputs:

* ``--reference DIR``: the OpenAPI v3 group-version documents of a real kube-apiserver of the
  newest served release (``DIR/*.json``, each with ``components.schemas``: what
  ``GET /openapi/v3/<path>`` answers, or upstream's ``api/openapi-spec/v3/*.json``). They say
  which field carries which enum, where (on the field, on its ``items``, on its
  ``additionalProperties``), and the exact text upstream publishes.
* the local git mirrors of kubernetes/api, kubernetes/apimachinery and
  kubernetes/apiextensions-apiserver (read with ``git show <tag>:<path>``, never a work tree):
  each release's ``+enum`` string types and their constants, from which the paragraph is
  rebuilt as kube-openapi's enum generator builds it (one line per constant,
  `` - `"value"` comment``, the comment without the constant's name, whitespace folded, lines
  sorted; values sorted). The rebuilt text of the reference's release must equal what the
  reference publishes, field for field — the script stops otherwise — so the older releases'
  text, rebuilt by the same rule from their own tags, is what their apiservers publish.

::

    python tools/gen_openapi_enums.py --reference /tmp/ref-openapi-v3 \\
        --api /work/.mirror/kubernetes+api/repo \\
        --apimachinery /work/.mirror/kubernetes+apimachinery/repo \\
        --apiextensions /work/.mirror/kubernetes+apiextensions-apiserver/repo \\
        --release 1.33=v0.33.13 --release 1.34=v0.34.10 --release 1.35=v0.35.7 --release 1.36=v0.36.2

Output shape (sorted keys, deterministic)::

    {"attribution": ..., "sources": {"1.36": "v0.36.2", ...},
     "types": {"apps/v1.DeploymentStrategyType": [{"releases": ["1.33", ...], "enum": [...],
                                                   "paragraph": "Possible enum values:\\n - ..."}]},
     "fields": {"io.k8s.api.apps.v1.DeploymentStrategy": {"type": ["", "apps/v1.DeploymentStrategyType"]},
                "io.k8s.api.admissionregistration.v1.Mutation": {"patchType": ["", "…PatchType", "\\n\\n\\n"]}},
     "descriptions": {"io.k8s.apimachinery.pkg.api.resource.Quantity": "Quantity is a fixed-point …"}}

``descriptions`` are the few definitions' own descriptions the schema source leaves out
(Quantity, IntOrString) or whose definition it lacks (apiextensions' JSON), as the reference
publishes them. A field's slot is ``""`` (the property itself: ``enum`` plus the paragraph appended to its
description, after a blank line unless a third element says which newlines), ``"items"`` or
``"additionalProperties"`` (``enum`` there, no paragraph: as upstream).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "fakekube" / "api" / "verbs" / "openapi_enums.json"
HEADER = "Possible enum values:"
_TYPE_RE = re.compile(r"^type\s+(\w+)\s+string\s*$")
_CONST_RE = re.compile(r'^\s*(\w+)\s+(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?://.*)?$')
_CONST_CONV_RE = re.compile(r'^\s*(\w+)\s*=\s*(\w+)\("((?:[^"\\]|\\.)*)"\)\s*(?://.*)?$')
#: ``AddressTypeIPv4 = AddressType(v1.IPv4Protocol)``: a conversion of another constant.
_CONST_REF_RE = re.compile(r'^\s*(\w+)\s*=\s*(\w+)\((?:\w+\.)?(\w+)\)\s*(?://.*)?$')
_WS = re.compile(r"\s+")

Enums = dict[str, list[tuple[str, str, str]]]  # "apps/v1.Type" -> [(const name, value, comment)]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _go_files(repo: Path, tag: str, prefix: str) -> Iterator[tuple[str, str]]:
    """(package path, source) of every non-test Go file at ``tag`` (``prefix`` names the repo's packages)."""
    for path in _git(repo, "ls-tree", "-r", "--name-only", tag).splitlines():
        if path.endswith(".go") and not path.endswith("_test.go") and "/testing/" not in path \
                and "/fuzzer/" not in path and not path.rsplit("/", 1)[-1].startswith("zz_generated"):
            yield prefix + path.rsplit("/", 1)[0] if "/" in path else prefix, _git(repo, "show", f"{tag}:{path}")


def _comment_text(lines: list[str]) -> str:
    """A doc comment as gengo hands it to the generator, joined by spaces: comment markers and
    the first space of each line removed, Go directives (``//go:…``) dropped."""
    out = []
    for line in lines:
        text = line.strip()[2:]
        if text.startswith("go:") or text.startswith("line "):
            continue
        out.append(text[1:] if text.startswith(" ") else text)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return " ".join(line.rstrip() for line in out)


def parse_enums(files: Iterator[tuple[str, str]]) -> Enums:
    """Every ``+enum`` string type and the typed string constants of it, by package."""
    sources = list(files)
    enum_types: set[str] = set()
    for package, source in sources:
        comment: list[str] = []
        for line in source.splitlines():
            if line.startswith("//"):
                comment.append(line)
                continue
            match = _TYPE_RE.match(line)
            if match and any(c.strip() in ("// +enum", "//+enum") for c in comment):
                enum_types.add(f"{package}.{match.group(1)}")
            comment = []
    literals: dict[str, str] = {}
    for _, source in sources:
        for line in source.splitlines():
            match = _CONST_RE.match(line) or _CONST_CONV_RE.match(line)
            if match:
                literals.setdefault(match.group(1), json.loads(f'"{match.group(3)}"'))
    enums: Enums = {name: [] for name in sorted(enum_types)}
    for package, source in sources:
        comment = []
        for line in source.splitlines():
            stripped = line.strip()
            if stripped.startswith("//"):
                comment.append(stripped)
                continue
            match = _CONST_RE.match(line) or _CONST_CONV_RE.match(line)
            ref = None if match else _CONST_REF_RE.match(line)
            if match or ref:
                name, typ, raw = (match or ref).groups()  # type: ignore[union-attr]
                value = json.loads(f'"{raw}"') if match else literals.get(raw)
                key = f"{package}.{typ}"
                if key in enums and value is not None:
                    _add(enums[key], (name, value, _comment_text(comment)))
            comment = []
    return enums


def _add(values: list[tuple[str, str, str]], value: tuple[str, str, str]) -> None:
    """kube-openapi's addIfNotPresent: one entry per value, the longer comment wins."""
    for i, existing in enumerate(values):
        if existing[1] == value[1]:
            if len(existing[2]) < len(value[2]) or (len(existing[2]) == len(value[2]) and existing[2] > value[2]):
                values[i] = value
            return
    values.append(value)


def go_quote(value: str) -> str:
    """Go's ``%q`` of a plain ASCII string (what enum values are)."""
    return json.dumps(value, ensure_ascii=True)


def paragraph(values: list[tuple[str, str, str]]) -> str:
    """The "Possible enum values:" paragraph kube-openapi appends to a field's description (a
    line's trailing space, where a constant has no comment, does not reach the document)."""
    lines = []
    for name, value, comment in values:
        text = comment.strip()
        if text.startswith(name):
            text = text[len(name):]
        lines.append(f" - `{go_quote(value)}` {_WS.sub(' ', text.strip())}".rstrip())
    return "\n".join([HEADER] + sorted(lines))


def reference_fields(directory: Path) -> dict[tuple[str, str, str], tuple[list[str], str, int]]:
    """(definition, property, slot) → (enum, paragraph or "", newlines before it) from a
    reference's v3 documents. The paragraph follows a blank line, or two where the Go doc
    comment ends with an empty line (kubernetes-validate trims that line's newline)."""
    found: dict[tuple[str, str, str], tuple[list[str], str, int]] = {}
    for path in sorted(directory.glob("*.json")):
        document = json.loads(path.read_text())
        schemas = document.get("components", {}).get("schemas", {}) if isinstance(document, dict) else {}
        for name, schema in schemas.items():
            for prop, node in schema.get("properties", {}).items():
                if "enum" in node:
                    description = node.get("description", "")
                    cut = description.find(HEADER)
                    newlines = len(description[:cut]) - len(description[:cut].rstrip("\n")) if cut > 0 else 0
                    found[(name, prop, "")] = (node["enum"], description[cut:] if cut >= 0 else "", newlines)
                for slot in ("items", "additionalProperties"):
                    inner = node.get(slot)
                    if isinstance(inner, dict) and "enum" in inner:
                        found[(name, prop, slot)] = (inner["enum"], "", 0)
    return found


def _package_of(definition: str) -> str:
    """``io.k8s.api.apps.v1.Deployment`` → ``apps/v1``, as :func:`_go_files` names packages."""
    for prefix, package in (("io.k8s.api.", ""), ("io.k8s.apimachinery.", "apimachinery/"),
                            ("io.k8s.apiextensions-apiserver.", "apiextensions/")):
        if definition.startswith(prefix):
            return package + "/".join(definition[len(prefix):].split(".")[:-1])
    return ""


def _type_of(definition: str, enum: list[str], text: str, candidates: dict[str, tuple[list[str], str]]) -> str:
    """The Go type whose rebuilt enum (and paragraph, for a field slot) the reference shows; of
    the definition's own package when several versions of a group declare the same type."""
    matches = [name for name, (values, para) in candidates.items()
               if values == enum and (not text or para == text)]
    own = [name for name in matches if name.rsplit(".", 1)[0] == _package_of(definition)]
    matches = own or matches
    if len(matches) != 1:
        raise SystemExit(f"no single +enum type publishes {enum} / {text[:80]!r}: {matches}")
    return matches[0]


def missing_descriptions(directory: Path, release: str) -> dict[str, str]:
    """The descriptions of definitions the schema source (kubernetes-validate) has without
    one, or lacks altogether (apiextensions' JSON), as the reference publishes them."""
    sys.path.insert(0, str(REPO))
    from fakekube.api.wire.schema import load
    source = load(release).definitions
    found: dict[str, str] = {}
    for path in sorted(directory.glob("*.json")):
        document = json.loads(path.read_text())
        schemas = document.get("components", {}).get("schemas", {}) if isinstance(document, dict) else {}
        for name, schema in schemas.items():
            if "description" in schema and "description" not in source.get(name, {}):
                found[name] = schema["description"]
    return found


def _rebuilt(enums: Enums) -> dict[str, tuple[list[str], str]]:
    return {name: (sorted(v for _, v, _ in values), paragraph(values)) for name, values in enums.items() if values}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--api", type=Path, required=True)
    parser.add_argument("--apimachinery", type=Path, required=True)
    parser.add_argument("--apiextensions", type=Path, required=True)
    parser.add_argument("--release", action="append", required=True, help="1.36=v0.36.2 (the reference's last)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    releases = dict(item.split("=", 1) for item in args.release)
    per_release: dict[str, dict[str, tuple[list[str], str]]] = {}
    for release, tag in releases.items():
        files = [*_go_files(args.api, tag, ""),
                 *_go_files(args.apimachinery, tag, "apimachinery/"),
                 *_go_files(args.apiextensions, tag, "apiextensions/")]
        per_release[release] = _rebuilt(parse_enums(iter(files)))
    newest = max(releases, key=lambda r: tuple(int(p) for p in r.split(".")))
    fields: dict[str, dict[str, list[str]]] = {}
    for (name, prop, slot), (enum, text, newlines) in sorted(reference_fields(args.reference).items()):
        entry = [slot, _type_of(name, enum, text, per_release[newest])]
        fields.setdefault(name, {})[prop] = entry + ["\n" * newlines] if newlines not in (0, 2) else entry
    used = sorted({props[1] for definition in fields.values() for props in definition.values()})
    types: dict[str, list[dict[str, Any]]] = {}
    for typ in used:
        variants: list[dict[str, Any]] = []
        for release in sorted(per_release, key=lambda r: tuple(int(p) for p in r.split("."))):
            if typ not in per_release[release]:
                continue
            enum, text = per_release[release][typ]
            same = next((v for v in variants if v["enum"] == enum and v["paragraph"] == text), None)
            if same is None:
                variants.append({"releases": [release], "enum": enum, "paragraph": text})
            else:
                same["releases"].append(release)
        types[typ] = variants
    descriptions = missing_descriptions(args.reference, newest)
    out = {"attribution": "derived from kubernetes/api, kubernetes/apimachinery and kubernetes/apiextensions-apiserver "
                          "(+enum types and their constants) and a kube-apiserver's published OpenAPI "
                          "(Apache-2.0, Copyright The Kubernetes Authors)",
           "sources": releases, "types": types, "fields": fields, "descriptions": descriptions}
    args.output.write_text(json.dumps(out, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")
    print(f"{len(fields)} definitions, {sum(len(p) for p in fields.values())} fields, {len(types)} types -> {args.output}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
