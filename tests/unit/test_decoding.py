"""Request bodies decoded as upstream's Go decoder does, with its error wording."""

from __future__ import annotations

import pytest

from fakekube.api.wire import decoding, schema
from fakekube.api.machinery.errors import ApiError

SCHEMAS = schema.load()


@pytest.mark.parametrize("text, message", [
    ('{"kind":', "unexpected end of JSON input"),
    ("", "unexpected end of JSON input"),
    ('{"a": tru}', "invalid character '}' in literal true (expecting 'e')"),
    ('{"a" 1}', "invalid character '1' after object key"),
    ('{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    ("[1 2]", "invalid character '2' after array element"),
    ("{} x", "invalid character 'x' after top-level value"),
    ("{a:1}", "invalid character 'a' looking for beginning of object key string"),
    ("{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
    ("NaN", "invalid character 'N' looking for beginning of value"),
    ('"a\nb"', "invalid character '\\n' in string literal"),
])
def test_syntax_errors_read_as_go_encoding_json(text: str, message: str) -> None:
    with pytest.raises(decoding.SyntaxFailure) as info:
        decoding.parse_json(text.encode())
    assert str(info.value) == message


def test_yaml_keeps_timestamps_as_strings_and_reads_the_first_document() -> None:
    assert decoding.parse_yaml(b"a: 2024-01-01T00:00:00Z\n---\nb: [\n") == {"a": "2024-01-01T00:00:00Z"}


@pytest.mark.parametrize("raw, message", [
    (b"\x00", "yaml: control characters are not allowed"),
    (b"a: 1\nb: \x01", "yaml: control characters are not allowed"),
    (b"a: \xff\xfe", "yaml: invalid leading UTF-8 octet"),
])
def test_yaml_the_reader_refuses_is_a_syntax_failure_in_go_yamls_words(raw: bytes, message: str) -> None:
    with pytest.raises(decoding.SyntaxFailure) as info:
        decoding.parse_yaml(raw)
    assert str(info.value) == message


def test_a_body_that_is_not_an_object_names_the_interpret_struct_and_quotes_the_bytes() -> None:
    with pytest.raises(ApiError) as info:
        decoding.decode_body(b"[1,2]", "json", "ConfigMap")
    assert info.value.code == 400
    assert info.value.message.startswith("the object provided is unrecognized (must be of type ConfigMap): "
                                         "couldn't get version/kind; json parse error: json: cannot unmarshal array")
    assert info.value.message.endswith("(5b312c325d)")


def test_summaries_cut_at_30_bytes() -> None:
    assert decoding.summarize(b"") == "<empty>"
    assert decoding.summarize(b'{"' + b"a" * 40) == '{"' + "a" * 28 + " ..."


def test_a_null_body_is_an_empty_object() -> None:
    assert decoding.decode_body(b"null", "json", "ConfigMap") == {}


@pytest.mark.parametrize("obj, message", [
    ({"spec": {"replicas": "three"}},
     "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"spec": {"replicas": 1.5}},
     "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"spec": {"replicas": 2**31}},
     "json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"spec": {"template": {"spec": {"containers": [{"env": [{"name": "A", "value": 1}]}]}}}},
     "json: cannot unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value "
     "of type string"),
    ({"metadata": {"labels": {"a": True}}},
     "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"),
    ({"spec": {"template": {"spec": {"containers": "x"}}}},
     "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers "
     "of type []v1.Container"),
    ({"spec": {"strategy": {"rollingUpdate": {"maxSurge": True}}}},
     "json: cannot unmarshal bool into Go value of type int32"),
])
def test_type_errors_read_as_go_encoding_json(obj: dict, message: str) -> None:
    assert decoding.type_error(obj, SCHEMAS, "apps", "v1", "Deployment") == message


def test_the_first_type_error_in_document_order_wins() -> None:
    obj = {"metadata": {"name": 1}, "spec": {"replicas": "x"}}
    assert decoding.type_error(obj, SCHEMAS, "apps", "v1", "Deployment") == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string")


def test_quantities_and_base64_use_their_own_decoders_messages() -> None:
    pod = {"spec": {"containers": [{"resources": {"limits": {"cpu": "lots"}}}]}}
    assert decoding.type_error(pod, SCHEMAS, "", "v1", "Pod") == decoding.ERR_QUANTITY_FORMAT
    assert decoding.type_error({"data": {"k": "no base64!"}}, SCHEMAS, "", "v1", "Secret") == (
        "illegal base64 data at input byte 2")


def test_valid_objects_and_unknown_kinds_decode() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"a": "b"}},
                  "spec": {"replicas": 2, "strategy": {"rollingUpdate": {"maxSurge": "25%"}},
                           "template": {"spec": {"containers": [{"name": "c", "image": "i",
                                                                 "resources": {"limits": {"cpu": "500m"}}}]}}}}
    assert decoding.type_error(deployment, SCHEMAS, "apps", "v1", "Deployment") is None
    assert decoding.type_error({"spec": "anything"}, SCHEMAS, "example.com", "v1", "Widget") is None


def test_nulls_take_go_zero_values() -> None:
    pod = {"metadata": None, "spec": {"containers": [None, {"name": "c", "args": [None]}]},
           "status": {"phase": None}}
    assert decoding.decode_into(pod, SCHEMAS, "", "v1", "Pod") is None
    assert pod == {"spec": {"containers": [{}, {"name": "c", "args": [""]}]}, "status": {}}
