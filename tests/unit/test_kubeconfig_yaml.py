"""The kubeconfig fakekube writes without PyYAML reads back, through PyYAML, as its document."""

from __future__ import annotations

import pytest
import yaml

from fakekube.cluster.kubeconfig import kubeconfig_document, kubeconfig_yaml


@pytest.mark.parametrize("ca_pem", [None, b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"])
def test_written_yaml_reads_back_as_the_document(ca_pem: bytes | None) -> None:
    document = kubeconfig_document("https://127.0.0.1:6443", ca_pem=ca_pem)
    assert yaml.safe_load(kubeconfig_yaml(document)) == document


def test_every_scalar_is_quoted_and_empty_collections_are_flow() -> None:
    document = {"a": "x: y # not a comment", "b": [], "c": {}, "d": [{"e": "é\n"}]}
    text = kubeconfig_yaml(document)
    assert text == 'a: "x: y # not a comment"\nb: []\nc: {}\nd:\n- e: "\\u00e9\\n"\n'
    assert yaml.safe_load(text) == document
