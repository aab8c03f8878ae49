r"""One home for the report's figures: ROC and trade-off curves with research defaults.

Every section of :mod:`semi_core.report` that draws an ROC or a trade-off curve goes through
this module, so that all figures share one style (:data:`STYLE`) and the same conventions:

* an empirical ROC is drawn on **log-log** axes (the low-FPR region is where membership
  inference matters; Carlini et al. 2022, SeMI seed App. H), the FPR axis floored at the
  sample's resolution :math:`1/N_0` (the smallest non-zero empirical FPR with :math:`N_0`
  non-members) and the TPR axis at :math:`1/N_1`; points below the floor are not invented
  (no clipping to an arbitrary :math:`10^{-4}`);
* the empirical curve is the step function of :func:`semi_core.audit.roc.roc_curve`
  (the ``step`` rule: TPR at :math:`f` is the best threshold test with empirical FPR
  :math:`\le f`);
* the band is the pointwise exact (Clopper-Pearson) interval of the TPR at the step-rule
  threshold of each FPR level, from :func:`semi_core.audit.roc.roc_metrics` with
  ``interval="binomial"`` (conditional on the threshold, as documented there);
* a chance line :math:`\mathrm{TPR}=\mathrm{FPR}`;
* a trade-off curve :math:`\beta=f(\alpha)` is drawn on linear axes with the no-privacy line
  :math:`\beta = 1-\alpha`.

matplotlib is imported lazily (Agg backend) by :func:`pyplot`.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np

from semi_core._validation import check_int, check_probability
from semi_core.audit.roc import roc_curve, roc_metrics

__all__ = ["STYLE", "DPI", "pyplot", "style", "roc_axes", "roc_points", "roc_band",
           "roc_band_from_points", "class_sizes", "plot_roc", "plot_empirical_roc", "plot_curve",
           "tradeoff_axes", "plot_tradeoff", "save", "legend_outside", "figure_legend",
           "LINESTYLES", "MARKERS"]

#: Resolution of saved PNG files.
DPI = 150

#: One style for every figure of the report (matplotlib rc parameters).
STYLE = {
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "legend.framealpha": 0.85,
    "legend.borderaxespad": 0.4,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "lines.linewidth": 1.4,
    "lines.markersize": 4.5,
    "axes.grid": True,
    "axes.grid.which": "major",
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "errorbar.capsize": 2.5,
    "savefig.dpi": DPI,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
    "figure.dpi": 100,
}

#: Line styles and markers cycled where curves would otherwise overlap (colour-blind safe).
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")

#: Label of the chance line.
CHANCE_LABEL = "chance (TPR = FPR)"


def pyplot():
    """``matplotlib.pyplot`` with the non-interactive Agg backend (imported on first use)."""
    # lazy: matplotlib is a heavy import, loaded only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib is a heavy import, loaded only when a figure is drawn
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def style():
    """Context in which figures are created and drawn with :data:`STYLE`; yields ``pyplot``.

    rc parameters are read when an artist is created, so a figure must be both created and
    drawn inside the context.
    """
    plt = pyplot()
    with plt.rc_context(STYLE):
        yield plt


def roc_axes(ax, *, n0: int, n1: int | None = None, chance: bool = True, title: str | None = None,
             tpr_floor: float | None = None, xlabel: str = "false-positive rate (FPR)",
             ylabel: str = "true-positive rate (TPR)"):
    r"""Log-log ROC axes floored at the sample's resolution, with a chance line and labels.

    Parameters
    ----------
    ax : matplotlib Axes
    n0 : int
        Number of non-members (:math:`N_0 \ge 2`): the FPR axis starts at :math:`1/N_0`.
    n1 : int, optional
        Number of members: the TPR axis starts at :math:`\min(1/N_1, 1/N_0)` (default ``n0``).
    tpr_floor : float, optional
        Start of the TPR axis instead (in ``[min(1/N1, 1/N0), 1)``; for powerful tests whose
        curves lie far above the resolution).
    chance : bool
        Draw the chance line :math:`\mathrm{TPR}=\mathrm{FPR}` (black, dotted).
    title, xlabel, ylabel : str

    Returns
    -------
    tuple of float
        ``(fpr_floor, tpr_floor)``.
    """
    n0 = check_int(n0, "n0", minimum=2)  # a log FPR axis from 1/n0 to 1
    n1 = n0 if n1 is None else check_int(n1, "n1", minimum=1)
    xf, yf = 1.0 / n0, min(1.0 / n1, 1.0 / n0)
    if tpr_floor is not None:
        if not yf <= float(tpr_floor) < 1.0:
            raise ValueError(f"tpr_floor must lie in [{yf:g}, 1), got {tpr_floor!r}")
        yf = float(tpr_floor)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xf, 1.0)
    ax.set_ylim(yf, 1.05)
    if chance:
        lo = min(xf, yf)
        ax.plot([lo, 1.0], [lo, 1.0], color="0.35", ls=":", lw=0.9, label=CHANCE_LABEL,
                zorder=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    return xf, yf


def roc_points(member_scores, nonmember_scores):
    """``(fpr, tpr)`` of :func:`semi_core.audit.roc.roc_curve` (the empirical operating points)."""
    fpr, tpr, _ = roc_curve(member_scores, nonmember_scores)
    return fpr, tpr


def roc_band(member_scores, nonmember_scores, *, confidence: float = 0.95, levels: int = 96):
    r"""Pointwise exact band of the TPR on a log grid of FPR levels from :math:`1/N_0` to 1.

    At each level :math:`f` the step-rule threshold is fixed and the TPR's two-sided
    Clopper-Pearson interval at ``confidence`` is taken (:func:`semi_core.audit.roc.roc_metrics`,
    ``interval="binomial"``; conditional on the threshold).

    Returns
    -------
    tuple of ndarray
        ``(fpr_levels, lower, upper)``.
    """
    n0 = np.asarray(nonmember_scores).size
    if n0 < 2:
        raise ValueError(f"need at least 2 non-member scores for a band, got {n0}")
    f = np.unique(np.concatenate([np.geomspace(1.0 / n0, 1.0, int(levels)), [1.0]]))
    met = roc_metrics(member_scores, nonmember_scores, fpr=f, rule="step", interval="binomial",
                      confidence=confidence)
    iv = np.asarray(met.tpr_at_fpr_interval, dtype=float)
    return f, iv[:, 0], iv[:, 1]


def roc_band_from_points(fpr, tpr, *, n1: int, confidence: float = 0.95, levels: int = 96,
                         floor: float):
    r"""The band of :func:`roc_band` from stored operating points (scores no longer at hand).

    The step-rule TPR at each level :math:`f` is the largest ``tpr`` with ``fpr`` :math:`\le f`
    (as in :func:`semi_core.audit.roc.tpr_at_fpr`); with :math:`k = N_1\,\mathrm{TPR}` members
    above that threshold the interval is the two-sided Clopper-Pearson interval of
    :mod:`semi_core.stats.binomial`, the one :func:`~semi_core.audit.roc.roc_metrics` uses.

    Returns
    -------
    tuple of ndarray
        ``(fpr_levels, lower, upper)``.
    """
    from semi_core.stats.binomial import clopper_pearson_lower, clopper_pearson_upper

    n1 = check_int(n1, "n1", minimum=1)
    confidence = check_probability(confidence, "confidence")
    x = np.asarray(fpr, dtype=float)
    y = np.asarray(tpr, dtype=float)
    order = np.lexsort((y, x))
    x, y = x[order], np.maximum.accumulate(y[order])
    f = np.unique(np.concatenate([np.geomspace(float(floor), 1.0, int(levels)), [1.0]]))
    t = y[np.searchsorted(x, f * (1 + 1e-12), side="right") - 1]
    k = np.rint(t * n1).astype(np.int64)
    if np.abs(k - t * n1).max() > 1e-6:
        raise ValueError(f"tpr is not a multiple of 1/n1 with n1 = {n1}")
    q = (1 - confidence) / 2
    return f, clopper_pearson_lower(k, n1, q), clopper_pearson_upper(k, n1, q)


def class_sizes(fpr, tpr, n_total: int) -> tuple[int, int]:
    r"""``(N0, N1)`` of stored ROC points of a game of ``n_total`` rounds: the split
    :math:`N_0+N_1=n` under which every FPR is a multiple of :math:`1/N_0` and every TPR of
    :math:`1/N_1` (raises if none or several fit)."""
    n = check_int(n_total, "n_total", minimum=2)
    x = np.asarray(fpr, dtype=float)
    y = np.asarray(tpr, dtype=float)
    fits = [n0 for n0 in range(1, n)
            if np.allclose(x * n0, np.rint(x * n0), atol=1e-6)
            and np.allclose(y * (n - n0), np.rint(y * (n - n0)), atol=1e-6)]
    if len(fits) != 1:
        raise ValueError(f"the ROC points fit {len(fits)} class splits of n_total = {n}, not one")
    return fits[0], n - fits[0]


def _step_on_log(fpr, tpr, xf):
    """Empirical points restricted to FPR >= the floor: the point at the floor carries the best
    TPR reached at FPR <= floor (step rule), so nothing is drawn outside the axes."""
    x = np.asarray(fpr, dtype=float)
    y = np.asarray(tpr, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"fpr and tpr must be 1-D of equal non-zero length, got {x.shape}, "
                         f"{y.shape}")
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    below = x <= xf * (1 + 1e-12)
    y0 = y[below].max() if below.any() else None
    x, y = x[~below], y[~below]
    if y0 is not None:
        x, y = np.concatenate([[xf], x]), np.concatenate([[y0], y])
    return x, y


def plot_roc(ax, fpr, tpr, *, label: str, band=None, floor: float | None = None, color=None,
             ls="-", lw=None, band_alpha: float = 0.18, **kw):
    """Draw an empirical ROC (steps) on ROC axes, with an optional band. On a log TPR axis the
    curve starts at its first FPR with TPR > 0.

    Parameters
    ----------
    ax : matplotlib Axes
        Prepared by :func:`roc_axes` (its left limit is the FPR floor unless ``floor`` is given).
    fpr, tpr : array_like
        Operating points, e.g. from :func:`roc_points`.
    label : str
    band : tuple of array_like, optional
        ``(fpr_levels, lower, upper)`` from :func:`roc_band`, shaded in the curve's colour.
    floor : float, optional
        FPR floor (default: the axes' left limit).

    Returns
    -------
    matplotlib Line2D
    """
    xf = float(ax.get_xlim()[0]) if floor is None else float(floor)
    x, y = _step_on_log(fpr, tpr, xf)
    y_bottom = float(ax.get_ylim()[0])
    if ax.get_yscale() == "log":
        # a log axis has no TPR = 0: the curve starts at its first FPR with TPR > 0 (a drop to
        # the axis's edge would read as a measured value there)
        pos = np.flatnonzero(y > 0)
        x, y = (x[pos[0]:], y[pos[0]:]) if pos.size else (x[:0], y[:0])
    line, = ax.plot(x, y, drawstyle="steps-post", label=label, color=color, ls=ls, lw=lw, **kw)
    if band is not None:
        bf, lo, hi = (np.asarray(v, dtype=float) for v in band)
        keep = bf >= xf * (1 - 1e-12)
        ax.fill_between(bf[keep], np.where(lo[keep] > 0, lo[keep], y_bottom * 1e-3), hi[keep],
                        step="post", color=line.get_color(), alpha=band_alpha, lw=0)
    return line


def plot_empirical_roc(ax, member_scores, nonmember_scores, *, label: str, band: bool = True,
                       confidence: float = 0.95, **kw):
    """:func:`plot_roc` of a score sample: curve from :func:`roc_points`, band from
    :func:`roc_band` (``band=False`` for none)."""
    fpr, tpr = roc_points(member_scores, nonmember_scores)
    b = roc_band(member_scores, nonmember_scores, confidence=confidence) if band else None
    return plot_roc(ax, fpr, tpr, label=label, band=b, **kw)


def plot_curve(ax, x, y, *, label: str | None = None, **kw):
    """A closed-form (theory) curve on the same axes: a smooth line, points with y <= 0 left out
    on a log axis rather than clipped."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if ax.get_yscale() == "log":
        y = np.where(y > 0, y, np.nan)
    return ax.plot(x, y, label=label, **kw)[0]


def tradeoff_axes(ax, *, title: str | None = None, no_privacy: bool = True):
    r"""Linear trade-off axes :math:`[0,1]^2` (type I error :math:`\alpha`, type II error
    :math:`\beta`) with the no-privacy line :math:`\beta=1-\alpha`."""
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    if no_privacy:
        ax.plot([0, 1], [1, 0], color="0.35", ls=":", lw=0.9, label="perfect privacy (β = 1 − α)")
    ax.set_xlabel("type I error α (FPR)")
    ax.set_ylabel("type II error β (1 − TPR)")
    if title:
        ax.set_title(title)


def plot_tradeoff(ax, alpha, beta, *, label: str, band=None, **kw):
    r"""Trade-off curve :math:`\beta = f(\alpha)` (e.g. ``1 - tpr`` against ``fpr``) with an
    optional ``(alpha_levels, lower, upper)`` band."""
    line, = ax.plot(alpha, beta, label=label, **kw)
    if band is not None:
        a, lo, hi = (np.asarray(v, dtype=float) for v in band)
        ax.fill_between(a, lo, hi, color=line.get_color(), alpha=0.18, lw=0)
    return line


def legend_outside(ax, *, ncol: int = 1, where: str = "right", **kw):
    """A legend beside (``"right"``) or below (``"below"``) the axes, never over the data."""
    if where == "right":
        return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=ncol, **kw)
    if where == "below":
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=ncol, **kw)
    raise ValueError(f"where must be 'right' or 'below', got {where!r}")


def figure_legend(fig, axes, *, ncol: int = 4, title: str | None = None):
    """One legend for the whole figure, centred below the axes (never over the data); entries
    of all ``axes`` merged by label, in order of appearance."""
    seen: dict = {}
    for ax in np.atleast_1d(axes).ravel():
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    return fig.legend(list(seen.values()), list(seen), loc="upper center", ncol=ncol,
                      bbox_to_anchor=(0.5, 0.0), frameon=False, title=title,
                      title_fontsize=STYLE["legend.fontsize"])


def save(fig, path) -> Path:
    """Write ``fig`` as a PNG at :data:`DPI` (tight bounding box) and close it; returns the path."""
    plt = pyplot()
    path = Path(path)
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.05)
    plt.close(fig)
    return path
