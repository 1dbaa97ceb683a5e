"""Pipelines: parsing, printing, running Python and C++ passes together, observability."""

from __future__ import annotations

import dataclasses
import io
import re
import os
from typing import ClassVar, Literal

import pytest
from jaxlib.mlir import ir

from toolkit import passes
from toolkit.ir.context import make_context
from toolkit.passes import registry

MODULE = """
func.func public @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  %1 = stablehlo.add %x, %x : tensor<4xf32>
  %2 = stablehlo.multiply %1, %one : tensor<4xf32>
  return %0, %2 : tensor<4xf32>, tensor<4xf32>
}
func.func private @unused() {
  return
}
"""


def parse(text: str = MODULE) -> ir.Module:
    context = make_context()
    with context, ir.Location.unknown():
        return ir.Module.parse(text)


@pytest.mark.parametrize("text", [
    "builtin.module(func.func(canonicalize), toolkit-simplify, stablehlo-refine-shapes, symbol-dce)",
    "builtin.module(toolkit-op-stats{format=json}, cse)",
    "builtin.module(func.func(cse, toolkit-simplify{ieee-strict=true}), inline)",
    "builtin.module(stablehlo-refine-arguments{types=tensor<2xf32>})",
    "builtin.module()",
])
def test_pipeline_text_round_trips(text: str) -> None:
    pipeline = passes.parse_pipeline(text)
    assert str(pipeline) == text
    assert str(passes.parse_pipeline(str(pipeline))) == text


def test_builtin_module_wrapper_and_spacing_are_optional() -> None:
    assert str(passes.parse_pipeline("func.func(cse),toolkit-simplify")) == \
        "builtin.module(func.func(cse), toolkit-simplify)"


def test_default_options_are_not_printed() -> None:
    assert str(passes.parse_pipeline("toolkit-simplify{ieee-strict=false}")) == "builtin.module(toolkit-simplify)"


def test_unknown_pass_lists_close_names() -> None:
    with pytest.raises(passes.UnknownPassError, match=r"unknown pass 'toolkit-simplfy'; did you mean: toolkit-simplify"):
        passes.parse_pipeline("toolkit-simplfy")
    with pytest.raises(ValueError, match="did you mean: canonicalize"):
        passes.parse_pipeline("func.func(canonicalise)")


def test_bad_options_are_clear() -> None:
    with pytest.raises(passes.PassOptionError, match="has no option 'iee-strict' .*did you mean ieee-strict"):
        passes.parse_pipeline("toolkit-simplify{iee-strict=1}")
    with pytest.raises(passes.PassOptionError, match="expects true or false, got 'maybe'"):
        passes.parse_pipeline("toolkit-simplify{ieee-strict=maybe}")
    with pytest.raises(passes.PassOptionError, match="expects one of table, json"):
        passes.parse_pipeline("toolkit-op-stats{format=xml}")
    with pytest.raises(passes.PassOptionError, match="no such option bogus"):
        passes.parse_pipeline("cse{bogus=1}")


@pytest.mark.parametrize("text, message", [
    ("func.func(cse", "expected ',' or ')'"),
    ("cse,,", "expected a pass or op name"),
    ("cse{max=1", "unbalanced"),
    ("cse)", "expected ','"),
])
def test_syntax_errors_point_at_the_problem(text: str, message: str) -> None:
    with pytest.raises(passes.PipelineError, match=re.escape(message)):
        passes.parse_pipeline(text)


def test_every_listed_cxx_pass_is_registered_in_jaxlib() -> None:
    from jaxlib.mlir import passmanager

    with make_context():
        for name in registry.CXX_PASSES:
            try:
                passmanager.PassManager.parse(f"builtin.module({name})")
            except ValueError:
                passmanager.PassManager.parse(f"builtin.module(func.func({name}))")


def test_list_passes_has_python_and_cxx_passes_with_options() -> None:
    rows = {row.name: row for row in passes.list_passes()}
    assert rows["canonicalize"].kind == "c++"
    assert rows["toolkit-simplify"].kind == "python"
    assert rows["toolkit-op-stats"].options[0][:3] == ("format", "table|json", "table")
    assert all(row.description for row in rows.values())
    assert ("max-iterations", "", "10", "") in rows["canonicalize"].options
    assert rows["cse"].options == ()


def test_python_and_cxx_passes_interleave_in_one_run() -> None:
    module = parse()
    report = passes.run_pipeline(module, "builtin.module(func.func(cse), toolkit-simplify, canonicalize, symbol-dce)")
    text = str(module)
    assert "stablehlo.multiply" not in text and "@unused" not in text
    assert text.count("stablehlo.add") == 1
    assert [r.label for r in report.records] == ["func.func(cse)", "toolkit-simplify", "canonicalize", "symbol-dce"]
    assert report.records[1].statistics == {"multiply_one": 1}


def test_python_pass_nested_under_func_runs_on_each_function() -> None:
    seen: list[str] = []

    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class RecordFunctions(passes.ModulePass):
        name: ClassVar[str] = "test-record-functions"
        description: ClassVar[str] = "Records the anchor ops it sees."

        def apply(self, op: ir.Operation) -> None:
            seen.append(f"{op.name}:{ir.StringAttr(op.attributes['sym_name']).value}")

    passes.run_pipeline(parse(), "func.func(cse, test-record-functions, canonicalize)")
    assert seen == ["func.func:main", "func.func:unused"]


def test_print_ir_after_only_when_changed_and_before_named() -> None:
    stream = io.StringIO()
    passes.run_pipeline(parse(), "func.func(cse), toolkit-op-stats{output=/dev/null}, toolkit-simplify",
                    print_ir_after=True, print_ir_before=["toolkit-simplify"], stream=stream)
    out = stream.getvalue()
    assert "IR Dump After CSEPass: cse" in out  # MLIR's header
    assert "IR Dump After OpStatsPass" not in out  # unchanged
    assert "IR Dump Before SimplifyPass: toolkit-simplify" in out
    assert "IR Dump Before CSEPass" not in out
    stream = io.StringIO()
    passes.run_pipeline(parse(), "toolkit-op-stats{output=/dev/null}", print_ir_after=True,
                    print_after_change=False, stream=stream)
    assert "IR Dump After OpStatsPass: toolkit-op-stats{output=/dev/null}" in stream.getvalue()


def test_dump_dir_and_timing(tmp_path) -> None:
    stream = io.StringIO()
    report = passes.run_pipeline(parse(), "cse, toolkit-simplify", print_ir_after=True, dump_dir=str(tmp_path),
                             timing=True, statistics=True, stream=stream)
    assert sorted(os.listdir(tmp_path)) == ["001_after_cse.mlir", "002_after_toolkit-simplify.mlir"]
    assert "Execution time report" in stream.getvalue()
    assert "(S) 1 multiply_one" in stream.getvalue()
    assert report.total_seconds >= sum(r.seconds for r in report.records) * 0.5


def test_a_pass_that_breaks_the_ir_is_named() -> None:
    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class DropTerminators(passes.ModulePass):
        name: ClassVar[str] = "test-drop-terminators"
        description: ClassVar[str] = "Erases every func.return (breaks the IR)."

        def apply(self, op: ir.Operation) -> None:
            from toolkit.ir.walk import ops_named

            for ret in ops_named(op, "func.return"):
                ret.erase()

    with pytest.raises(passes.PipelineError, match="IR verification failed after pass 'test-drop-terminators'"):
        passes.run_pipeline(parse(), "cse, test-drop-terminators, canonicalize")
    # Without verification the broken IR gets through (caller's responsibility).
    passes.run_pipeline(parse(), "test-drop-terminators", verify=False)


def test_a_failing_or_raising_python_pass_is_named() -> None:
    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class Fails(passes.ModulePass):
        name: ClassVar[str] = "test-fails"
        description: ClassVar[str] = "Always fails."
        crash: bool = False

        def apply(self, op: ir.Operation) -> None:
            if self.crash:
                raise ZeroDivisionError("oops")
            raise passes.PassFailure("cannot do it")

    with pytest.raises(passes.PipelineError, match="pass 'test-fails' failed: cannot do it"):
        passes.run_pipeline(parse(), "cse, test-fails")
    with pytest.raises(passes.PipelineError, match=r"pass 'test-fails\{crash=true\}' failed: ZeroDivisionError: oops") as info:
        passes.run_pipeline(parse(), "test-fails{crash=true}")
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_failing_cxx_pass_is_named() -> None:
    module = parse("""
    func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
      return %x : tensor<?xf32>
    }""")
    with pytest.raises(passes.PipelineError, match=r"stablehlo-refine-arguments\{types=tensor<2x3xf32>,tensor<1xf32>\}"):
        passes.run_pipeline(module, "stablehlo-refine-arguments{types=tensor<2x3xf32>,tensor<1xf32>}")


def test_pipeline_objects_compose() -> None:
    combined = passes.parse_pipeline("cse") + passes.parse_pipeline("toolkit-simplify")
    assert str(combined) == "builtin.module(cse, toolkit-simplify)"
    module = parse()
    combined.run(module)
    assert "stablehlo.multiply" not in str(module)


def test_register_pass_rejects_bad_classes() -> None:
    class NotAPass:
        name = "test-not-a-pass"

    with pytest.raises(TypeError, match="is not a pass class"):
        passes.register_pass(NotAPass)

    @dataclasses.dataclass(frozen=True)
    class NoName(passes.ModulePass):
        pass

    with pytest.raises(ValueError, match="needs a pipeline name"):
        passes.register_pass(NoName)


def test_pass_options_of_every_type() -> None:
    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class Typed(passes.ModulePass):
        name: ClassVar[str] = "test-typed"
        count: int = 1
        scale: float = 1.0
        label: str = "x"
        mode: Literal["a", "b"] = "a"
        axes: tuple[int, ...] = ()

        def apply(self, op: ir.Operation) -> None:
            pass

    element = passes.parse_pipeline('test-typed{count=3 scale=0.5 label="two words" mode=b axes=1,2}').elements[0]
    instance = element.python_pass
    assert (instance.count, instance.scale, instance.label, instance.mode, instance.axes) == \
        (3, 0.5, "two words", "b", (1, 2))
    assert str(element) == 'test-typed{count=3 scale=0.5 label="two words" mode=b axes=1,2}'
    with pytest.raises(passes.PassOptionError, match="expects an integer"):
        passes.parse_pipeline("test-typed{count=many}")


def test_walk_driver_pattern_pass() -> None:
    @passes.pattern("stablehlo.multiply")
    def multiply_to_add(op, rewriter):
        # x * y -> x + y  (test only: not an identity)
        with op.context, op.location, ir.InsertionPoint(op):
            from toolkit.ir.builders import build

            new = build("stablehlo.add", list(op.operands), [op.results[0].type])
        rewriter.replace_op(op, [new.result])
        return True

    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class WalkPass(passes.PatternPass):
        name: ClassVar[str] = "test-walk-pass"
        driver: ClassVar[str] = "walk"

        def patterns(self):
            return [multiply_to_add]

    module = parse()
    report = passes.run_pipeline(module, "test-walk-pass")
    assert "stablehlo.multiply" not in str(module)
    assert report.records[0].statistics == {"multiply_to_add": 1}


def test_record_statistic_outside_a_pass_is_a_no_op() -> None:
    passes.record_statistic("nothing")


def test_list_passes_survives_a_broken_pass_module() -> None:
    registry.register_lazy_pass("test-broken-module", "toolkit.passes.no_such_module:Nothing", "Never loads.")
    try:
        rows = {row.name: row for row in passes.list_passes()}
        assert "cannot load: ModuleNotFoundError" in rows["test-broken-module"].description
        with pytest.raises(ModuleNotFoundError):
            passes.parse_pipeline("test-broken-module")
    finally:
        del registry._LAZY_PASSES["test-broken-module"]
