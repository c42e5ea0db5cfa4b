# README.md's control API calls: test_howto_control_api.py runs every line against
# `fakekube serve`, with PORT (the one word a reader replaces) set to the port it printed.
# docs:begin README.md#control-api-clock
# PORT: the port of the URL that fakekube serve printed
curl -s localhost:PORT/fakekube/v1/clock
curl -s -X POST localhost:PORT/fakekube/v1/clock/advance -d '{"seconds": 300}'
curl -s -X POST localhost:PORT/fakekube/v1/settle
curl -s -X POST localhost:PORT/fakekube/v1/reset
# docs:end

# docs:begin README.md#control-api-nodes
curl -s -X POST localhost:PORT/fakekube/v1/nodes/node-1/fail        # kubelet dead (.../recover)
curl -s -X POST localhost:PORT/fakekube/v1/nodes/node-1/partition   # cut off from the apiserver (.../heal)
curl -s -X POST localhost:PORT/fakekube/v1/nodes/node-1/restart     # kubelet process restart
curl -s -X POST localhost:PORT/fakekube/v1/nodes/node-1/conditions -d '{"type": "MemoryPressure", "status": "True"}'
curl -s -X DELETE localhost:PORT/fakekube/v1/nodes/node-1/conditions/MemoryPressure
# docs:end

# docs:begin README.md#control-api-snapshots
curl -s -X POST localhost:PORT/fakekube/v1/snapshots              # {"id": "1", "time": ..., ...}
curl -s localhost:PORT/fakekube/v1/snapshots                      # the ones kept (16 at most)
curl -s -X POST localhost:PORT/fakekube/v1/snapshots/1/restore    # back to it; watches end with 410
curl -s -X DELETE localhost:PORT/fakekube/v1/snapshots/1
# docs:end
