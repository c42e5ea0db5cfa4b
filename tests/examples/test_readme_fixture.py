"""README.md's pytest fixture example: this file is the block, as a reader would save it."""

# docs:begin README.md#pytest-fixture
import pytest

@pytest.mark.fakekube(nodes=2)
def test_something(fakekube):
    # KUBECONFIG points at this test's clean cluster for the duration of the test.
    assert len(fakekube.list("v1", "Node")) == 2
# docs:end
