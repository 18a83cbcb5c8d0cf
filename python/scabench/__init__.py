"""scabench: SCA component pipelines over omniORB, measured.

As a library (docs/api.md):

    import scabench
    wf = scabench.load("exp6")            # a spec by name or path, or a SAD; or scabench.Waveform(...) in code
    result = wf.run(packets=100)          # a RunResult; wf.run(runs=5) a Benchmark; wf.sweep({...}) a SweepResult
    print(scabench.text(result))          # the table `scabench run` prints
    rows = result.rows()                  # a row per component, for pandas.DataFrame(rows)

`import scabench` loads nothing else: each name below is imported from its
module when first used, so the command line and the component programs,
which import this package first, start as fast as before."""

import importlib
from typing import TYPE_CHECKING

# The one place the version is set (python/pyproject.toml reads it from here).
__version__ = "0.1.0"

# The module each name of __all__ comes from.
_EXPORTS = {
    "Waveform": "scabench.api",
    "Component": "scabench.api",
    "Port": "scabench.api",
    "load": "scabench.api",
    "kinds": "scabench.api",
    "text": "scabench.api",
    "watch": "scabench.api",
    "LiveSample": "scabench.run.live",
    "policy_schema": "scabench.model.catalog",
    "Spec": "scabench.model.spec",
    "RunResult": "scabench.run.results",
    "StageResult": "scabench.run.results",
    "ProducerResult": "scabench.run.results",
    "ConnectionResult": "scabench.run.results",
    "Latency": "scabench.run.results",
    "CpuUsage": "scabench.run.results",
    "Benchmark": "scabench.measure.repeat",
    "Summary": "scabench.measure.stats",
    "SweepResult": "scabench.measure.sweep",
    "SweepPoint": "scabench.measure.sweep",
    "Answer": "scabench.measure.sweep",
    "ScabenchError": "scabench.errors",
    "SpecError": "scabench.errors",
    "RunError": "scabench.errors",
    "read_recording": "scabench.recording",
    "write_recording": "scabench.recording",
    "producer_signal": "scabench.signals",
}
__all__ = [
    "__version__",
    "Waveform",
    "Component",
    "Port",
    "load",
    "kinds",
    "text",
    "watch",
    "LiveSample",
    "policy_schema",
    "Spec",
    "RunResult",
    "StageResult",
    "ProducerResult",
    "ConnectionResult",
    "Latency",
    "CpuUsage",
    "Benchmark",
    "Summary",
    "SweepResult",
    "SweepPoint",
    "Answer",
    "ScabenchError",
    "SpecError",
    "RunError",
    "read_recording",
    "write_recording",
    "producer_signal",
]

if TYPE_CHECKING:  # for type checkers and editors; at run time, __getattr__ below
    from scabench.api import Component, Port, Waveform, kinds, load, text
    from scabench.errors import RunError, ScabenchError, SpecError
    from scabench.measure.repeat import Benchmark
    from scabench.measure.stats import Summary
    from scabench.measure.sweep import Answer, SweepPoint, SweepResult
    from scabench.model.catalog import policy_schema
    from scabench.model.spec import Spec
    from scabench.recording import read_recording, write_recording
    from scabench.run.results import ConnectionResult, CpuUsage, Latency, ProducerResult, RunResult, StageResult
    from scabench.signals import producer_signal


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'scabench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
