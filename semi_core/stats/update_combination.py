"""Loss-based, insertion-time-oblivious baselines on a model trajectory (seed §5.2, after
Jagielski et al. 2023, "combining_mi_updates" §4: Delta and Back-Front attacks).

Input: the target's losses :math:`\\ell_t = \\ell(\\theta_t; z^*)` at :math:`t = 0..T` (last axis).
Larger score means "member".

.. math::

   S_{\\Delta\\,\\mathrm{diff}} = \\max_{t}(\\ell_{t-1} - \\ell_t),\\quad
   S_{\\Delta\\,\\mathrm{ratio}} = \\max_{t}\\frac{\\ell_{t-1}+c}{\\ell_t+c},\\quad
   S_{\\mathrm{BF\\,diff}} = \\ell_0 - \\ell_T,\\quad
   S_{\\mathrm{BF\\,ratio}} = \\frac{\\ell_0+c}{\\ell_T+c}.

Notes on the sources: the seed (§5.2) uses :math:`c = 0`; Jagielski et al. define ScoreRatio as
:math:`(\\ell(f_1)+c)/(\\ell(f_0)+c)` (new over old, small means member); the seed's old-over-new
orientation is the same test with the sign of the threshold flipped. Ratios are formed in log
space (:math:`\\log(\\ell_{t-1}+c) - \\log(\\ell_t+c)`) and exponentiated, so the maximiser is the
same as for the ratio itself.

When :math:`\\theta_0` is the same in every game (a fixed pretrained model, as in the seed's
§5.2 protocol and App. H.2), :math:`\\ell_0` is a constant, both Back-Front scores are increasing
functions of :math:`-\\ell_T`, and Back-Front Diff and Back-Front Ratio are the *same* test
(identical ROC curves and bounds); the seed plots them as two attacks.

The second half of this module is the combiner / threshold / multi-update toolkit of
Jagielski et al. (``combining_mi_updates`` §4.1, §4.3) on *loss-like* per-snapshot scores
:math:`\\ell_i(x)` (low = member: cross-entropy, or the offline-LiRA loss of
:mod:`semi_core.attacks.updates`); everything returns *member scores* (higher = member):

.. math::

   S_{\\mathrm{diff}} = \\ell_{\\mathrm{before}} - \\ell_{\\mathrm{after}}
   = -\\mathrm{ScoreDiff},\\qquad
   S_{\\mathrm{ratio}} = \\log(\\ell_{\\mathrm{before}}+c) - \\log(\\ell_{\\mathrm{after}}+c)
   = -\\log\\mathrm{ScoreRatio}.

The seed thresholds ScoreDiff / ScoreRatio as "IN if :math:`v \\ge T`" (§4.1) while its own
scores are *small* for update points (the loss drops); the orientation here is the one that
makes an update point score high. The torch experiments that produce the snapshots live in
:mod:`semi_core.attacks.updates`; this module stays NumPy-only (the DP-SGD audit imports it).

Pure NumPy statistics of score sequences, so they live in ``stats/``: the DP-SGD audit
(:mod:`semi_core.sgd.audit`) and the update attacks (:mod:`semi_core.attacks.updates`) both use them.
"""

from __future__ import annotations

import numpy as np

from semi_core._validation import check_finite_array

__all__ = ["delta_diff", "delta_ratio", "back_front_diff", "back_front_ratio",
           "BASELINES", "baseline_scores", "COMBINERS", "combine", "pair_scores",
           "back_front_scores", "assign_top_n", "COLLISION_RULES", "batch_threshold", "rank_threshold",
           "decision_metrics", "entry_accuracy", "entry_baselines"]


def _losses(losses, *, positive: bool, offset: float = 0.0) -> np.ndarray:
    arr = check_finite_array(losses, "losses")
    if arr.ndim < 1 or arr.shape[-1] < 2:
        raise ValueError(f"losses must have a last axis of length T+1 >= 2, got shape {arr.shape}")
    if positive:
        if not (np.isfinite(offset) and offset >= 0):
            raise ValueError(f"offset must be finite and >= 0, got {offset}")
        if (arr + offset <= 0).any():
            raise ValueError("ratio attacks need losses + offset > 0 (got a non-positive value)")
    return arr


def delta_diff(losses) -> np.ndarray:
    """Delta Diff: :math:`\\max_t(\\ell_{t-1} - \\ell_t)` over ``t = 1..T``.

    Parameters
    ----------
    losses : array_like, shape (..., T+1)
        Loss trajectory of each point over the snapshots 0..T (finite).

    Returns
    -------
    ndarray, shape (...)
        The score, one per trajectory.
    """
    arr = _losses(losses, positive=False)
    return np.max(arr[..., :-1] - arr[..., 1:], axis=-1)


def delta_ratio(losses, *, offset: float = 0.0) -> np.ndarray:
    """Delta Ratio: :math:`\\max_t (\\ell_{t-1}+c)/(\\ell_t+c)` (``offset`` = c, seed: 0).

    Parameters
    ----------
    losses : array_like, shape (..., T+1)
        Loss trajectory of each point; ``losses + offset`` must be > 0.
    offset : float
        The constant c added to each loss.

    Returns
    -------
    ndarray, shape (...)
        The score, one per trajectory.
    """
    arr = np.log(_losses(losses, positive=True, offset=offset) + offset)
    return np.exp(np.max(arr[..., :-1] - arr[..., 1:], axis=-1))


def back_front_diff(losses) -> np.ndarray:
    """Back-Front Diff: :math:`\\ell_0 - \\ell_T`.

    Parameters
    ----------
    losses : array_like, shape (..., T+1)
        Loss trajectory of each point (finite).

    Returns
    -------
    ndarray, shape (...)
        The score, one per trajectory.
    """
    arr = _losses(losses, positive=False)
    return arr[..., 0] - arr[..., -1]


def back_front_ratio(losses, *, offset: float = 0.0) -> np.ndarray:
    """Back-Front Ratio: :math:`(\\ell_0+c)/(\\ell_T+c)` (``offset`` = c, seed: 0).

    Parameters
    ----------
    losses : array_like, shape (..., T+1)
        Loss trajectory of each point; ``losses + offset`` must be > 0.
    offset : float
        The constant c added to each loss.

    Returns
    -------
    ndarray, shape (...)
        The score, one per trajectory.
    """
    arr = np.log(_losses(losses, positive=True, offset=offset) + offset)
    return np.exp(arr[..., 0] - arr[..., -1])


BASELINES = {
    "delta_diff": delta_diff,
    "delta_ratio": delta_ratio,
    "back_front_diff": back_front_diff,
    "back_front_ratio": back_front_ratio,
}


def baseline_scores(losses) -> dict[str, np.ndarray]:
    """All four baseline scores for a loss trajectory array ``(..., T+1)``.

    Parameters
    ----------
    losses : array_like, shape (..., T+1)
        Loss trajectories, positive (the ratio scores take their log).

    Returns
    -------
    dict of str to ndarray
        Score of each baseline of ``BASELINES`` by name, each of shape ``(...)``.
    """
    return {name: fn(losses) for name, fn in BASELINES.items()}


# ---------------------------------------------------------------------------------------------
# Combiners, thresholds and multi-update attacks (Jagielski et al. §4.1, §4.3)
# ---------------------------------------------------------------------------------------------

COMBINERS = ("diff", "ratio")


def combine(before, after, combiner: str = "diff", *, c: float = 1e-3) -> np.ndarray:
    r"""Member score from the loss-like scores of one point before and after an update.

    .. math::

       S_{\mathrm{diff}} = \ell_{\mathrm{before}} - \ell_{\mathrm{after}},\qquad
       S_{\mathrm{ratio}} = \log\frac{\ell_{\mathrm{before}}+c}{\ell_{\mathrm{after}}+c}

    (Jagielski et al. §4.1: ScoreDiff :math:`=\ell(f_1)-\ell(f_0)` and ScoreRatio
    :math:`=(\ell(f_1)+c)/(\ell(f_0)+c)`, negated / log-negated so that higher = member).

    Parameters
    ----------
    before, after : array_like
        Loss-like scores (same shape); ``ratio`` needs ``score + c > 0``.
    combiner : {"diff", "ratio"}
    c : float
        Damping constant :math:`c > 0` of ScoreRatio.

    Returns
    -------
    ndarray
        Member scores (higher = member), shape of ``before``.
    """
    if combiner not in COMBINERS:
        raise ValueError(f"combiner must be one of {COMBINERS}, got {combiner!r}")
    b = check_finite_array(before, "before")
    a = check_finite_array(after, "after")
    if a.shape != b.shape:
        raise ValueError(f"before and after must have the same shape, got {b.shape} and {a.shape}")
    if combiner == "diff":
        return b - a
    if not (np.isfinite(c) and c > 0):
        raise ValueError(f"c must be finite and > 0, got {c}")
    if (a + c <= 0).any() or (b + c <= 0).any():
        raise ValueError("ratio combiner needs scores + c > 0 (got a non-positive value)")
    return np.log(b + c) - np.log(a + c)


def pair_scores(losses, combiner: str = "diff", *, c: float = 1e-3) -> np.ndarray:
    """Delta attack scores: :func:`combine` on each consecutive pair ``(f_{i-1}, f_i)``.

    ``losses`` is ``(..., k+1)`` (snapshots 0..k on the last axis); returns ``(..., k)``.

    Parameters
    ----------
    losses : array_like, shape (..., k+1)
        Loss-like scores at the snapshots 0..k.
    combiner : {"diff", "ratio"}
        How a pair is combined (:func:`combine`).
    c : float
        Damping constant of the ratio, > 0.

    Returns
    -------
    ndarray, shape (..., k)
        One member score per consecutive pair.
    """
    arr = _losses(losses, positive=False)
    return combine(arr[..., :-1], arr[..., 1:], combiner, c=c)


def back_front_scores(losses, combiner: str = "diff", *, c: float = 1e-3) -> np.ndarray:
    """Back-Front attack score: :func:`combine` on ``(f_0, f_k)``; ``losses`` ``(..., k+1)``.

    Parameters
    ----------
    losses : array_like, shape (..., k+1)
        Loss-like scores at the snapshots 0..k.
    combiner : {"diff", "ratio"}
        How the pair is combined (:func:`combine`).
    c : float
        Damping constant of the ratio, > 0.

    Returns
    -------
    ndarray, shape (...)
        The member score of ``(f_0, f_k)``.
    """
    arr = _losses(losses, positive=False)
    return combine(arr[..., 0], arr[..., -1], combiner, c=c)


#: Delta's rules for a point that more than one update would take (:func:`assign_top_n`).
COLLISION_RULES = ("exclusive", "argmax", "index-order")


def assign_top_n(scores, n_up: int, *, collisions: str = "exclusive") -> np.ndarray:
    r"""Delta attack decision: top-``n_up`` assignment to each update.

    Jagielski et al. §4.3 set "each threshold :math:`T_i` so that :math:`n_{up}` points are
    classified into each update index" and say nothing of a point above several thresholds (a
    *collision*). Two readings:

    * ``"exclusive"`` (default): every (point, update) pair is ranked by its pair score; going
      down the list, a point is assigned to update :math:`i` when it is still unassigned and
      update :math:`i` holds fewer than ``n_up`` points: exactly ``n_up`` points per update, a
      point in at most one (a colliding point's later updates are filled by the next points).
    * ``"argmax"``: the thresholds are set independently, :math:`T_i` the ``n_up``-th largest
      score of update :math:`i` (each update's top ``n_up``); a point above several
      thresholds enters the one where its pair score is largest. An update may then hold fewer
      than ``n_up`` points, and fewer than :math:`k\,n_{up}` points are called IN.
    * ``"index-order"``: the updates are filled one after the other, :math:`i = 1..k`; update
      :math:`i` takes the ``n_up`` highest-scoring points that updates :math:`1..i-1` have not
      taken. This is the authors' published loop (``delta_attack``), with one difference: that
      loop refills the places of already-taken points with the next-ranked points *without*
      checking whether those were taken too, so a point can enter two updates (140 of 300
      random cases with k in 2..5, n_up in 1..5); wherever it does not, the two assignments
      are identical.

    Ties are broken by point index, then update index (deterministic).

    Parameters
    ----------
    scores : array_like, shape (N, k)
        Member scores of each candidate for each update (higher = entered there).
    n_up : int
        Points per update (``k * n_up <= N``).

    collisions : {"exclusive", "argmax", "index-order"}
        The rule for a point that several updates would take (above).

    Returns
    -------
    ndarray of int, shape (N,)
        ``0`` = predicted OUT, ``i`` in ``1..k`` = predicted to have entered in update ``i``.
    """
    if collisions not in COLLISION_RULES:
        raise ValueError(f"collisions must be one of {COLLISION_RULES}, got {collisions!r}")
    s = check_finite_array(scores, "scores")
    if s.ndim != 2:
        raise ValueError(f"scores must be 2-D (points, updates), got shape {s.shape}")
    N, k = s.shape
    n_up = int(n_up) if isinstance(n_up, int | np.integer) else n_up
    if not isinstance(n_up, int) or n_up < 1:
        raise ValueError(f"n_up must be an integer >= 1, got {n_up!r}")
    if k * n_up > N:
        raise ValueError(f"k * n_up = {k * n_up} exceeds the number of points N = {N}")
    if collisions == "argmax":
        top = np.zeros((N, k), dtype=bool)
        for j in range(k):  # stable: ties by point index
            top[np.argsort(-s[:, j], kind="stable")[:n_up], j] = True
        masked = np.where(top, s, -np.inf)
        return np.where(top.any(axis=1), np.argmax(masked, axis=1) + 1, 0).astype(np.int64)
    if collisions == "index-order":
        out = np.zeros(N, dtype=np.int64)
        for j in range(k):  # stable sort: ties by point index
            ranked = np.argsort(-s[:, j], kind="stable")
            free = ranked[out[ranked] == 0]
            out[free[:n_up]] = j + 1
        return out
    order = np.lexsort((np.tile(np.arange(k), N), np.repeat(np.arange(N), k), -s.ravel()))
    out = np.zeros(N, dtype=np.int64)
    load = np.zeros(k, dtype=np.int64)
    left = k * n_up
    for flat in order:
        i, j = divmod(int(flat), k)
        if out[i] == 0 and load[j] < n_up:
            out[i] = j + 1
            load[j] += 1
            left -= 1
            if left == 0:
                break
    return out


def batch_threshold(pool_scores, fraction_in: float = 0.5) -> float:
    r"""Batch (and Transfer) threshold: the :math:`1-q` quantile of an unlabeled pool.

    ``fraction_in`` :math:`q` is the fraction of the pool called IN: 0.5 (the median, the seed's
    accuracy setting) or 0.1 (its precision setting: the "10th percentile" of the loss-like
    combined score is the 90th percentile of the member score). The decision is
    ``score > threshold``. For Transfer, pass the attacker's own shadow pool.

    Parameters
    ----------
    pool_scores : array_like
        Member scores of the unlabeled pool (finite, non-empty; flattened).
    fraction_in : float
        Fraction q of the pool called IN, in (0, 1).

    Returns
    -------
    float
        The threshold (a pool score: the "lower" quantile).
    """
    s = check_finite_array(pool_scores, "pool_scores").ravel()
    if s.size == 0:
        raise ValueError("pool_scores is empty")
    if not (0.0 < fraction_in < 1.0):
        raise ValueError(f"fraction_in must be in (0, 1), got {fraction_in}")
    return float(np.quantile(s, 1.0 - fraction_in, method="lower"))


def rank_threshold(out_scores, fpr: float = 0.1) -> float:
    r"""Rank threshold: the :math:`1-\mathrm{fpr}` quantile of known-OUT member scores (seed §4.1:
    "top 10% of the test data"), so about ``fpr`` of OUT points are called IN.

    Parameters
    ----------
    out_scores : array_like
        Member scores of known non-members (finite, non-empty; flattened).
    fpr : float
        Target false-positive rate, in (0, 1).

    Returns
    -------
    float
        The threshold (one of ``out_scores``).
    """
    s = check_finite_array(out_scores, "out_scores").ravel()
    if s.size == 0:
        raise ValueError("out_scores is empty")
    if not (0.0 < fpr < 1.0):
        raise ValueError(f"fpr must be in (0, 1), got {fpr}")
    return float(np.quantile(s, 1.0 - fpr, method="lower"))


def decision_metrics(member_scores, nonmember_scores, threshold: float) -> dict[str, float | None]:
    """Accuracy (balanced classes), precision, recall (= TPR) and FPR of ``score > threshold``.

    Precision is undefined when nobody is called IN (possible with a transferred threshold):
    it is then ``None`` (JSON ``null``), never a made-up number; aggregations skip it and say
    how many trials defined it.

    Parameters
    ----------
    member_scores : array_like
        Scores of the members (finite, non-empty).
    nonmember_scores : array_like
        Scores of the non-members (finite, non-empty).
    threshold : float
        A point is called IN when its score is > ``threshold``.

    Returns
    -------
    dict
        ``accuracy``, ``precision`` (None when nobody is called IN), ``recall``, ``fpr`` and
        ``threshold``.
    """
    m = check_finite_array(member_scores, "member_scores").ravel()
    n = check_finite_array(nonmember_scores, "nonmember_scores").ravel()
    if m.size == 0 or n.size == 0:
        raise ValueError("member_scores and nonmember_scores must both be non-empty")
    tpr = float(np.mean(m > threshold))
    fpr = float(np.mean(n > threshold))
    tp, fp = float(np.sum(m > threshold)), float(np.sum(n > threshold))
    prec = tp / (tp + fp) if tp + fp > 0 else None
    return {"accuracy": 0.5 * (tpr + 1.0 - fpr), "precision": prec, "recall": tpr, "fpr": fpr,
            "threshold": float(threshold)}


def entry_accuracy(assigned, true_index) -> float:
    r"""Entry-inference accuracy: fraction of update points whose predicted entry index is right.

    ``assigned`` (N,) from :func:`assign_top_n`; ``true_index`` (N,) the update each point
    entered (``0`` for test points, which are ignored). A random guesser (IN with probability
    1/2, a uniform index) scores :math:`1/(2k)`; a membership attack of TPR :math:`p` plus a
    uniform index (the seed's Generic baseline) scores :math:`p/k`.

    Parameters
    ----------
    assigned : array_like of int, shape (N,)
        Predicted entry index of each point (0 = not an update point).
    true_index : array_like of int, shape (N,)
        The update each point entered (0 for test points), at least one > 0.

    Returns
    -------
    float
        Fraction in [0, 1] of update points assigned their true index.
    """
    a = np.asarray(assigned).ravel()
    t = np.asarray(true_index).ravel()
    if a.shape != t.shape:
        raise ValueError(f"assigned and true_index must have the same shape, got {a.shape}, "
                         f"{t.shape}")
    upd = t > 0
    if not upd.any():
        raise ValueError("true_index has no update point (all zeros)")
    return float(np.mean(a[upd] == t[upd]))


def entry_baselines(k: int, membership_tpr: float) -> dict[str, float]:
    """The seed's entry baselines (§3.3, §5.3): Random :math:`1/(2k)`, Generic :math:`p/k`.

    Parameters
    ----------
    k : int
        Number of updates, >= 1.
    membership_tpr : float
        TPR of the membership attack behind the Generic baseline, in [0, 1].

    Returns
    -------
    dict of str to float
        ``random`` and ``generic`` baseline accuracies.
    """
    if not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    if not (0.0 <= membership_tpr <= 1.0):
        raise ValueError(f"membership_tpr must be in [0, 1], got {membership_tpr}")
    return {"random": 1.0 / (2 * k), "generic": float(membership_tpr) / k}
