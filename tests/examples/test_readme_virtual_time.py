"""README.md's virtual-time example: this file is the block, as a reader would save it."""

# docs:begin README.md#virtual-time
from datetime import datetime, timezone

from fakekube.cluster.frozen import virtual_time

def test_operator_waits_five_minutes(fakekube):
    with virtual_time(fakekube):
        before = datetime.now(timezone.utc)
        fakekube.advance(300)   # datetime.now() moves with the cluster
        assert (datetime.now(timezone.utc) - before).total_seconds() == 300
# docs:end
