"""A pass that erases an op whose results are still used fails cleanly; it never crashes the process.

It used to: ``toolkit-opt`` died with SIGSEGV (exit 139, nothing printed) in
MLIR's verifier after the pass. Anything that could leave such IR behind runs
in a subprocess here, so a crash fails the test instead of killing pytest.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from typing import ClassVar

import pytest
from jaxlib.mlir import ir

from toolkit import passes
from toolkit.ir import erase_op
from toolkit.ir.builders import build, insert_before
from toolkit.ir.context import make_context
from toolkit.ir.errors import OpInUseError, PassFailure
from toolkit.ir.rewriting import CheckedRewriter, check_replacement, dangling_operands, live_uses
from toolkit.ir.walk import ops_named, replace_op_results

PLUGIN = os.path.join(os.path.dirname(__file__), "..", "..", "test", "lit", "Inputs", "pass_safety_plugin.py")
PROGRAM = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  %2 = stablehlo.subtract %1, %0 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""


def _module(text: str = PROGRAM) -> ir.Module:
    with make_context():
        return ir.Module.parse(text)


def _opt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit.tools.opt", "-", f"--load-pass-plugin={PLUGIN}", *args],
                          input=PROGRAM, capture_output=True, text=True, timeout=120)


# glibc settings under which a write into freed memory crashes at once rather
# than sometimes, hundreds of runs later: no per-thread cache, checked heap.
STRICT_MALLOC = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "MALLOC_CHECK_": "3"}


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": os.getcwd(), **STRICT_MALLOC})


# --- toolkit-opt: the regression ------------------------------------------------------


@pytest.mark.parametrize("pipeline", ["builtin.module(lit-erase-used)",
                                      "builtin.module(func.func(lit-erase-used, cse))",
                                      "builtin.module(lit-erase-used, canonicalize)"])
def test_op_erase_of_a_used_op_fails_instead_of_crashing(pipeline):
    result = _opt(f"--pass-pipeline={pipeline}", "--mlir-print-ir-after-all")
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "erased the op defining operands 0, 1 of this 'stablehlo.multiply' while it was still used" \
        in result.stderr
    assert "erase with toolkit.ir.rewriting.erase_op" in result.stderr
    assert result.stdout == ""


def test_rewriter_erase_op_of_a_used_op_is_refused():
    result = _opt("--lit-erase-used-pattern")
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert ("cannot erase 'stablehlo.add' at <stdin>:2:8: its results are still used by 'stablehlo.multiply' at "
            "<stdin>:3:8 (result 0), 'stablehlo.subtract' at <stdin>:4:8 (result 0)") in result.stderr


def test_python_api_fails_and_the_process_survives_teardown():
    # Freeing IR with dangling operands writes into freed memory (under
    # STRICT_MALLOC that crashes in the first iteration if the runner frees it).
    result = _python(f"""
        import importlib.util, gc
        spec = importlib.util.spec_from_file_location("plugin", {PLUGIN!r})
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        from jaxlib.mlir import ir
        from toolkit.ir.context import make_context
        from toolkit.passes import PipelineError, run_pipeline
        failures = 0
        for _ in range(20):
            with make_context():
                module = ir.Module.parse({PROGRAM!r})
            try:
                run_pipeline(module, "lit-erase-used")
            except PipelineError as error:
                failures += 1
                message = str(error)
            del module
            gc.collect()
        print(failures)
        print(message)
    """)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    count, message = result.stdout.split("\n", 1)
    assert count == "20"
    assert message.startswith("pass 'lit-erase-used' failed: it erased an op whose results were still used by "
                              "'stablehlo.multiply' at line 3:8 (operands 0, 1), 'stablehlo.subtract' at line 4:8 "
                              "(operand 1)")
    assert "discard it" in message


def test_an_exception_after_a_bad_erase_is_reported_as_the_erase():
    result = _python(f"""
        import dataclasses
        from typing import ClassVar
        from jaxlib.mlir import ir
        from toolkit.ir.context import make_context
        from toolkit.ir.walk import ops_named
        from toolkit.passes import ModulePass, PipelineError, register_pass, run_pipeline

        @register_pass
        @dataclasses.dataclass(frozen=True)
        class EraseThenRaise(ModulePass):
            name: ClassVar[str] = "erase-then-raise"
            def apply(self, op):
                ops_named(op, "stablehlo.add")[0].erase()
                raise RuntimeError("later")

        with make_context():
            module = ir.Module.parse({PROGRAM!r})
        try:
            run_pipeline(module, "erase-then-raise")
        except PipelineError as error:
            print(error)
    """)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert "it erased an op whose results were still used" in result.stdout


# --- the helpers ------------------------------------------------------------------------


def test_erase_op_refuses_while_used_and_names_the_users():
    module = _module()
    add = ops_named(module, "stablehlo.add")[0]
    with pytest.raises(OpInUseError) as caught:
        erase_op(add)
    assert isinstance(caught.value, PassFailure)
    assert caught.value.op == add
    assert str(caught.value) == (
        "cannot erase 'stablehlo.add' at line 2:8: its results are still used by 'stablehlo.multiply' at line 3:8 "
        "(result 0), 'stablehlo.subtract' at line 4:8 (result 0); replace those uses first "
        "(rewriter.replace_op, Value.replace_all_uses_with)")
    assert module.operation.verify()


def test_erase_op_erases_unused_ops():
    module = _module()
    subtract = ops_named(module, "stablehlo.subtract")[0]
    ret = ops_named(module, "func.return")[0]
    ret.operands[0] = ops_named(module, "stablehlo.multiply")[0].results[0]
    erase_op(subtract)
    assert "subtract" not in str(module)
    assert module.operation.verify()


def test_erase_op_lists_at_most_five_users():
    body = "\n".join(f"  %u{i} = stablehlo.negate %0 : tensor<f32>" for i in range(7))
    module = _module(f"func.func @f(%a: tensor<f32>) {{\n  %0 = stablehlo.abs %a : tensor<f32>\n{body}\n"
                     "  return\n}")
    with pytest.raises(OpInUseError, match=r"\(result 0\) and 2 more; replace"):
        erase_op(ops_named(module, "stablehlo.abs")[0])


def test_live_uses_ignore_uses_inside_the_op():
    module = _module("""
      func.func @f(%a: tensor<i1>, %b: tensor<f32>) -> tensor<f32> {
        %0 = "stablehlo.if"(%a) ({
          %1 = stablehlo.negate %b : tensor<f32>
          %2 = stablehlo.negate %1 : tensor<f32>
          stablehlo.return %2 : tensor<f32>
        }, {
          stablehlo.return %b : tensor<f32>
        }) : (tensor<i1>) -> tensor<f32>
        return %0 : tensor<f32>
      }""")
    negate = ops_named(module, "stablehlo.negate")[0]
    assert [user.name for _, user in live_uses(negate)] == ["stablehlo.negate"]
    if_op = ops_named(module, "stablehlo.if")[0]
    assert [(n, user.name) for n, user in live_uses(if_op)] == [(0, "func.return")]


def test_replace_op_results_refuses_to_leave_uses():
    module = _module()
    add = ops_named(module, "stablehlo.add")[0]
    with pytest.raises(OpInUseError):
        replace_op_results(add, [add.results[0]])
    assert module.operation.verify()


def test_check_replacement_errors():
    module = _module()
    add = ops_named(module, "stablehlo.add")[0]
    multiply = ops_named(module, "stablehlo.multiply")[0]
    with pytest.raises(PassFailure, match="it has 1 results, got 2 replacement values"):
        check_replacement(add, [multiply.results[0], multiply.results[0]])
    with pytest.raises(PassFailure, match="by itself"):
        check_replacement(add, add)
    with pytest.raises(PassFailure, match="by its own results"):
        check_replacement(add, [add.results[0]])
    check_replacement(add, multiply)
    check_replacement(add, [module.body.operations[0].regions[0].blocks[0].arguments[0]])


def test_dangling_operands_of_valid_ir_is_empty():
    assert dangling_operands(_module()) == []


def test_dangling_operands_finds_the_users_of_an_erased_op():
    result = _python(f"""
        from jaxlib.mlir import ir
        from toolkit.ir.context import make_context
        from toolkit.ir.rewriting import dangling_operands, keep_alive_forever
        from toolkit.ir.walk import ops_named
        with make_context():
            module = ir.Module.parse({PROGRAM!r})
        ops_named(module, "stablehlo.add")[0].erase()
        keep_alive_forever(module)
        print([(op.name, numbers) for op, numbers in dangling_operands(module)])
    """)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.strip() == "[('stablehlo.multiply', (0, 1)), ('stablehlo.subtract', (1,))]"


# --- patterns get a checked rewriter -----------------------------------------------------


@passes.pattern("stablehlo.add")
def replace_add_by_two_values(op, rewriter):
    # a bug: one result, two replacement values
    rewriter.replace_op(op, [op.operands[0], op.operands[1]])
    return True


@passes.register_pass
@dataclasses.dataclass(frozen=True)
class BadReplacePass(passes.PatternPass):
    name: ClassVar[str] = "test-safety-bad-replace"
    driver: ClassVar[str] = "walk"

    def patterns(self):
        return [replace_add_by_two_values]


def test_replace_op_with_the_wrong_count_is_refused():
    module = _module()
    with pytest.raises(passes.PipelineError, match="it has 1 results, got 2 replacement values") as caught:
        passes.run_pipeline(module, "test-safety-bad-replace")
    assert isinstance(caught.value.__cause__, PassFailure)
    assert module.operation.verify()


@passes.pattern("stablehlo.subtract")
def subtract_to_add(op, rewriter):
    # x - y -> x + y, through the checked rewriter's pass-through members
    assert isinstance(rewriter, CheckedRewriter)
    with insert_before(op):
        new = build("stablehlo.add", list(op.operands), [op.results[0].type])
    rewriter.replace_op(op, new)
    return True


@passes.register_pass
@dataclasses.dataclass(frozen=True)
class SubtractToAddPass(passes.PatternPass):
    name: ClassVar[str] = "test-safety-subtract-to-add"

    def patterns(self):
        return [subtract_to_add]


def test_good_patterns_still_rewrite():
    module = _module()
    report = passes.run_pipeline(module, "test-safety-subtract-to-add")
    assert "subtract" not in str(module)
    assert report.records[0].statistics == {"subtract_to_add": 1}


def test_module_passes_that_erase_correctly_pass_the_check():
    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class EraseDeadNegates(passes.ModulePass):
        name: ClassVar[str] = "test-safety-erase-dead"

        def apply(self, op):
            for negate in ops_named(op, "stablehlo.negate"):
                if not live_uses(negate):
                    erase_op(negate)

    module = _module("func.func @f(%a: tensor<f32>) -> tensor<f32> {\n"
                     "  %0 = stablehlo.negate %a : tensor<f32>\n  return %a : tensor<f32>\n}")
    passes.run_pipeline(module, "test-safety-erase-dead")
    assert "negate" not in str(module)


def test_erase_op_in_a_module_pass_fails_the_pass_at_the_op():
    @passes.register_pass
    @dataclasses.dataclass(frozen=True)
    class EraseAdds(passes.ModulePass):
        name: ClassVar[str] = "test-safety-erase-adds"

        def apply(self, op):
            for add in ops_named(op, "stablehlo.add"):
                erase_op(add)

    module = _module()
    with pytest.raises(passes.PipelineError, match="pass 'test-safety-erase-adds' failed: cannot erase 'stablehlo.add'"):
        passes.run_pipeline(module, "test-safety-erase-adds")
    assert module.operation.verify()
