# Types of the package ahbm (tools/python/ahbm_module.cpp; docs/python.md). The test
# PythonModule.MatchesTheCli holds every function's argument names, kinds and defaults here to
# the module's own signatures, so the two cannot drift.
import os
from typing import Any, NotRequired, Sequence, TypedDict

import numpy as np
from numpy.typing import NDArray

__version__: str
commit: str

# A scenario, workload or hardware config: its JSON as a dict, or a path to the file.
Config = dict[str, Any] | str | os.PathLike[str]

class RunResult(TypedDict):
    summary: dict[str, Any]  # summary.json
    o: list[NDArray[np.float32]]  # O of the fan-out step, one (rows x head_dim) array per job
    # latency.csv's columns in its row order: start_ns, end_ns (float64 arrays, ns), component,
    # activity, phase, agent (list[str]), rows, bytes (int64 arrays); {} at trace="summary".
    spans: dict[str, Any]

class ServeResult(TypedDict):
    summary: dict[str, Any]  # the serve summary.json
    # requests.csv's columns: int64 arrays (integer columns), float64 arrays, list[str] (template).
    requests: dict[str, Any]
    vcd: NotRequired[str]  # with vcd=True: the text of waves.vcd

class InputError(ValueError):
    exit_code: int

class NumericError(ArithmeticError):
    exit_code: int

class StallError(RuntimeError):
    exit_code: int

class OutputError(OSError):
    exit_code: int

class InternalError(RuntimeError):
    exit_code: int

class Simulator:
    def __init__(self, hw: Config | None = None, set: Sequence[str] = [], noc: str | None = None) -> None: ...
    def run(
        self,
        scenario: Config,
        *,
        policy: str = "A",
        seed: int | None = None,
        values: bool = True,
        vcd: bool = False,
        watchdog_ns: float = 1e6,
        out: str | None = None,
        launch: str = "unified",
        compare_unbatched: bool = False,
        trace: str = "auto",
        trace_gz: bool = False,
        gemm_mapping: str = "w_stationary",
        power_window_ns: int | None = None,
        objective: str = "time",
    ) -> RunResult: ...
    def serve(
        self,
        workload: Config,
        *,
        scheduler: str | None = None,
        seed: int | None = None,
        rate_per_s: float | None = None,
        out: str | None = None,
        vcd: bool = False,
        gemm_mapping: str = "w_stationary",
        stop_at_s: float | None = None,
    ) -> ServeResult: ...
    @property
    def elaborations(self) -> int: ...

def run(
    scenario: Config,
    hw: Config | None = None,
    *,
    set: Sequence[str] = [],
    noc: str | None = None,
    policy: str = "A",
    seed: int | None = None,
    values: bool = True,
    vcd: bool = False,
    watchdog_ns: float = 1e6,
    out: str | None = None,
    launch: str = "unified",
    compare_unbatched: bool = False,
    trace: str = "auto",
    trace_gz: bool = False,
    gemm_mapping: str = "w_stationary",
    power_window_ns: int | None = None,
    objective: str = "time",
) -> RunResult: ...
def serve(
    workload: Config,
    hw: Config | None = None,
    *,
    set: Sequence[str] = [],
    noc: str | None = None,
    scheduler: str | None = None,
    seed: int | None = None,
    rate_per_s: float | None = None,
    out: str | None = None,
    vcd: bool = False,
    gemm_mapping: str = "w_stationary",
    stop_at_s: float | None = None,
) -> ServeResult: ...
def cli(args: Sequence[str]) -> tuple[int, str, str]: ...
def noc_bench(args: Sequence[str]) -> dict[str, Any]: ...
def run_points(jobs: Sequence[dict[str, Any]]) -> list[tuple[int, str]]: ...
