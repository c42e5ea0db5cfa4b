"""In-tree scheduler plugins, one module each (registered in fakekube/scheduler/registry.py)."""
