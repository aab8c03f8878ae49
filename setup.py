"""Build the optional Cython kernels in ``semi_core_ext``.

The pure-Python package works without them: ``semi_core.kernels`` falls back to the
NumPy twins when the extension is missing or ``SEMI_CORE_FORCE_TWIN=1`` is set.
"""

import os
import sys

import numpy as np
from setuptools import Extension, setup

from Cython.Build import cythonize  # a build requirement (pyproject.toml)

if sys.platform == "darwin":
    omp_compile, omp_link = ["-Xpreprocessor", "-fopenmp"], ["-lomp"]
elif sys.platform == "win32":
    omp_compile, omp_link = ["/openmp"], []
else:
    omp_compile, omp_link = ["-fopenmp"], ["-fopenmp"]

if os.environ.get("SEMI_CORE_NO_OPENMP"):
    omp_compile, omp_link = [], []

extensions = [
    Extension(
        "semi_core_ext._quadform",
        ["semi_core_ext/_quadform.pyx"],
        include_dirs=[np.get_include()],
        extra_compile_args=["-O3", *omp_compile],
        extra_link_args=omp_link,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ),
]

setup(
    ext_modules=cythonize(extensions, language_level=3),
)
