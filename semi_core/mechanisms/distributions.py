r"""Data distributions with a known mean and covariance, sampled exactly.

The SeMI seed (§3, App. B-C) analyses Gaussian data :math:`\mathcal N(\mu_t,\Sigma_t)`. Users
also want to know how the (then misspecified) Gaussian likelihood-ratio tests behave on data
that is *not* Gaussian but has the same first two moments. Every family here is described by a
**standardised** scalar law :math:`E` (mean 0, variance 1), and a d-dimensional datum is

.. math::

    x = \mu + L\,e, \qquad e = (e_1,\dots,e_d),\ e_i \overset{iid}{\sim} E,
    \qquad L L^\top = \Sigma \ (\text{lower Cholesky}),

so that :math:`\mathbb E x = \mu` and :math:`\operatorname{Cov} x = \Sigma` exactly. For
:math:`d = 1` this is the location-scale family of :math:`E`; for :math:`d > 1` it is the
*linearly mixed independent-components* model (coordinates are independent only when
:math:`\Sigma` is diagonal). This is the model we document and simulate for :math:`d>1`;
e.g. "product Bernoulli(p)" is exactly i.i.d. Bernoulli(p) coordinates when
:math:`\mu = p\mathbf 1` and :math:`\Sigma = p(1-p) I`.

Standardised families (code used by the compiled kernels in brackets):

===============  ==================================================================  =================
family           standardised variate :math:`e`                                      parameter
===============  ==================================================================  =================
gaussian [0]     :math:`Z\sim\mathcal N(0,1)`                                        none
laplace [1]      :math:`\mathrm{Laplace}(0, b=1/\sqrt2)` (variance :math:`2b^2=1`)   none
student-t [2]    :math:`t_\nu\sqrt{(\nu-2)/\nu}`                                     :math:`\nu>2`
bernoulli [3]    :math:`(\mathbb 1\{U<p\}-p)/\sqrt{p(1-p)}`                          :math:`p\in(0,1)`
exponential [4]  :math:`\mathrm{Exp}(1)-1` (centred exponential)                     none
===============  ==================================================================  =================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from semi_core._validation import check_covariance, check_finite_array, check_probability

__all__ = [
    "DataFamily",
    "DataDistribution",
    "FAMILY_CODES",
    "parse_data",
    "gaussian",
    "laplace",
    "student_t",
    "bernoulli",
    "exponential",
]

FAMILY_CODES = {"gaussian": 0, "laplace": 1, "student-t": 2, "bernoulli": 3, "exponential": 4}
_ALIASES = {"normal": "gaussian", "t": "student-t", "student_t": "student-t",
            "studentt": "student-t", "exp": "exponential", "bern": "bernoulli"}
_ALLOWED = "gaussian | laplace | student-t:NU (NU > 2) | bernoulli:P (0 < P < 1) | exponential"


@dataclass(frozen=True)
class DataFamily:
    """A standardised scalar law (mean 0, variance 1) used coordinate-wise.

    Attributes
    ----------
    name : str
        One of ``gaussian, laplace, student-t, bernoulli, exponential``.
    param : float
        ``nu`` for student-t, ``p`` for bernoulli, ``nan`` otherwise.
    """

    name: str
    param: float = float("nan")

    def __post_init__(self):
        if self.name not in FAMILY_CODES:
            raise ValueError(f"data must be one of {_ALLOWED}; got unknown distribution "
                             f"{self.name!r}")
        if self.name == "student-t":
            nu = float(self.param)
            if not (math.isfinite(nu) and nu > 2):
                raise ValueError(f"student-t degrees of freedom nu must be > 2 (finite variance,"
                                 f" so the covariance exists), got {self.param}")
        elif self.name == "bernoulli":
            check_probability(self.param, "bernoulli p")

    @property
    def code(self) -> int:
        """Integer code used by the compiled kernels."""
        return FAMILY_CODES[self.name]

    @property
    def is_gaussian(self) -> bool:
        """Whether the Gaussian likelihood ratio is correctly specified for this family."""
        return self.name == "gaussian"

    @property
    def spec(self) -> str:
        """The string :func:`parse_data` accepts for this family."""
        if self.name == "student-t":
            return f"student-t:{self.param:g}"
        if self.name == "bernoulli":
            return f"bernoulli:{self.param:g}"
        return self.name

    @property
    def excess_kurtosis(self) -> float:
        """Excess kurtosis of the standardised law (0 for the Gaussian)."""
        if self.name == "gaussian":
            return 0.0
        if self.name == "laplace":
            return 3.0
        if self.name == "student-t":
            return 6.0 / (self.param - 4.0) if self.param > 4 else float("inf")
        if self.name == "bernoulli":
            p = self.param
            return (1.0 - 6.0 * p * (1.0 - p)) / (p * (1.0 - p))
        return 6.0  # exponential

    def standardized(self, rng: np.random.Generator, size) -> np.ndarray:
        """Draw standardised variates (mean 0, variance 1) with ``rng``.

        The draws consume ``rng`` exactly as the compiled kernels do (same Generator method,
        same order), which is what makes the NumPy twin equal to the kernel.

        Parameters
        ----------
        rng : numpy.random.Generator
            The generator the draws consume.
        size : int or tuple of int
            Shape of the draw.

        Returns
        -------
        ndarray of float
            Standardised draws of shape ``size``.
        """
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        if self.name == "gaussian":
            return rng.standard_normal(size)
        if self.name == "laplace":
            return rng.laplace(0.0, _LAPLACE_B, size)
        if self.name == "student-t":
            return rng.standard_t(self.param, size) * math.sqrt((self.param - 2.0) / self.param)
        if self.name == "bernoulli":
            p = self.param
            return ((rng.random(size) < p).astype(np.float64) - p) / math.sqrt(p * (1.0 - p))
        return rng.standard_exponential(size) - 1.0


_LAPLACE_B = 1.0 / math.sqrt(2.0)


def gaussian() -> DataFamily:
    """Standard normal coordinates.

    Returns
    -------
    DataFamily
        The Gaussian family.
    """
    return DataFamily("gaussian")


def laplace() -> DataFamily:
    """Laplace coordinates with unit variance (scale :math:`1/\\sqrt2`).

    Returns
    -------
    DataFamily
        The Laplace family.
    """
    return DataFamily("laplace")


def student_t(nu: float) -> DataFamily:
    """Student-t(nu) coordinates scaled to unit variance; requires ``nu > 2``.

    Parameters
    ----------
    nu : float
        Degrees of freedom, > 2 (finite variance).

    Returns
    -------
    DataFamily
        The Student-t family.
    """
    if isinstance(nu, bool) or not isinstance(nu, int | float | np.integer | np.floating):
        raise TypeError(f"student-t nu must be a real number, got {type(nu).__name__}")
    return DataFamily("student-t", float(nu))


def bernoulli(p: float) -> DataFamily:
    """Standardised Bernoulli(p) coordinates; requires ``0 < p < 1``.

    Parameters
    ----------
    p : float
        Success probability, in (0, 1).

    Returns
    -------
    DataFamily
        The Bernoulli family.
    """
    return DataFamily("bernoulli", check_probability(p, "bernoulli p"))


def exponential() -> DataFamily:
    """Centred Exp(1) coordinates.

    Returns
    -------
    DataFamily
        The exponential family.
    """
    return DataFamily("exponential")


def parse_data(spec) -> DataFamily:
    """Parse ``gaussian``, ``laplace``, ``student-t:5``, ``bernoulli:0.3`` or ``exponential``.

    Parameters
    ----------
    spec : str or DataFamily

    Returns
    -------
    DataFamily

    Raises
    ------
    ValueError
        Unknown family, missing/extra parameter, Bernoulli ``p`` outside (0, 1) or Student-t
        ``nu <= 2`` (the covariance does not exist).
    TypeError
        ``spec`` is neither a string nor a :class:`DataFamily`.
    """
    if isinstance(spec, DataFamily):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"data must be a string ({_ALLOWED}) or DataFamily, "
                        f"got {type(spec).__name__}")
    name, _, arg = spec.strip().lower().partition(":")
    name = _ALIASES.get(name.strip(), name.strip())
    if name not in FAMILY_CODES:
        raise ValueError(f"data must be one of {_ALLOWED}; got unknown distribution {spec!r}")
    needs = name in ("student-t", "bernoulli")
    if needs and not arg.strip():
        raise ValueError(f"data {name!r} needs a parameter, e.g. "
                         f"{'student-t:5' if name == 'student-t' else 'bernoulli:0.3'}")
    if not needs and arg.strip():
        raise ValueError(f"data {name!r} takes no parameter, got {spec!r}")
    if not needs:
        return DataFamily(name)
    try:
        value = float(arg)
    except ValueError:
        raise ValueError(f"data parameter of {name!r} must be a number, got {arg!r}") from None
    return DataFamily(name, value)


class DataDistribution:
    r"""A d-dimensional data law :math:`x=\mu+Le` with known mean and covariance.

    Parameters
    ----------
    family : str or DataFamily
        Standardised coordinate law (see the module docstring).
    mean : array_like, shape (d,) or scalar
    cov : array_like, shape (d, d) or scalar variance

    Notes
    -----
    ``mean`` and ``cov`` are what the (misspecified, for non-Gaussian families) Gaussian
    likelihood ratio of the SeMI seed (Thm 3.1, App. B) uses.
    """

    def __init__(self, family, mean=0.0, cov=1.0):
        self.family = parse_data(family)
        mean = check_finite_array(mean, "mean", ndim=(0, 1))
        cov = check_finite_array(cov, "cov", ndim=(0, 2))
        d = mean.size if mean.ndim == 1 else (cov.shape[0] if cov.ndim == 2 else 1)
        self.mean = np.broadcast_to(mean, (d,)).astype(np.float64)
        if cov.ndim == 0:
            if cov <= 0:
                raise ValueError(f"cov (a variance) must be > 0, got {float(cov)}")
            cov = float(cov) * np.eye(d)
        self.cov, self.chol = check_covariance(cov, "cov", d=d)

    @property
    def d(self) -> int:
        """Dimension."""
        return self.mean.size

    def sample(self, rng: np.random.Generator, size: int | tuple = ()) -> np.ndarray:
        """Draw ``size`` data points, shape ``(*size, d)``.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of randomness.
        size : int or tuple of int
            Leading shape of the draw (``()`` = one point).

        Returns
        -------
        ndarray
            Data points, shape ``(*size, d)``, with the distribution's mean and covariance.
        """
        size = (size,) if isinstance(size, int | np.integer) else tuple(size)
        e = self.family.standardized(rng, size + (self.d,))
        return self.mean + e @ self.chol.T

    def __repr__(self) -> str:
        return f"DataDistribution({self.family.spec!r}, d={self.d})"
