"""Simulates a bare machine for tests/gpu/test_gpu_check.py: with this folder on PYTHONPATH,
importing any top-level package named in ICLR25_BLOCK_IMPORTS (comma-separated) fails as
if it were not installed."""

import importlib.abc
import os
import sys

_BLOCKED = {name for name in os.environ.get("ICLR25_BLOCK_IMPORTS", "").split(",") if name}


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return None


sys.meta_path.insert(0, _Blocker())
