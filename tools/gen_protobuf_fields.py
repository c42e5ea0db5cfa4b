"""Generate ``fakekube/api/wire/protobuf/fields.json``: the field table the protobuf body decoder reads.

Why: kubectl >= 1.32 sends built-in objects as Kubernetes protobuf. The wire carries
only field numbers, and upstream turns the decoded Go struct into JSON with rules that
live in two places: the ``generated.proto`` files (field number, proto type, repeated or
map) and the Go struct tags in ``types.go`` (JSON name, ``omitempty``, pointer or not,
``inline``). This script joins both into one compact table so the decoder needs neither
protoc nor Go at run time.

Inputs are the local git mirrors of kubernetes/api, kubernetes/apimachinery,
kubernetes/apiextensions-apiserver and kubernetes/kube-aggregator (read with
``git show <ref>:<path>``, never a work tree) at one release tag, the newest
release fakekube serves (fields of later releases stay out of the table)::

    python tools/gen_protobuf_fields.py \\
        --api /work/.mirror/kubernetes+api/repo \\
        --apimachinery /work/.mirror/kubernetes+apimachinery/repo \\
        --apiextensions /work/.mirror/kubernetes+apiextensions-apiserver/repo \\
        --aggregator /work/.mirror/kubernetes+kube-aggregator/repo \\
        --ref v0.36.2

The output is deterministic (sorted keys), so re-running it on the same commits gives
the same bytes. Table shape::

    {"attribution": ..., "sources": {...commits...},
     "messages": {"k8s.io.api.core.v1.ConfigMap": {"fields": [[number, json, type, card, flags, key_type], ...]},
                  "k8s.io.api.authentication.v1.ExtraValue": {"list": true, "fields": [...]}}}

``card`` is ``opt``, ``rep`` or ``map``; ``flags`` holds ``o`` (omitempty), ``z``
(omitzero), ``p`` (pointer), ``i`` (inline: the message's fields merge into the
parent), ``r`` (a core/v1 ``ResourceList``, whose quantities defaulting rounds up to
milli-units); ``type`` is a
scalar proto type or a fully qualified message name. Fields are listed in Go struct
order, which is the order upstream's JSON encoder writes them in. ``list`` marks a Go
named slice (``type ExtraValue []string``) whose JSON is the bare ``items`` array.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

ATTRIBUTION = ("derived from kubernetes/api and kubernetes/apimachinery generated.proto and types.go "
               "(Apache-2.0, Copyright The Kubernetes Authors)")

#: The kubernetes/api packages fakekube serves.
API_PACKAGES = ("core/v1", "apps/v1", "batch/v1", "autoscaling/v2", "autoscaling/v1", "networking/v1", "policy/v1",
                "rbac/v1", "storage/v1", "scheduling/v1", "coordination/v1", "discovery/v1", "events/v1",
                "authorization/v1", "authentication/v1", "certificates/v1", "flowcontrol/v1", "node/v1",
                "admissionregistration/v1", "resource/v1")
#: The packages of the two other API servers kube-apiserver embeds (their own repositories).
APIEXTENSIONS_PACKAGES = ("pkg/apis/apiextensions/v1",)
AGGREGATOR_PACKAGES = ("pkg/apis/apiregistration/v1",)
#: The apimachinery packages their messages refer to.
APIMACHINERY_PACKAGES = ("pkg/apis/meta/v1", "pkg/api/resource", "pkg/util/intstr", "pkg/runtime")

SCALARS = {"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
           "fixed32", "fixed64", "sfixed32", "sfixed64", "double", "float"}

_PACKAGE_RE = re.compile(r"^package\s+([\w.]+)\s*;", re.M)
_MESSAGE_RE = re.compile(r"^message\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)
_FIELD_RE = re.compile(r"^\s*(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)", re.M)
_MAP_RE = re.compile(r"^\s*map<\s*([\w.]+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)", re.M)
_STRUCT_RE = re.compile(r"^type\s+(\w+)\s+struct\s*\{(\}|.*?^\})", re.M | re.S)  # `struct{}` ends at once
_SLICE_RE = re.compile(r"^type\s+(\w+)\s+\[\](\w+)\s*$", re.M)
_TAG_RE = re.compile(r'(\w+):"([^"]*)"')


#: The tag (or commit) every repository is read at; set from ``--ref``.
REF = "HEAD"


def git_show(repo: Path, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"{REF}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def git_ls(repo: Path, folder: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "ls-tree", "--name-only", REF, folder + "/"], check=True,
                         capture_output=True, text=True).stdout
    return sorted(out.split())


def git_head(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", f"{REF}^{{commit}}"], check=True,
                          capture_output=True, text=True).stdout.strip()


def strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def qualify(type_name: str, package: str) -> str:
    """A proto type as a fully qualified name (``.k8s.io...`` or relative to the package)."""
    if type_name in SCALARS:
        return type_name
    if type_name.startswith("."):
        return type_name[1:]
    return f"{package}.{type_name}"


def parse_proto(text: str) -> tuple[str, dict[str, dict[int, tuple[str, str, str, str]]]]:
    """Messages of one generated.proto: name -> number -> (proto name, type, card, key type)."""
    text = strip_comments(text)
    package = _PACKAGE_RE.search(text).group(1)
    messages: dict[str, dict[int, tuple[str, str, str, str]]] = {}
    for match in _MESSAGE_RE.finditer(text):
        fields: dict[int, tuple[str, str, str, str]] = {}
        body = match.group(2)
        for label, ftype, name, number in _FIELD_RE.findall(body):
            fields[int(number)] = (name, qualify(ftype, package), "rep" if label == "repeated" else "opt", "")
        for key, value, name, number in _MAP_RE.findall(body):
            fields[int(number)] = (name, qualify(value, package), "map", key)
        messages[match.group(1)] = fields
    return package, messages


def parse_go(text: str) -> tuple[dict[str, list[tuple[int, str, str]]], set[str]]:
    """Go structs: name -> [(proto number, json name, flags)] in struct order; and named slices."""
    structs: dict[str, list[tuple[int, str, str]]] = {}
    for match in _STRUCT_RE.finditer(text):
        fields = []
        for line in match.group(2).splitlines():
            field = parse_go_field(line)
            if field is not None:
                fields.append(field)
        structs[match.group(1)] = fields
    return structs, {name for name, _ in _SLICE_RE.findall(text)}


def parse_go_field(line: str) -> tuple[int, str, str] | None:
    """One struct field with a protobuf tag, or None (comments, TypeMeta, untagged fields)."""
    line = line.strip()
    if line.startswith("//") or "`" not in line:
        return None
    decl, tag = line.split("`")[0].split(), line.split("`")[1]
    tags = dict(_TAG_RE.findall(tag))
    if "protobuf" not in tags or tags["protobuf"].count(",") < 2:  # untagged, or protobuf:"-"
        return None
    go_type = decl[-1]
    number = int(tags["protobuf"].split(",")[1])
    json_parts = tags.get("json", "").split(",")
    json_name = json_parts[0]
    if json_name == "-":
        return None
    flags = ""
    if "omitempty" in json_parts[1:]:
        flags += "o"
    if "omitzero" in json_parts[1:]:
        flags += "z"
    if go_type.startswith("*"):
        flags += "p"
    if go_type.rpartition(".")[2] == "ResourceList":
        flags += "r"
    if "inline" in json_parts[1:] or (len(decl) == 1 and not json_name):
        flags += "i"
    if not json_name:  # inline (merged into the parent) or untagged: the proto name stands in
        json_name = tags["protobuf"].partition("name=")[2].split(",")[0]
    return number, json_name, flags


def package_files(repo: Path, folder: str) -> tuple[str, list[str]]:
    proto = git_show(repo, f"{folder}/generated.proto")
    go_files = [p for p in git_ls(repo, folder)
                if p.endswith(".go") and not p.endswith("_test.go") and "zz_generated" not in p
                and not p.endswith("generated.pb.go")]
    return proto, [git_show(repo, p) for p in go_files]


def build_package(proto_text: str, go_texts: list[str]) -> dict[str, dict]:
    """One package's messages, each field joined with its Go tag (proto name as fallback)."""
    package, messages = parse_proto(proto_text)
    structs: dict[str, list[tuple[int, str, str]]] = {}
    slices: set[str] = set()
    for text in go_texts:
        found, named_slices = parse_go(text)
        structs.update(found)
        slices |= named_slices
    table: dict[str, dict] = {}
    for name, fields in messages.items():
        entry: dict = {"fields": []}
        go_fields = structs.get(name, [])
        order = [number for number, _, _ in go_fields if number in fields]
        order += sorted(n for n in fields if n not in order)
        tags = {number: (json_name, flags) for number, json_name, flags in go_fields}
        for number in order:
            proto_name, ftype, card, key = fields[number]
            json_name, flags = tags.get(number, (proto_name, "o"))
            entry["fields"].append([number, json_name, ftype, card, flags, key])
        if name in slices:
            entry["list"] = True
        table[f"{package}.{name}"] = entry
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", type=Path, default=Path("/work/.mirror/kubernetes+api/repo"))
    parser.add_argument("--apimachinery", type=Path, default=Path("/work/.mirror/kubernetes+apimachinery/repo"))
    parser.add_argument("--apiextensions", type=Path,
                        default=Path("/work/.mirror/kubernetes+apiextensions-apiserver/repo"))
    parser.add_argument("--aggregator", type=Path, default=Path("/work/.mirror/kubernetes+kube-aggregator/repo"))
    parser.add_argument("--ref", default="HEAD", help="the tag every repository is read at (e.g. v0.36.2)")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent.parent / "fakekube/api/wire/protobuf/fields.json")
    args = parser.parse_args()
    global REF
    REF = args.ref
    messages: dict[str, dict] = {}
    for repo, folders in ((args.apimachinery, APIMACHINERY_PACKAGES), (args.api, API_PACKAGES),
                          (args.apiextensions, APIEXTENSIONS_PACKAGES), (args.aggregator, AGGREGATOR_PACKAGES)):
        for folder in folders:
            messages.update(build_package(*package_files(repo, folder)))
    table = {"attribution": ATTRIBUTION,
             "sources": {"kubernetes/api": git_head(args.api), "kubernetes/apimachinery": git_head(args.apimachinery),
                         "kubernetes/apiextensions-apiserver": git_head(args.apiextensions),
                         "kubernetes/kube-aggregator": git_head(args.aggregator)},
             "messages": messages}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"wrote {len(messages)} messages to {args.out}")


if __name__ == "__main__":
    main()
