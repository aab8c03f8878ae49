"""What the OGA witness's kernels share: its constants and the scalar part of one OGA step, used
by the NumPy half (:mod:`semi_core.kernels.witness`), the compiled half
(:mod:`semi_core.kernels._witness_nb`, which compiles :func:`oga_step` inline) and the RFF
witness (:mod:`semi_core.kernels.rff_witness`, both kernels)."""

import math

#: Renormalise the stored coefficients when the running scale falls below this.
_RESCALE_BELOW = 1e-150

#: Kernel values exp(-x) for x above this are set to 0 (< 1e-304): exp would otherwise return
#: denormals, whose arithmetic is ~10x slower (heavy-tailed outputs hit this constantly).
_XCUT = 700.0


def oga_step(M: float, v: float, k: float, fn2: float) -> tuple[float, float, float]:
    r"""The scalar part of one OGA step of the witness (valid while :math:`M_t > 0`).

    With the witness value :math:`v_t = f_t(\Delta_t)`, the new squared norm
    :math:`k_t = \|\Delta_t\|^2`, :math:`M_t = \sum_{j\le t} k_j` and
    :math:`\|f_t\|^2`, the gradient step :math:`g_t = f_t + 2\Delta_t/\sqrt{M_t}` and its
    projection on the unit ball (seed ``sequential_dp_auditing``, Alg. 2, OGA with step
    :math:`1/\sqrt{M_t}` on the payoff :math:`2 f(\Delta)`):

    .. math::

        \|g_t\|^2 = \|f_t\|^2 + 4v_t/\sqrt{M_t} + 4k_t/M_t,\qquad
        \gamma_t = \min\{1, 1/\|g_t\|\},\qquad
        \|f_{t+1}\|^2 = \gamma_t^2\|g_t\|^2 .

    :math:`\|g_t\|^2` is set to 0 if rounding makes it negative (it is :math:`\ge 0`
    exactly).

    Parameters
    ----------
    M : float
        :math:`M_t > 0`.
    v : float
        :math:`v_t`.
    k : float
        :math:`k_t \ge 0`.
    fn2 : float
        :math:`\|f_t\|^2`.

    Returns
    -------
    step : float
        :math:`2/\sqrt{M_t}`, the new pair's weight before scaling.
    gam : float
        :math:`\gamma_t`.
    fn2 : float
        :math:`\|f_{t+1}\|^2`.
    """
    rs = math.sqrt(M)
    g2 = fn2 + 4.0 * v / rs + 4.0 * k / M
    if g2 < 0.0:  # rounding only: ||g||^2 >= 0 exactly
        g2 = 0.0
    gam = 1.0
    if g2 > 1.0:
        gam = 1.0 / math.sqrt(g2)
    return 2.0 / rs, gam, gam * gam * g2
