# docs/config.md's command lines: test_howto_config.py runs each line, in a directory holding
# the page's full example as cluster.yaml, until `fakekube serve` is up.
# docs:begin docs/config.md#serve
fakekube serve --config cluster.yaml              # flags given on the command line win over the file
fakekube serve --config cluster.yaml --seed 3 --nodes 5
# docs:end
