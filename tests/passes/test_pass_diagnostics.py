"""Diagnostics from passes: exceptions located at the op and the pass code's line, tracebacks on
request, warnings and remarks, and pass names that cannot be taken by accident."""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import ClassVar

import pytest
from jaxlib.mlir import ir

from toolkit import passes
from toolkit.ir import diagnostics, parse_module
from toolkit.ir.context import make_context
from toolkit.ir.walk import ops_named
from toolkit.passes import registry

PROGRAM = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
THIS_FILE = os.path.abspath(__file__)


def _module() -> ir.Module:
    with make_context():
        return ir.Module.parse(PROGRAM)


@dataclasses.dataclass(frozen=True)
class Seen:
    severity: ir.DiagnosticSeverity
    location: str
    message: str
    notes: tuple


def _keep(seen: list):
    # MLIR's diagnostics are valid only inside the callback: copy what the tests read.
    def handler(d) -> bool:
        seen.append(Seen(d.severity, str(d.location), d.message, tuple(d.notes)))
        return True

    return handler


def _run_collecting(module: ir.Module, pipeline: str) -> tuple[list[Seen], BaseException | None]:
    """Run with a handler like toolkit-opt's; returns (diagnostics, raised error)."""
    seen: list[Seen] = []
    with diagnostics.attach_diagnostic_handler(module.context, _keep(seen)):
        try:
            passes.run_pipeline(module, pipeline, capture_diagnostics=False)
        except passes.PipelineError as error:
            return seen, error
    return seen, None


def _line_of(text: str) -> int:
    with open(THIS_FILE) as f:
        return next(i for i, line in enumerate(f, start=1) if text in line)


# --- exceptions ------------------------------------------------------------------------


def _reciprocal_of_zero():
    return 1 / 0  # raising line (module pass)


@passes.register_pass
@dataclasses.dataclass(frozen=True)
class DividePass(passes.ModulePass):
    name: ClassVar[str] = "test-diag-divide"

    def apply(self, op):
        _reciprocal_of_zero()


calls_before_failure: list[str] = []


@passes.pattern("stablehlo.multiply")
def divide_at_multiply(op, rewriter):
    calls_before_failure.append(op.name)
    return {}["missing key"]  # raising line (pattern)


@passes.register_pass
@dataclasses.dataclass(frozen=True)
class DividePatternPass(passes.PatternPass):
    name: ClassVar[str] = "test-diag-divide-pattern"

    def patterns(self):
        return [divide_at_multiply]


def test_module_pass_exception_names_pass_exception_and_line():
    module = _module()
    seen, error = _run_collecting(module, "test-diag-divide")
    line = _line_of("raising line (module pass)")
    expected = f"(at {THIS_FILE}:{line} in _reciprocal_of_zero)"
    assert str(error) == f"pass 'test-diag-divide' failed: ZeroDivisionError: division by zero {expected}"
    assert isinstance(error.__cause__, ZeroDivisionError)
    [diagnostic] = seen
    assert diagnostic.severity == ir.DiagnosticSeverity.ERROR
    assert diagnostic.message == f"pass 'test-diag-divide' raised ZeroDivisionError: division by zero {expected}"
    assert diagnostic.location == str(module.operation.location)  # the anchor op: the module


def test_pattern_exception_is_located_at_the_matched_op_and_stops_the_driver():
    calls_before_failure.clear()
    module = _module()
    seen, error = _run_collecting(module, "test-diag-divide-pattern")
    line = _line_of("raising line (pattern)")
    [diagnostic] = seen
    assert diagnostic.message == (f"pass 'test-diag-divide-pattern' raised KeyError: missing key in pattern "
                                  f"'divide_at_multiply' (at {THIS_FILE}:{line} in divide_at_multiply)")
    multiply = ops_named(module, "stablehlo.multiply")[0]
    assert diagnostic.location == str(multiply.location)
    assert isinstance(error.__cause__, KeyError)
    assert calls_before_failure == ["stablehlo.multiply"]  # the driver stopped matching


def test_module_pass_nested_under_func_fails_at_the_function():
    module = _module()
    seen, _ = _run_collecting(module, "func.func(test-diag-divide)")
    function = module.body.operations[0]
    assert seen[0].location == str(function.location)


def test_pass_failure_keeps_its_message_and_op():
    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class Refuse(passes.ModulePass):
        name: ClassVar[str] = "test-diag-refuse"

        def apply(self, op):
            raise passes.PassFailure("no multiply allowed", op=ops_named(op, "stablehlo.multiply")[0])

    module = _module()
    seen, error = _run_collecting(module, "test-diag-refuse")
    assert str(error) == "pass 'test-diag-refuse' failed: no multiply allowed"
    assert seen[0].message == "no multiply allowed"
    assert seen[0].location == str(ops_named(module, "stablehlo.multiply")[0].location)


@pytest.fixture
def traceback_setting(monkeypatch):
    from toolkit.ir import diagnostics

    monkeypatch.setattr(diagnostics, "_print_stacktrace", None)
    monkeypatch.delenv("TOOLKIT_PASS_TRACEBACK", raising=False)
    return diagnostics


def test_traceback_on_request_by_function(traceback_setting):
    assert not passes.print_stacktrace_on_diagnostic()
    passes.set_print_stacktrace_on_diagnostic(True)
    assert passes.print_stacktrace_on_diagnostic()
    seen, _ = _run_collecting(_module(), "test-diag-divide")
    message = seen[0].message
    assert message.startswith("pass 'test-diag-divide' raised ZeroDivisionError")
    assert "\nTraceback (most recent call last):\n" in message
    assert f'File "{THIS_FILE}", line {_line_of("raising line (module pass)")}, in _reciprocal_of_zero' in message
    assert message.endswith("ZeroDivisionError: division by zero")


def test_traceback_on_request_by_environment(traceback_setting, monkeypatch):
    monkeypatch.setenv("TOOLKIT_PASS_TRACEBACK", "1")
    assert passes.print_stacktrace_on_diagnostic()
    seen, _ = _run_collecting(_module(), "test-diag-divide")
    assert "Traceback (most recent call last)" in seen[0].message
    passes.set_print_stacktrace_on_diagnostic(False)  # the function wins over the environment
    seen, _ = _run_collecting(_module(), "test-diag-divide")
    assert "Traceback" not in seen[0].message


def test_exception_site_prefers_the_given_files_then_skips_machinery():
    def inner():
        raise ValueError("x")

    try:
        inner()
    except ValueError as error:
        assert diagnostics.exception_site(error, [THIS_FILE]).name == "inner"
        assert diagnostics.exception_site(error).name == "inner"
        assert diagnostics.exception_site(error, ["/nowhere.py"]).name == "inner"
    error = ValueError("no traceback")
    assert diagnostics.exception_site(error) is None


# --- warnings and remarks --------------------------------------------------------------


@passes.register_pass
@dataclasses.dataclass(frozen=True)
class ChattyPass(passes.ModulePass):
    name: ClassVar[str] = "test-diag-chatty"
    modifies_ir: ClassVar[bool] = False

    def apply(self, op):
        passes.emit_warning(ops_named(op, "stablehlo.add")[0], "add warned")
        passes.emit_remark(ops_named(op, "stablehlo.multiply")[0], "multiply remarked")


def test_warnings_and_remarks_reach_an_attached_handler():
    module = _module()
    seen, error = _run_collecting(module, "test-diag-chatty")
    assert error is None
    assert [(diagnostics.severity_name(d.severity), d.message) for d in seen] == [
        ("warning", "add warned"), ("remark", "multiply remarked")]
    assert seen[0].location == str(ops_named(module, "stablehlo.add")[0].location)
    assert seen[0].notes == ()


def test_warnings_and_remarks_are_in_the_report(capsys):
    report = passes.run_pipeline(_module(), "test-diag-chatty")
    assert report.diagnostics == [passes.ReportedDiagnostic("warning", "-:2:8", "add warned"),
                                  passes.ReportedDiagnostic("remark", "-:3:8", "multiply remarked")]
    # Recorded and handled: never printed a second time by MLIR's default handler (issue 27).
    assert capsys.readouterr().err == ""


def test_print_warnings_prints_each_captured_warning_once(capsys, tmp_path):
    path = tmp_path / "chatty.mlir"
    path.write_text(PROGRAM)
    module = parse_module(path)
    report = passes.run_pipeline(module, "test-diag-chatty", print_warnings=True)
    assert [d.location for d in report.diagnostics] == [f"{path}:2:8", f"{path}:3:8"]  # the file's name
    assert capsys.readouterr().err == f"{path}:2:8: warning: add warned\n"  # once; the remark is not printed


def test_a_jit_pipelines_warning_is_printed_once_at_the_users_line(capfd):
    import numpy as np
    import toolkit

    def f(x):
        return x * x + x  # the ops the pass warns and remarks about
    from toolkit.passes.default_pipeline import JIT_PIPELINE
    saved = JIT_PIPELINE
    passes.extend_jit_pipeline("test-diag-chatty")
    try:
        toolkit.jit(f)(np.ones(3, np.float32))
    finally:
        passes.set_jit_pipeline(saved)
    err = capfd.readouterr().err
    assert err.count("warning: add warned") == 1, err
    assert f"{THIS_FILE}:" in err.split("warning: add warned")[0], err  # the user's file and line


def test_unhandled_warning_prints_and_remark_is_dropped(capsys):
    module = _module()
    add = ops_named(module, "stablehlo.add")[0]
    diagnostics.emit_warning(add, "careful")
    diagnostics.emit_remark(add, "fyi")
    diagnostics.emit_diagnostic(ir.Location.unknown(module.context), ir.DiagnosticSeverity.WARNING, "nowhere")
    assert capsys.readouterr().err == "-:2:8: warning: careful\nloc(unknown): warning: nowhere\n"


def test_emit_error_goes_through_mlirs_engine():
    module = _module()
    seen = []
    handle = module.context.attach_diagnostic_handler(lambda d: seen.append(d.message) or True)
    try:
        diagnostics.emit_error(module, "plain MLIR handler sees errors")
    finally:
        handle.detach()
    assert seen == ["plain MLIR handler sees errors"]


def test_handlers_run_newest_first_until_one_handles_and_detach():
    module = _module()
    add = ops_named(module, "stablehlo.add")[0]
    order = []
    older = diagnostics.attach_diagnostic_handler(module.context, lambda d: order.append("older") or True)
    newer = diagnostics.attach_diagnostic_handler(module.context, lambda d: order.append("newer") or False)
    try:
        passes.emit_warning(add, "w")
        assert order == ["newer", "older"]
        newer.detach()
        newer.detach()  # idempotent
        assert not newer.attached and older.attached
        passes.emit_warning(add, "w")
        assert order == ["newer", "older", "older"]
    finally:
        older.detach()


def test_a_raising_handler_counts_as_not_handled(capsys):
    module = _module()

    def broken(diagnostic):
        raise RuntimeError("handler bug")

    with diagnostics.attach_diagnostic_handler(module.context, broken) as handle:
        passes.emit_warning(module, "still printed")
        assert handle.had_error
    assert "warning: still printed" in capsys.readouterr().err


def test_handlers_are_per_context(capsys):
    first, second = _module(), _module()
    seen = []
    with diagnostics.attach_diagnostic_handler(first.context, lambda d: seen.append(d) or True):
        passes.emit_warning(second, "other context")
    assert seen == []
    assert "other context" in capsys.readouterr().err


def test_format_location():
    with make_context():
        assert diagnostics.format_location(ir.Location.file("a.py", 3, 4)) == "a.py:3:4"
        assert diagnostics.format_location(ir.Location.name("add", ir.Location.file("b.py", 5, 0))) == "b.py:5:0"
        assert diagnostics.format_location(ir.Location.unknown()) == ""


# --- pass names ------------------------------------------------------------------------


@pytest.fixture
def scratch_registry(monkeypatch):
    """Registrations made in the test are undone afterwards."""
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))
    return registry


def _pass_class(pass_name: str, qualname: str, module: str = __name__) -> type:
    @dataclasses.dataclass(frozen=True)
    class Made(passes.ModulePass):
        name: ClassVar[str] = pass_name

        def apply(self, op):
            pass

    Made.__qualname__ = qualname
    Made.__module__ = module
    return Made


def test_a_taken_python_name_needs_override(scratch_registry):
    first = passes.register_pass(_pass_class("test-diag-taken", "First"))
    with pytest.raises(passes.DuplicatePassError, match=(
            rf"cannot register {__name__}:Second as pass 'test-diag-taken': the name is taken by the Python "
            rf"pass {__name__}:First; choose another name, or use @register_pass\(override=True\)")):
        passes.register_pass(_pass_class("test-diag-taken", "Second"))
    assert registry.lookup_python_pass("test-diag-taken") is first
    second = passes.register_pass(_pass_class("test-diag-taken", "Second"), override=True)
    assert registry.lookup_python_pass("test-diag-taken") is second


def test_a_cxx_name_needs_override(scratch_registry):
    with pytest.raises(passes.DuplicatePassError, match="the name is taken by the C\\+\\+ pass 'cse'"):
        passes.register_pass(_pass_class("cse", "MyCse"))
    with pytest.raises(passes.DuplicatePassError, match="C\\+\\+ pass 'sdy-close-shardings'"):
        passes.register_pass(_pass_class("sdy-close-shardings", "Mine"))
    mine = passes.register_pass(_pass_class("cse", "MyCse"), override=True)
    assert passes.parse_pipeline("cse").elements[0].python_pass == mine()


def test_a_lazy_builtin_name_needs_override(scratch_registry, monkeypatch):
    monkeypatch.delitem(registry._registered, "toolkit-simplify", raising=False)
    with pytest.raises(passes.DuplicatePassError, match="the built-in Python pass toolkit.passes.simplify:SimplifyPass"):
        passes.register_pass(_pass_class("toolkit-simplify", "Mine"))
    # The built-in class itself may register (its module being imported).
    from toolkit.passes.simplify import SimplifyPass
    assert passes.register_pass(SimplifyPass) is SimplifyPass


def test_the_same_class_path_registers_again(scratch_registry):
    generation = registry.registry_generation()
    first = passes.register_pass(_pass_class("test-diag-again", "Again"))
    assert registry.registry_generation() == generation  # a new name changes no pipeline
    again = passes.register_pass(_pass_class("test-diag-again", "Again"))  # a re-run cell, a reloaded module
    assert again is not first and registry.lookup_python_pass("test-diag-again") is again
    assert registry.registry_generation() > generation


def test_decorator_forms(scratch_registry):
    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class Bare(passes.ModulePass):
        name: ClassVar[str] = "test-diag-bare"

    @passes.register_pass(override=True)
    @dataclasses.dataclass(frozen=True)
    class WithOptions(passes.ModulePass):
        name: ClassVar[str] = "test-diag-bare"

    assert registry.lookup_python_pass("test-diag-bare") is WithOptions
    class NotAPass:
        name = "test-diag-not-a-pass"

    with pytest.raises(TypeError, match="not a pass class"):
        passes.register_pass(override=True)(NotAPass)


def test_loading_a_plugin_twice_is_fine_and_another_file_with_its_names_is_not(scratch_registry, tmp_path):
    source = ("import dataclasses\nfrom typing import ClassVar\nfrom toolkit.passes import ModulePass, register_pass\n"
              "@register_pass\n@dataclasses.dataclass(frozen=True)\nclass P(ModulePass):\n"
              "    name: ClassVar[str] = 'test-diag-plugin'\n    def apply(self, op):\n        pass\n")
    plugin = tmp_path / "diag_plugin.py"
    plugin.write_text(source)
    other = tmp_path / "other_plugin.py"
    other.write_text(source)
    try:
        passes.load_pass_plugin(str(plugin))
        passes.load_pass_plugin(str(plugin))
        with pytest.raises(passes.DuplicatePassError, match="toolkit_pass_plugin_diag_plugin:P"):
            passes.load_pass_plugin(str(other))
    finally:
        for name in ("toolkit_pass_plugin_diag_plugin", "toolkit_pass_plugin_other_plugin"):
            sys.modules.pop(name, None)
