"""semi_core: sequential membership inference and privacy auditing.

The package reads as the flow of the work::

    symbolic  ->  stats  ->  kernels  ->  game / audit  ->  sgd (torch)  ->  cli, report

``symbolic`` derives the likelihood-ratio closed forms with SymPy, ``stats`` holds their
vectorised numeric twins, ``kernels`` the compiled hot loops, ``game`` the Crafter and
SeMI game (Alg. 1-2 of the SeMI seed), ``audit`` the epsilon lower bounds, ``sgd`` the
torch layer, and ``claims`` the machine-checked registry of the seeds' formulas.
"""

__version__ = "0.1.0"
