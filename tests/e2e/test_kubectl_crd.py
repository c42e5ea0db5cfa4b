"""kubectl with a CustomResourceDefinition: apply, get by short name with printer columns,
explain, ``get all``, server-side field validation, and deleting the CRD takes its
objects along."""

from __future__ import annotations

from fakekube import Cluster

from .conftest import Kubectl

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A CronTab runs an image on a schedule.
        properties:
          spec:
            type: object
            properties:
              cronSpec:
                type: string
                description: The schedule, in cron format.
              image:
                type: string
              replicas:
                type: integer
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
"""

CRONTAB = """
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-cron
spec:
  cronSpec: "* * * * */5"
  image: my-cron-image
  replicas: 2
"""


def test_a_crd_session(kubectl: Kubectl, fakekube: Cluster) -> None:
    assert kubectl.ok("apply", "-f", "-", stdin=CRD).strip() == \
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created"
    assert kubectl.ok("apply", "-f", "-", stdin=CRONTAB).strip() == "crontab.stable.example.com/my-cron created"
    fakekube.advance(65)
    lines = kubectl.ok("get", "ct").splitlines()
    assert lines[0].split() == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert lines[1].split() == ["my-cron", "*", "*", "*", "*", "*/5", "2", "65s"]
    assert kubectl.ok("apply", "-f", "-", stdin=CRONTAB).strip() == "crontab.stable.example.com/my-cron unchanged"
    crds = kubectl.ok("get", "crd").splitlines()
    assert crds[0].split() == ["NAME", "CREATED", "AT"]
    assert crds[1].split() == ["crontabs.stable.example.com", "2025-01-01T00:00:00Z"]

    explained = kubectl.ok("explain", "crontab.spec")
    assert "cronSpec" in explained and "The schedule, in cron format." in explained

    everything = kubectl.ok("get", "all")
    assert "crontab.stable.example.com/my-cron" in everything

    assert kubectl.ok("delete", "crd", "crontabs.stable.example.com").strip() == \
        'customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted'
    assert fakekube.store.list(("stable.example.com", "crontabs"))[0] == []
    gone = kubectl("get", "crontabs")
    assert gone.rc != 0
    # kubectl's discovery cache may still know the type: then the list itself is a 404
    assert ('the server doesn\'t have a resource type "crontabs"' in gone.stderr
            or "the server could not find the requested resource" in gone.stderr)


def test_kubectl_apply_refuses_unknown_fields(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", "-", stdin=CRD)
    result = kubectl("apply", "-f", "-", stdin=CRONTAB + "  extra: 1\n")
    assert result.rc != 0
    assert 'unknown field "spec.extra"' in result.stderr


LOOSE_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: looses.loose.example.com}
spec:
  group: loose.example.com
  scope: Namespaced
  names: {plural: looses, singular: loose, kind: Loose}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""

LOOSE_LIST = """
apiVersion: v1
kind: List
items:
- apiVersion: loose.example.com/v1
  kind: Loose
  metadata: {name: one}
  spec: {anything: 1}
  data: {color: blue}
"""


def test_a_list_of_objects_whose_root_preserves_unknown_fields_is_applied(kubectl: Kubectl, fakekube: Cluster) -> None:
    """kubectl validates a ``kind: List``'s items against ``/openapi/v2``: a root that keeps
    unknown fields is published as a bare object there (apiextensions' v2 builder), not as
    apiVersion/kind/metadata only, which would refuse every other field."""
    kubectl.ok("apply", "-f", "-", stdin=LOOSE_CRD)
    assert kubectl.ok("apply", "-f", "-", stdin=LOOSE_LIST) == "loose.loose.example.com/one created\n"
    assert fakekube.get("loose.example.com/v1", "Loose", "one")["data"] == {"color": "blue"}
