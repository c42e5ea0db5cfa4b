# README.md's "Try it": test_howto_demo.py runs these lines (the kubeconfig path its own).
# docs:begin README.md#try-demo-serve
fakekube serve --demo --kubeconfig /tmp/fakekube-demo.kubeconfig
# docs:end

# docs:begin README.md#try-demo-kubectl
kubectl --kubeconfig /tmp/fakekube-demo.kubeconfig get deploy -A -l app.kubernetes.io/part-of
# docs:end
