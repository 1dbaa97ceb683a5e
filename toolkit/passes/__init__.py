"""Pass infrastructure: write, register, compose and run IR passes.

* :class:`ModulePass` / :class:`PatternPass` + :func:`pattern` — write a pass.
* :func:`register_pass` — make it usable by name in pipelines.
* :func:`parse_pipeline`, :func:`run_pipeline`, :class:`Pipeline` — run
  MLIR-syntax pipelines mixing Python and jaxlib's C++ passes.
* :func:`list_passes` — every known pass, Python and C++.
* :func:`set_jit_pipeline` / :func:`extend_jit_pipeline` — what ``jit`` runs.

See ``docs/passes.md`` ("Writing your first pass").
"""

from toolkit.passes.default_pipeline import extend_jit_pipeline, jit_pipeline, set_jit_pipeline
from toolkit.passes.pass_base import (
    ModulePass,
    Pass,
    PassFailure,
    PassOptionError,
    Pattern,
    PatternPass,
    pattern,
    record_statistic,
)
from toolkit.passes.pipeline import (
    NestedPipeline,
    PassElement,
    Pipeline,
    PipelineError,
    PipelineReport,
    parse_pipeline,
    run_pipeline,
)
from toolkit.passes.registry import (
    PassInfo,
    UnknownPassError,
    list_passes,
    load_pass_plugin,
    register_lazy_pass,
    register_pass,
)

__all__ = [
    "ModulePass", "NestedPipeline", "Pass", "PassElement", "PassFailure", "PassInfo",
    "PassOptionError", "Pattern", "PatternPass", "Pipeline", "PipelineError", "PipelineReport",
    "UnknownPassError", "extend_jit_pipeline", "jit_pipeline", "list_passes", "load_pass_plugin",
    "parse_pipeline", "pattern", "record_statistic", "register_lazy_pass", "register_pass",
    "run_pipeline", "set_jit_pipeline",
]
