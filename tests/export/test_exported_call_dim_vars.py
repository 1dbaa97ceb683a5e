"""``Exported.call`` solves dimension variables from the argument shapes as JAX does.

A variable may occur only inside expressions (an input of shape ``2*k``, or
``b + 4``); JAX's solver (linear equations in one unknown, repeated) finds
it, and every assumption — an exact division, ``k >= 1``, the dimensions not
used to solve, the scope's constraints — is checked when the call is traced.
JAX is the oracle: the same blob is called by both sides.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import export as jexport  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit import export  # noqa: E402
from toolkit.core import shape_poly  # noqa: E402
from toolkit.core.avals import ShapedArray  # noqa: E402

F32 = np.float32


def _jax_blob(fun, *specs: str, constraints=()):
    """JAX's serialized export of ``fun`` over float32 inputs of the symbolic ``specs``."""
    scope = jexport.SymbolicScope(constraints)
    args = [jax.ShapeDtypeStruct(jexport.symbolic_shape(s, scope=scope), F32) for s in specs]
    return bytes(jexport.export(jax.jit(fun))(*args).serialize())


def _both(blob: bytes, *args):
    """(toolkit's result, JAX's result) of calling the blob on ``args``."""
    ours = export.deserialize(blob).call(*args)
    theirs = jexport.deserialize(blob).call(*args)
    return ours, theirs


def _assert_same(ours, theirs):
    ours, theirs = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert np.asarray(a).shape == np.asarray(b).shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_variable_inside_a_multiple():
    # k occurs only as 2*k: k = d // 2, with a check that d is even.
    blob = _jax_blob(lambda x: jnp.split(x, 2), "2*k")
    x = np.arange(10, dtype=F32)
    ours, theirs = _both(blob, x)
    _assert_same(ours, theirs)
    assert [a.shape for a in ours] == [(5,), (5,)]
    assert [a.str_short() for a in export.deserialize(blob).out_avals] == ["f32[k]", "f32[k]"]


def test_variable_with_an_offset_and_inside_jit():
    blob = _jax_blob(lambda x: (x[:2], x[2:] * 2), "b + 4")
    exp = export.deserialize(blob)
    x = np.arange(16, dtype=F32)
    _assert_same(exp.call(x), jexport.deserialize(blob).call(x))
    got = toolkit.jit(lambda x: exp.call(x)[1].sum())(x)
    np.testing.assert_allclose(np.asarray(got), (x[2:] * 2).sum())


def test_variables_solved_one_after_another():
    # a from args[0].shape[0]; then b from a + b; then args[1] is checked against b.
    blob = _jax_blob(lambda x, y: x[:, :1] + y.sum(), "a, a + b", "b")
    x, y = np.ones((3, 10), F32), np.ones((7,), F32)
    _assert_same(*_both(blob, x, y))
    sol = export.call.dim_var_solution(export.deserialize(blob))
    assert sol.dim_vars == ("a", "b")
    assert sol.values([(3, 10), (7,)]) == {"a": 3, "b": 7}


def test_division_that_is_not_exact_is_an_error_naming_variable_argument_and_values():
    blob = _jax_blob(lambda x: jnp.split(x, 2), "2*k + 4")
    exp = export.deserialize(blob)
    x = np.arange(7, dtype=F32)
    with pytest.raises(ValueError, match="Division had remainder 1 when computing the value of 'k'") as ours:
        exp.call(x)
    message = str(ours.value)
    assert "args[0].shape[0] (= 7)" in message and "'2*k + 4'" in message and "3 is not a multiple of 2" in message
    with pytest.raises(ValueError, match="Division had remainder 1 when computing the value of 'k'"):
        jexport.deserialize(blob).call(x)  # JAX refuses the same call


def test_variable_below_one_is_an_error():
    blob = _jax_blob(lambda x: x * 2, "b + 4")
    with pytest.raises(ValueError, match=r"Expected value >= 1 for dimension variable 'b'.*'b' = -1 from "
                                         r"specification 'b \+ 4' for dimension args\[0\].shape\[0\] \(= 3\)"):
        export.deserialize(blob).call(np.ones(3, F32))
    with pytest.raises(ValueError, match="Expected value >= 1 for dimension variable 'b'"):
        jexport.deserialize(blob).call(np.ones(3, F32))


def test_inconsistent_dimensions_are_an_error():
    blob = _jax_blob(lambda x, y: x + y, "2*k", "2*k")
    bad = (np.ones(4, F32), np.ones(6, F32))
    with pytest.raises(ValueError, match=r"inconsistency between dimension size args\[1\].shape\[0\] \(= 6\) and "
                                         r"the specification '2\*k' \(= 4\)"):
        export.deserialize(blob).call(*bad)
    with pytest.raises(ValueError, match="Found inconsistency between dimension size args"):
        jexport.deserialize(blob).call(*bad)


def test_constraints_are_checked_when_known():
    # JAX does not serialize constraints; a toolkit export still has them in its scope.
    (a,) = shape_poly.symbolic_shape("a", constraints=["a >= 3"])
    exp = export.export(toolkit.jit(lambda x: x[::2]))(toolkit.ShapeDtypeStruct((2 * a,), F32))
    np.testing.assert_allclose(np.asarray(exp.call(np.arange(6, dtype=F32))), [0, 2, 4])
    with pytest.raises(ValueError, match="Constraint 'a >= 3' is not satisfied"):
        exp.call(np.arange(4, dtype=F32))


def test_toolkit_export_with_expression_inputs_runs_in_jax():
    # The wrapper @main toolkit writes computes k from 2*k + 4 with ops jaxlib's refinement folds.
    (k,) = shape_poly.symbolic_shape("k")
    exp = export.export(toolkit.jit(lambda x, y: tnp.sin(x[:3]) + y[:3]))(
        toolkit.ShapeDtypeStruct((2 * k + 4,), F32), toolkit.ShapeDtypeStruct((k + 2,), F32))
    x, y = np.arange(10, dtype=F32), np.arange(5, dtype=F32)
    ours = exp.call(x, y)
    theirs = jexport.deserialize(bytes(exp.serialize())).call(x, y)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    with pytest.raises(ValueError, match="Division had remainder 1 when computing the value of 'k'"):
        jax.jit(jexport.deserialize(bytes(exp.serialize())).call)(np.ones(11, F32), y)


def test_polymorphic_caller_of_a_polymorphic_export():
    # Calling with symbolic shapes: the solution is evaluated in the caller's scope.
    inner = export.deserialize(_jax_blob(lambda x: jnp.split(x, 2), "2*k"))
    (b,) = shape_poly.symbolic_shape("b")
    outer = export.export(toolkit.jit(lambda x: inner.call(tnp.concatenate([x, x]))[0] * 2))(
        toolkit.ShapeDtypeStruct((b,), F32))
    assert [a.str_short() for a in outer.out_avals] == ["f32[b]"]
    x = np.arange(3, dtype=F32)
    np.testing.assert_allclose(np.asarray(outer.call(x)), x * 2)
    np.testing.assert_allclose(np.asarray(jexport.deserialize(bytes(outer.serialize())).call(x)), x * 2)


def test_unsolvable_variables_are_named():
    a, b = shape_poly.symbolic_shape("a, b")
    with pytest.raises(ValueError, match=r"Cannot solve for the dimension variables 'a', 'b'.*"
                                         r"args\[0\].shape = \(a\*b,\).*'a\*b' for dimension args\[0\].shape\[0\]"):
        shape_poly.solve_dim_vars([ShapedArray((a * b,), F32)], ["args[0]"])
    with pytest.raises(ValueError, match="Cannot solve for the dimension variables 'a', 'b'"):
        export.export(toolkit.jit(lambda x: x))(toolkit.ShapeDtypeStruct((a * b,), F32))


def test_solution_is_symbolic_in_the_argument_dimensions():
    (k,) = shape_poly.symbolic_shape("k")
    sol = shape_poly.solve_dim_vars([ShapedArray((2 * k + 4,), F32)], ["args[0]"])
    assert str(sol.solution["k"]) == "floordiv(args[0].shape[0] - 4, 2)"
    assert sol.dimensions == (("args[0].shape[0]", 0, 0),)
    assert [c.comparison for c in sol.checks] == ["==", ">="]
    assert sol.values([(10,)]) == {"k": 3}
    template, values = sol.checks[0].message_template(sol.synthetic_env([(7,)]))
    assert "{0}" in template and values[0] == 1


CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "corpora", "jax_poly_harness")
CORPUS_CASES = ["random_uniform_even_2_threefry_non_partitionable", "random_uniform_even_2_threefry_partitionable",
                "random_uniform_even_2_unsafe_rbg", "jnp_split_idx_tuple_ct", "jnp_split_idx_tuple_poly",
                "jnp_split_idx_ct"]


@pytest.mark.parametrize("name", CORPUS_CASES)
def test_jax_poly_harness_cases(name):
    """Cases of JAX's shape-polymorphism harness whose variables occur only inside expressions."""
    if not os.path.isdir(CORPUS):
        pytest.skip("the jax_poly_harness corpus is not present")
    import sys
    sys.path.insert(0, CORPUS)
    import corpus_common as cc
    with open(os.path.join(CORPUS, "manifest.json")) as f:
        case = {c["name"]: c for c in json.load(f)["cases"]}[name]
    with open(os.path.join(CORPUS, case["files"]["bin"]), "rb") as f:
        exp = export.deserialize(f.read())
    arrays = cc.load_case_arrays(CORPUS, case)
    run = case["runs"][0]
    args, kwargs = cc.unflatten(case["in_structure"], cc.run_arrays(arrays, "r0", "in", run["n_in"]))
    outs = cc.run_arrays(arrays, "r0", "out", run["n_out"])
    got = jax.tree_util.tree_leaves(exp.call(*args, **kwargs))
    assert len(got) == len(outs)
    for i, (a, b) in enumerate(zip(got, outs)):
        assert not cc.compare_arrays(np.asarray(a), b, scale=case["tol_scale"], what=f"out{i}")


def test_calling_an_export_with_unsolvable_variables_names_them_and_the_shapes():
    # A hand-built Exported (neither JAX nor toolkit export such shapes).
    import dataclasses

    base = export.deserialize(_jax_blob(lambda x: x * 2, "b"))
    a, b = shape_poly.symbolic_shape("a, b")
    odd = dataclasses.replace(base, in_avals=(ShapedArray((a * b,), F32),), out_avals=(ShapedArray((a * b,), F32),))
    with pytest.raises(ValueError, match=r"Cannot call the exported function .*Cannot solve for the dimension "
                                         r"variables 'a', 'b'.*The call's arguments have: args\[0\].shape = \(6,\)"):
        odd.call(np.ones(6, F32))
