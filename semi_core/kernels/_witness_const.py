"""Constants shared by the OGA witness's NumPy half (:mod:`semi_core.kernels.witness`) and its
compiled half (:mod:`semi_core.kernels._witness_nb`)."""

#: Renormalise the stored coefficients when the running scale falls below this.
_RESCALE_BELOW = 1e-150

#: Kernel values exp(-x) for x above this are set to 0 (< 1e-304): exp would otherwise return
#: denormals, whose arithmetic is ~10x slower (heavy-tailed outputs hit this constantly).
_XCUT = 700.0
