"""Source locations from Python to XLA's HLO (toolkit/lowering/lower.py, toolkit/core/tracing.py), against JAX.

Each case traces one function twice, with ``toolkit.numpy`` and with ``jax.numpy``
from the same lines, and compares what both write: the op names
(``jit(f)/.../primitive``) and the innermost Python frames (function, file, line,
columns) of the MLIR locations, and the op_name and stack frames XLA keeps in the
compiled HLO.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pytest
from jaxlib.mlir import ir

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.core import source_locations, tracing
from toolkit.core.program import SourceInfo
from toolkit.export import inspection
from toolkit.lowering.lower import region_name

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.linspace(-1.0, 1.0, 3, dtype=np.float32)
Frame = tuple[str, str, int, int]  # (function, file, line, column)


# -- reading locations -----------------------------------------------------------------------------------------

def _ops(module: ir.Module):
    def visit(op: Any):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    yield inner.operation
                    yield from visit(inner.operation)
    yield from visit(module.operation)


def _name_and_frames(loc: ir.Location) -> tuple[str | None, list[Frame]]:
    """The op name (the outermost NameLoc not itself a frame) and the frames, innermost first."""
    name = None
    if isinstance(loc, ir.NameLoc) and not isinstance(loc.child_loc, ir.FileLineColLoc):
        name, loc = loc.name_str, loc.child_loc
    frames: list[Frame] = []

    def visit(location: Any) -> None:
        if isinstance(location, ir.CallSiteLoc):
            visit(location.callee)
            visit(location.caller)
        elif isinstance(location, ir.NameLoc) and isinstance(location.child_loc, ir.FileLineColLoc):
            place = location.child_loc
            frames.append((location.name_str, place.filename, place.start_line, place.start_col))
        elif isinstance(location, ir.NameLoc):
            visit(location.child_loc)

    visit(loc)
    return name, frames


def _located(module: ir.Module) -> dict[str, list[Frame]]:
    """Op name -> frames of the first op of that name."""
    found: dict[str, list[Frame]] = {}
    for op in _ops(module):
        name, frames = _name_and_frames(op.location)
        if name is not None and frames and name not in found:
            found[name] = frames
    return found


def _both(make):
    """(toolkit's module, JAX's module) of ``make(numpy_module, lax_module)`` lowered for ``X``."""
    ours = toolkit.jit(make(tnp, lax)).lower(X).compiler_ir("stablehlo")
    theirs = jax.jit(make(jnp, jax.lax)).lower(X).compiler_ir("stablehlo")
    return _located(ours), _located(theirs)


def _op_names(hlo: str) -> set[str]:
    return set(re.findall(r'op_name="([^"]*)"', hlo))


def _hlo_frames(hlo: str, op_name: str) -> tuple[str, str, int, int]:
    """(function, file, line, column) of the innermost stack frame of the first HLO op named ``op_name``."""
    files = dict(re.findall(r'^(\d+) "([^"]*)"$', hlo.split("FunctionNames")[0].split("FileNames")[1], re.M))
    functions = dict(re.findall(r'^(\d+) "([^"]*)"$', hlo.split("FileLocations")[0].split("FunctionNames")[1], re.M))
    locations = {i: (f, fn, int(line), int(col)) for i, f, fn, line, col in re.findall(
        r"^(\d+) \{file_name_id=(\d+) function_name_id=(\d+) line=(\d+) end_line=\d+ column=(\d+)", hlo, re.M)}
    frames = dict(re.findall(r"^(\d+) \{file_location_id=(\d+)", hlo, re.M))
    frame_id = re.search(rf'op_name="{re.escape(op_name)}" stack_frame_id=(\d+)', hlo).group(1)
    file_id, function_id, line, column = locations[frames[frame_id]]
    return functions[function_id], files[file_id], line, column


# -- the functions, each written once for both numpy modules ------------------------------------------------------

def _sin_times_two(np_, lax_):
    def f(x):
        y = np_.sin(x)
        return y * 2.0
    return f


def _helper(np_, x):
    return np_.exp(x) - 1.0


def _calls_a_helper(np_, lax_):
    def f(x):
        return _helper(np_, x) * x
    return f


def _control_flow(np_, lax_):
    def f(x):
        y = lax_.cond(x[0] > 0, np_.sin, np_.cos, x)
        z = lax_.while_loop(lambda c: c[0] < 10.0, lambda c: c + 1.0, y)
        carry, ys = lax_.scan(lambda c, a: (c * a, np_.tanh(c)), z, np_.ones((2, 3), np.float32))
        return carry + ys[0]
    return f


# -- tests ----------------------------------------------------------------------------------------------------------

def test_compiled_hlo_names_ops_and_frames_as_jax():
    f_ours, f_jax = _sin_times_two(tnp, lax), _sin_times_two(jnp, jax.lax)
    ours = toolkit.jit(f_ours).lower(X).compile().as_text()
    theirs = jax.jit(f_jax).lower(X).compile().as_text()
    assert 'source_file="-"' not in ours  # the text round trip without locations is gone
    assert {"jit(f)/sin", "jit(f)/mul"} <= _op_names(ours) & _op_names(theirs)
    for name in ("jit(f)/sin", "jit(f)/mul"):
        function, file, line, column = _hlo_frames(ours, name)
        assert (function, file, line, column) == _hlo_frames(theirs, name)
        assert file == __file__ and function == "_sin_times_two.<locals>.f"


def test_locations_in_debug_text_match_jax():
    ours, theirs = _both(_sin_times_two)
    for name in ("jit(f)/sin", "jit(f)/mul"):
        assert ours[name][0] == theirs[name][0]  # innermost frame: function, file, line, column
    text = toolkit.jit(_sin_times_two(tnp, lax)).lower(X).as_text(debug_info=True)
    assert '"jit(f)/sin"' in text and "test_source_locations.py" in text
    assert "loc(" not in toolkit.jit(_sin_times_two(tnp, lax)).lower(X).as_text()


def test_callers_inside_the_trace_are_call_sites():
    ours, theirs = _both(_calls_a_helper)
    frames = ours["jit(f)/exp"]
    assert [fr[0] for fr in frames][:3] == ["_helper", "_calls_a_helper.<locals>.f", "_both"]
    assert frames[:2] == theirs["jit(f)/exp"][:2]
    # Both go on outside the trace, through this test and pytest, library frames left out alike.
    assert [fr[0] for fr in frames] == [fr[0] for fr in theirs["jit(f)/exp"]]
    assert [fr[1] for fr in frames] == [fr[1] for fr in theirs["jit(f)/exp"]]


def test_control_flow_regions_are_named_as_jax():
    ours, theirs = _both(_control_flow)
    shared = {"jit(f)/cond/branch_0_fun/cos", "jit(f)/cond/branch_1_fun/sin", "jit(f)/while/cond/lt",
              "jit(f)/while/body/add", "jit(f)/cond", "jit(f)/while"}
    assert shared <= set(ours) & set(theirs)
    # JAX's scan body is a private function named relative to its call (while/body/closed_call); ours is inline.
    assert "jit(f)/while/body/mul" in ours and "jit(f)/while/body/closed_call" in theirs
    for name in ("jit(f)/cond/branch_1_fun/sin", "jit(f)/while/cond/lt"):
        assert ours[name][0][1:] == theirs[name][0][1:]  # file, line, column (JAX's lambdas are named as ours)


def test_nested_jit_is_named_through_its_call():
    def make(np_, jit):
        inner = jit(lambda y: np_.cos(y))

        def outer(x):
            return inner(x) + 1.0
        return outer
    ours = toolkit.jit(make(tnp, toolkit.jit)).lower(X)
    theirs = jax.jit(make(jnp, jax.jit)).lower(X)
    assert "jit(outer)/jit(<lambda>)" in _located(ours.compiler_ir("stablehlo"))
    assert "jit(outer)/jit(<lambda>)" in _located(theirs.compiler_ir("stablehlo"))
    names = _op_names(ours.compile().as_text())
    assert "jit(outer)/jit(<lambda>)/cos" in names and "jit(outer)/jit(<lambda>)/cos" in _op_names(
        theirs.compile().as_text())


def test_custom_jvp_body_adds_no_name():
    @toolkit.custom_jvp
    def g(y):
        return tnp.sin(y)
    g.defjvp(lambda primals, tangents: (g(primals[0]), tangents[0]))
    located = _located(toolkit.jit(lambda x: g(x)).lower(X).compiler_ir("stablehlo"))
    assert "jit(<lambda>)/sin" in located  # as JAX: no custom_jvp_call entry


def test_ops_no_equation_makes_are_named_after_the_function():
    text = toolkit.jit(lambda x: x).lower(X).as_text(debug_info=True)
    assert 'loc("jit(<lambda>)"(#loc' in text  # over where the trace started, as JAX's


def test_polymorphic_compile_keeps_locations():
    spec = toolkit.ShapeDtypeStruct(toolkit.export.symbolic_shape("b"), np.float32)
    compiled = toolkit.jit(_sin_times_two(tnp, lax)).lower(spec).compile()
    assert {"jit(f)/sin", "jit(f)/mul"} <= _op_names(compiled.specialize(X).as_text())


def test_exported_module_carries_the_locations():
    exp = toolkit.export.export(toolkit.jit(_sin_times_two(tnp, lax)))(X)
    text = inspection.module_text(exp, locations=True)
    assert '"jit(f)/sin"' in text and "test_source_locations.py" in text


def test_source_info_records_columns_and_qualified_names():
    program = toolkit.jit(_sin_times_two(tnp, lax)).trace(X).program
    info = program.eqns[0].source_info
    assert isinstance(info, SourceInfo) and info.function == "_sin_times_two.<locals>.f"
    line = open(__file__).read().splitlines()[info.line - 1]
    assert line[info.column:info.end_column] == "np_.sin(x)" and info.end_line == info.line
    assert str(info) == f"{__file__}:{info.line}"
    # The callers outside the trace: this test (where it was traced), then pytest's frames, as JAX's.
    assert info.callers[0].function == "test_source_info_records_columns_and_qualified_names"
    assert not any(c.file.startswith(os.path.dirname(toolkit.__file__) + os.sep) for c in info.callers)


def test_source_info_outside_a_trace_is_the_first_user_frame():
    def called_from_here():
        return tracing.user_source_info()  # no builder: no callers

    def caller():
        return called_from_here()
    info = caller()
    # user_source_info skips two frames (itself and its caller, the binder): the first user frame is caller's.
    assert info is not None and info.function.endswith("caller") and info.callers == ()


def test_region_names():
    body, cond_program, branch = object(), object(), object()
    assert region_name("while", {"cond_program": cond_program, "body_program": body}, body) == "while/body"
    assert region_name("while", {"cond_program": cond_program, "body_program": body}, cond_program) == "while/cond"
    assert region_name("cond", {"branches": (object(), branch)}, branch) == "cond/branch_1_fun"
    assert region_name("scan", {"body": body}, body) == "while/body"
    assert region_name("custom_jvp_call", {"call": body}, body) == ""
    assert region_name("reduce_window", {"computation": body}, body) == "reduce_window"
    assert region_name("other", {"programs": [branch]}, branch) == "other/programs_0"
    assert region_name("other", {}, body) == "other"  # not found among the parameters: the primitive's name


def test_no_frame_cache_growth_for_one_call_site():
    def trace_three_times():
        for _ in range(3):
            toolkit.jit(_sin_times_two(tnp, lax)).trace(X)
    sizes = []
    for _ in range(2):  # one call site, so the frames outside the trace are the same too
        trace_three_times()
        sizes.append((len(source_locations._FRAME_INFO), len(source_locations._CHAINS),
                      len(source_locations._FRAME_TUPLES)))
    assert sizes[0] == sizes[1]


# -- transformations: names and lines as JAX's ----------------------------------------------------------------------

def _transformed(kind: str):
    def make(np_, lax_, t):
        def helper(x):
            return np_.sin(x) * 2.0
        cases = {
            "grad": lambda: t.grad(lambda x: np_.sum(np_.cos(helper(x)) * x)),
            "vmap": lambda: t.vmap(lambda x: np_.sin(x) * x),
            "vmap_grad": lambda: t.vmap(t.grad(lambda x: np_.sin(x) * x)),
            "grad_vmap": lambda: t.grad(lambda x: np_.sum(t.vmap(np_.sin)(x))),
            "grad_cond": lambda: t.grad(lambda x: lax_.cond(x.sum() > 0, np_.sin, np_.cos, x).sum()),
            "jvp": lambda: (lambda x: t.jvp(np_.sin, (x,), (x,))),
            "grad_jit": lambda: t.grad(lambda x: np_.sum(t.jit(np_.sin)(x) * 2)),
        }
        return cases[kind]()
    return make


def _located_all(module: ir.Module) -> dict[str, set[tuple]]:
    """Op name -> the frames (as a tuple) of every op of that name."""
    found: dict[str, set[tuple]] = {}
    for op in _ops(module):
        name, frames = _name_and_frames(op.location)
        if name is not None and frames:
            found.setdefault(name, set()).add(tuple(frames))
    return found


def _both_transformed(kind: str):
    make = _transformed(kind)
    ours = _located_all(toolkit.jit(make(tnp, lax, toolkit)).lower(X).compiler_ir("stablehlo"))
    theirs = _located_all(jax.jit(make(jnp, jax.lax, jax)).lower(X).compiler_ir("stablehlo"))
    return ours, theirs


def _innermost_and_functions(frames: set[tuple]) -> set[tuple]:
    """(innermost frame, the functions of all frames): lines outside the function differ (_both_transformed)."""
    return {(f[0], tuple(fr[0] for fr in f)) for f in frames}


@pytest.mark.parametrize("kind, names", [
    ("grad", {"jit(<lambda>)/jvp()/sin", "jit(<lambda>)/jvp()/cos", "jit(<lambda>)/jvp()/mul",
              "jit(<lambda>)/transpose(jvp())/mul", "jit(<lambda>)/transpose(jvp())/broadcast_in_dim"}),
    ("vmap", {"jit(<lambda>)/vmap()/sin", "jit(<lambda>)/vmap()/mul"}),
    ("vmap_grad", {"jit(<lambda>)/vmap(jvp())/sin", "jit(<lambda>)/vmap(jvp())/cos",
                   "jit(<lambda>)/vmap(transpose(jvp()))/mul"}),
    ("grad_vmap", {"jit(<lambda>)/jvp(vmap())/cos", "jit(<lambda>)/transpose(jvp(vmap()))/mul"}),
    ("grad_cond", {"jit(<lambda>)/jvp()/cond", "jit(<lambda>)/transpose(jvp())/cond",
                   "jit(<lambda>)/transpose(jvp())/cond/branch_0_fun/neg",
                   "jit(<lambda>)/transpose(jvp())/cond/branch_1_fun/mul"}),
    ("jvp", {"jit(<lambda>)/jvp()/sin", "jit(<lambda>)/jvp()/cos", "jit(<lambda>)/jvp()/mul"}),
    ("grad_jit", {"jit(<lambda>)/jvp(jit(sin))", "jit(<lambda>)/transpose(jvp())/mul"}),
])
def test_transformations_name_ops_and_keep_the_users_lines_as_jax(kind, names):
    ours, theirs = _both_transformed(kind)
    assert names <= set(ours) & set(theirs)
    for name in names:
        # The innermost frame is the user's line that made the original op (not the line calling grad/vmap),
        # and the frames outside it are JAX's too. Toolkit's ops of one name are at lines JAX's are at
        # (its decompositions differ: it may make fewer or more ops of the name).
        assert _innermost_and_functions(ours[name]) & _innermost_and_functions(theirs[name]), name
        assert _innermost_and_functions(ours[name]) <= _innermost_and_functions(theirs[name]) | {
            f for f in _innermost_and_functions(ours[name]) if name.endswith("/mul")}, name


def test_transformed_jit_keeps_its_name():
    def f(x):
        return tnp.sum(tnp.sin(x))
    for transform in (toolkit.grad, toolkit.value_and_grad, toolkit.vmap, toolkit.jacfwd, toolkit.jacrev):
        assert transform(f).__name__ == "f"
    text = toolkit.jit(toolkit.grad(f)).lower(X).as_text(debug_info=True)
    assert "module @jit_f " in text and '"jit(f)/transpose(jvp())/' in text


def test_arguments_are_named_after_the_parameters_as_jax():
    def f(params, x, *rest, k=None):
        return params["w"] * x + rest[0] + k

    def jf(params, x, *rest, k=None):
        return params["w"] * x + rest[0] + k
    w = {"w": X}
    ours = toolkit.jit(f).lower(w, X, X, k=X).compiler_ir("stablehlo")
    theirs = jax.jit(jf).lower(w, X, X, k=X).compiler_ir("stablehlo")

    def names(module):
        main = next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == "main")
        return [ir.NameLoc(a.location).name_str for a in main.regions[0].blocks[0].arguments]
    assert names(ours) == names(theirs) == ["params['w']", "x", "rest[0]", "k"]


def test_parameter_paths_without_a_signature_and_with_var_keywords():
    from toolkit.jit_lowering import parameter_paths

    class NoSignature:
        fun = None
    assert parameter_paths(NoSignature(), ["args[0]", "k"]) == ["args[0]", "k"]

    class Wrapped:
        @staticmethod
        def fun(a, **options):
            return a
    assert parameter_paths(Wrapped(), ["args[0]['w']", "scale"]) == ["a['w']", "options['scale']"]


def test_ops_no_equation_makes_are_located_where_the_trace_started():
    ours = toolkit.jit(lambda x: x + 1.0).lower(X).compiler_ir("stablehlo")
    ret = list(next(iter(ours.body.operations)).regions[0].blocks[0].operations)[-1]
    name, frames = _name_and_frames(ret.location)
    assert name == "jit(<lambda>)" and frames[0][0] == "test_ops_no_equation_makes_are_located_where_the_trace_started"


def test_render_name_stack_as_jax():
    from jax._src import source_info_util as jsi
    cases = [(), (tracing.Transform("jvp"),), (tracing.Transform("transpose"), tracing.Transform("jvp")),
             (tracing.Transform("jvp"), tracing.Scope("jit(g)")), (tracing.Scope("a"), tracing.Transform("vmap"),
                                                                   tracing.Scope("b"), tracing.Scope("c"))]
    for stack in cases:
        theirs = jsi.NameStack(tuple(jsi.Transform(e.name) if isinstance(e, tracing.Transform) else jsi.Scope(e.name)
                                     for e in stack))
        assert tracing.render_name_stack(stack) == str(theirs)


def test_equation_context_sets_and_restores_the_name_stack_and_source():
    source = SourceInfo(__file__, 1, "somewhere", name_stack=(tracing.Scope("inner"),))
    assert tracing.current_name_stack() == ()
    with tracing.transform_name_stack("vmap"):
        with tracing.equation_context(source, "transpose", "jvp"):
            assert tracing.current_name_stack() == (tracing.Transform("vmap"), tracing.Transform("transpose"),
                                                    tracing.Transform("jvp"), tracing.Scope("inner"))
            program = toolkit.jit(lambda x: tnp.sin(x)).trace(X).program  # a new trace starts unnamed
            assert program.eqns[0].source_info.name_stack == ()
        assert tracing.current_name_stack() == (tracing.Transform("vmap"),)
        with tracing.equation_context(None):
            assert tracing.current_name_stack() == (tracing.Transform("vmap"),)
    assert tracing.current_name_stack() == ()


def test_eager_grad_still_works_under_the_contexts():
    g = toolkit.grad(lambda x: tnp.sum(tnp.sin(x) * x))(X)
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.sum(jnp.sin(x) * x))(X), rtol=1e-6)
