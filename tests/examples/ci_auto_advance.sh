# README.md's CI script against `fakekube serve --auto-advance`: test_howto_ci_script.py starts
# the first line in the background, then runs the rest as one script, with the kubeconfig in
# a temporary directory and PORT set to the port serve printed.
# docs:begin README.md#ci-auto-advance
fakekube serve --nodes 2 --auto-advance --kubeconfig /tmp/ci.kubeconfig   # in the background
export KUBECONFIG=/tmp/ci.kubeconfig PORT=...    # the port of the URL it printed
curl -s -X POST localhost:$PORT/fakekube/v1/nodes/node-1/fail
sleep 2                                          # nobody waits: no time passes
kubectl get node node-1                          # still Ready
kubectl wait --for=condition=Ready=Unknown node/node-1 --timeout=60s   # 55 virtual s, at once
# docs:end
