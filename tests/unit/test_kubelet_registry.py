"""kubelet/imageref.py and kubelet/registry.py: references parsed as distribution/reference
parses them, and which images a simulated registry has."""

from __future__ import annotations

import pytest

from fakekube.kubelet.imageref import InvalidReference, kubelet_parse_error, parse
from fakekube.kubelet.registry import ImageCatalog, plausible_official_tag


@pytest.mark.parametrize(("image", "normalized", "familiar"), [
    ("nginx", "docker.io/library/nginx:latest", "nginx"),
    ("nginx:1.27", "docker.io/library/nginx:1.27", "nginx"),
    ("docker.io/busybox:latest", "docker.io/library/busybox:latest", "busybox"),
    ("index.docker.io/bitnami/redis:7", "docker.io/bitnami/redis:7", "bitnami/redis"),
    ("localhost:5001/app", "localhost:5001/app:latest", "localhost:5001/app"),
    ("quay.io/x/y:v2.5.2", "quay.io/x/y:v2.5.2", "quay.io/x/y"),
    ("i_made_this_up:and_this_too", "docker.io/library/i_made_this_up:and_this_too", "i_made_this_up"),
    ("nginx:1.27@sha256:" + "a" * 64, "docker.io/library/nginx@sha256:" + "a" * 64, "nginx"),
])
def test_references_normalize_as_docker_does(image: str, normalized: str, familiar: str) -> None:
    assert (parse(image).normalized, parse(image).familiar) == (normalized, familiar)


@pytest.mark.parametrize(("image", "why"), [
    ("Nginx:1.27", "invalid reference format: repository name (library/Nginx) must be lowercase"),
    ("nginx:bad tag", "invalid reference format"),
    ("nginx:", "invalid reference format"),
    ("nginx@sha256:abc", "invalid reference format"),
    ("nginx@sha256:" + "A" * 64, "invalid checksum digest format"),
    ("nginx@md5:" + "a" * 32, "unsupported digest algorithm"),
    ("a" * 64, "invalid repository name (" + "a" * 64 + "), cannot specify 64-byte hexadecimal strings"),
    ("x/" + "y" * 256, "repository name must not be more than 255 characters"),
])
def test_references_that_do_not_parse_say_why_in_the_librarys_words(image: str, why: str) -> None:
    with pytest.raises(InvalidReference) as refused:
        parse(image)
    assert str(refused.value) == why
    assert kubelet_parse_error(image) == (f'Failed to apply default image tag "{image}": '
                                          f'couldn\'t parse image name "{image}": {why}')


@pytest.mark.parametrize(("tag", "plausible"), [
    ("latest", True), ("1.27", True), ("1.27.3-alpine", True), ("stable-alpine", True), ("3.12-slim-bookworm", True),
    ("jammy-20240111", True), ("20-alpine3.19", True), ("1.23rc1", True), ("21-jre-jammy", True),
    ("27-ea", True), ("26-ea-5-jdk-slim-bookworm", True),
    ("nonexistent", False), ("1.0.23449928384992872784", False), ("v2734894949", False), ("bad tag", False),
])
def test_official_tags_are_versions_and_variant_words(tag: str, plausible: bool) -> None:
    assert plausible_official_tag(tag) is plausible


def test_the_catalog_says_why_an_image_is_missing_as_containerd_does() -> None:
    catalog = ImageCatalog()
    assert catalog.judge("nginx:1.27").ok and catalog.judge("myorg/app:1.4.2").ok
    assert catalog.judge("nginx:nope").message.startswith("rpc error: code = NotFound desc = failed to pull and unpack "
                                                          'image "docker.io/library/nginx:nope": failed to resolve')
    assert "pull access denied, repository does not exist" in catalog.judge("app:1").message
    assert catalog.judge("registry.test/app:1").message.endswith(
        'Head "https://registry.test/v2/app/manifests/1": dial tcp: lookup registry.test on 172.18.0.1:53: '
        "no such host")
    assert not catalog.replace(policy="missing").judge("myorg/app:1.4.2").ok
    assert catalog.replace(policy="exists").judge("app:1").ok
    with pytest.raises(ValueError, match="imagePolicy: must be one of plausible, exists, missing"):
        ImageCatalog("sometimes")
