"""ahbm-sim in-process: the simulator as a Python package (docs/python.md).

The extension module ahbm._ahbm (tools/python/ahbm_module.cpp) holds the code; this package
re-exports it, and __init__.pyi gives its types (py.typed: for mypy and IDEs). help(ahbm.run)
lists every argument with its unit and default.
"""
from . import _ahbm
from ._ahbm import (
    InputError,
    InternalError,
    NumericError,
    OutputError,
    Simulator,
    StallError,
    __version__,
    cli,
    commit,
    noc_bench,
    run,
    run_points,
    serve,
)

__all__ = [
    "InputError", "InternalError", "NumericError", "OutputError", "Simulator", "StallError",
    "cli", "commit", "noc_bench", "run", "run_points", "serve",
]

# Named ahbm.X (their public place), not ahbm._ahbm.X, in reprs and tracebacks.
for _name in __all__:
    try:
        setattr(getattr(_ahbm, _name), "__module__", __name__)
    except (AttributeError, TypeError):  # commit (a str) has no __module__ to set
        pass
del _name
