"""The package's own promises: pure imports, explicit exports, well-known names."""

import ast
import pathlib

import fakekube.objects as objects
from fakekube.objects import constants

PACKAGE = pathlib.Path(objects.__file__).parent
ALLOWED = ("fakekube.objects", "fakekube.clock", "fakekube.store")


def test_imports_nothing_above_store_and_clock():
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith("fakekube"):
                    assert name.startswith(ALLOWED), f"{path.name} imports {name}"


def test_every_exported_name_exists():
    for name in objects.__all__:
        assert hasattr(objects, name), name


def test_well_known_names():
    assert constants.LABEL_HOSTNAME == "kubernetes.io/hostname"
    assert constants.LABEL_TOPOLOGY_ZONE == "topology.kubernetes.io/zone"
    assert constants.LABEL_POD_TEMPLATE_HASH == "pod-template-hash"
    assert constants.LABEL_CONTROLLER_REVISION_HASH == "controller-revision-hash"
    assert constants.ANNOTATION_DEPLOYMENT_REVISION == "deployment.kubernetes.io/revision"
