"""Pass infrastructure: write, register, compose and run IR passes.

* :class:`ModulePass` / :class:`PatternPass` + :func:`pattern` — write a pass.
* :func:`register_pass` — make it usable by name in pipelines
  (``@register_pass(override=True)`` to take a name already in use).
* :func:`parse_pipeline`, :func:`run_pipeline`, :class:`Pipeline` — run
  MLIR-syntax pipelines mixing Python and jaxlib's C++ passes.
* :func:`emit_warning` / :func:`emit_remark` — diagnostics from a pass
  (``--verify-diagnostics`` checks them); raise :class:`PassFailure` to fail.
* :func:`set_print_stacktrace_on_diagnostic` — whole tracebacks in the
  diagnostic of a pass that raised (also ``TOOLKIT_PASS_TRACEBACK=1``).
* :func:`list_passes` — every known pass, Python and C++.
* :func:`set_jit_pipeline` / :func:`extend_jit_pipeline` — what ``jit`` runs.
* :func:`verify_numerics` — did each pass of a pipeline keep ``@main``'s
  results on XLA? (:func:`random_inputs`, :func:`run_main` underneath.)

See ``docs/passes.md`` ("Writing your first pass").
"""

import typing as _typing

from toolkit.ir.diagnostics import emit_remark, emit_warning
from toolkit.ir.errors import OpInUseError
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
    ReportedDiagnostic,
    parse_pipeline,
    run_pipeline,
)
from toolkit.ir.diagnostics import print_stacktrace_on_diagnostic, set_print_stacktrace_on_diagnostic
from toolkit.passes.registry import (
    DuplicatePassError,
    PassInfo,
    UnknownPassError,
    list_passes,
    load_pass_plugin,
    register_lazy_pass,
    register_pass,
)

__all__ = [
    "DuplicatePassError", "ModulePass", "NestedPipeline", "NumericsReport", "OpInUseError", "Pass", "PassElement",
    "PassFailure", "PassInfo", "PassNumerics", "PassOptionError", "Pattern", "PatternPass", "Pipeline",
    "PipelineError", "PipelineReport", "ReportedDiagnostic", "UnknownPassError", "UnsupportedModuleError",
    "default_tolerance", "emit_remark", "emit_warning", "extend_jit_pipeline", "jit_pipeline", "list_passes",
    "load_pass_plugin", "parse_pipeline", "pattern", "print_stacktrace_on_diagnostic", "random_inputs",
    "record_statistic", "register_lazy_pass", "register_pass", "run_main", "run_pipeline", "set_jit_pipeline",
    "set_print_stacktrace_on_diagnostic", "verify_numerics",
]

#: verify_numerics and its helpers compile and run ``@main`` on XLA: they load on first use (PEP 562), so that
#: ``import toolkit.passes`` (every toolkit-opt run) does not import the runtime's execution modules for them.
_NUMERICS = frozenset({"NumericsReport", "PassNumerics", "UnsupportedModuleError", "default_tolerance",
                       "random_inputs", "run_main", "verify_numerics"})


def _getattr(name: str) -> _typing.Any:
    if name not in _NUMERICS:
        raise AttributeError(f"module 'toolkit.passes' has no attribute {name!r}")
    from toolkit.passes import numerics  # function-level: lazy, the start-up time of toolkit-opt (see _NUMERICS)

    value = globals()[name] = getattr(numerics, name)
    return value


def _dir() -> list[str]:
    return sorted(set(globals()) | _NUMERICS)


if _typing.TYPE_CHECKING:  # what _NUMERICS names, for type checkers (they do not see __getattr__)
    from toolkit.passes.numerics import (  # noqa: F401
        NumericsReport,
        PassNumerics,
        UnsupportedModuleError,
        default_tolerance,
        random_inputs,
        run_main,
        verify_numerics,
    )
else:
    __getattr__, __dir__ = _getattr, _dir
