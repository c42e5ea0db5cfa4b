# docs/start-ci.md's script against `fakekube serve --auto-advance`: test_howto_start_ci.py starts
# the first line in the background, then runs the rest as one script from the repository's
# root, with the kubeconfig in a temporary directory and PORT set to the port serve printed.
# docs:begin docs/start-ci.md#script
fakekube serve --nodes 2 --auto-advance --kubeconfig /tmp/fakekube-ci.kubeconfig   # in the background
export KUBECONFIG=/tmp/fakekube-ci.kubeconfig PORT=...   # the port of the URL it printed
kubectl create deployment web --image=nginx:1.27 --replicas=2
kubectl rollout status deployment/web --timeout=60s     # waits: the clock runs until the pods are Ready
helm install shop tests/clients/charts/shop --wait --timeout 60s   # a chart, waited for the same way
curl -s -X POST localhost:$PORT/fakekube/v1/nodes/node-1/fail
sleep 2                                                 # nobody waits: no cluster time passes
kubectl get node node-1 --no-headers                    # still Ready
kubectl wait --for=condition=Ready=Unknown node/node-1 --timeout=60s   # 55 virtual seconds, at once
curl -s localhost:$PORT/fakekube/v1/clock               # where the clock is now
# docs:end
