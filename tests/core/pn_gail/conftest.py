"""One torch thread for these small networks (several threads only spin on a busy machine)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
