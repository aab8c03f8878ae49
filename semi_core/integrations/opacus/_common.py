"""Names shared by the modules of :mod:`semi_core.integrations.opacus`: the allowed canaries,
samplers and engines, the optional-Opacus import guard and the torch thread setting.
"""

from __future__ import annotations

from contextlib import contextmanager

from semi_core._extras import extra_needed, require

require("torch", "semi_core.integrations.opacus")  # names the extra to install
import torch  # noqa: E402

CANARIES = ("dirac", "gradient-mahalanobis", "input")
SAMPLERS = ("fixed", "poisson")
ENGINES = ("opacus", "batched")


def _opacus():
    with extra_needed("audit_opacus"):  # optional extra
        import opacus
    return opacus


@contextmanager
def _torch_threads(k: int):
    """Torch's intra-op threads set to ``k`` for the block, then restored. The audit's tensors
    are small (``d`` in the hundreds, batches of tens of rows): extra intra-op threads only
    spin, which costs several times the CPU on a loaded machine (7x measured for the tour
    line's runs). The result does not depend on it: the element-wise kernels do not split work
    below torch's grain size, and the batched products compute each matrix on its own (the
    tour configuration gives bit-identical scores and bounds with 1 and 2 threads)."""
    old = torch.get_num_threads()
    torch.set_num_threads(k)
    try:
        yield
    finally:
        torch.set_num_threads(old)
