"""``toolkit.lax``'s functions take every keyword argument ``jax.lax`` 0.10.2's take, with JAX's meaning: calls by
JAX's parameter names give JAX's values (eagerly and under jit), ``mul(out_dtype=)``, ``dot(dimension_numbers=)``,
``all_gather(to=)`` and ``cond``/``switch``'s ``operand=`` as JAX's, with JAX's errors. (``out_sharding=``:
``tests/shard/test_lax_out_sharding_as_jax.py``.)"""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same_typed, raises_like

jax = pytest.importorskip("jax")
jlax = jax.lax

#: Keywords of jax.lax toolkit leaves out, and why.
NOT_TAKEN = {"scan": {"_split_transpose"}}  # JAX's private, experimental switch of scan's transpose


def _keywords(signature: inspect.Signature) -> set[str]:
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return {k for k, p in signature.parameters.items() if p.kind in kinds}


def test_every_keyword_of_jax_lax_is_taken():
    gaps = {}
    for name in dir(jlax):
        theirs = getattr(jlax, name)
        if name.startswith("_") or not callable(theirs) or isinstance(theirs, type) or not hasattr(lax, name):
            continue
        try:
            their_sig, our_sig = inspect.signature(theirs), inspect.signature(getattr(lax, name))
        except (TypeError, ValueError):
            continue
        if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in our_sig.parameters.values()):
            continue
        missing = _keywords(their_sig) - _keywords(our_sig) - NOT_TAKEN.get(name, set())
        if missing:
            gaps[name] = sorted(missing)
    assert not gaps


F = np.linspace(-0.9, 0.9, 6, dtype=np.float32).reshape(2, 3)
G = np.linspace(0.2, 1.7, 6, dtype=np.float32).reshape(2, 3)
INTS = np.array([[3, -7, 12], [0, 5, -1]], np.int32)
SHIFTS = np.array([[1, 2, 3], [0, 4, 1]], np.int32)
C = (F + 1j * G).astype(np.complex64)

UNARY_FLOAT = ["abs", "acos", "asin", "asinh", "atan", "atanh", "ceil", "cosh", "digamma", "erf", "erf_inv", "erfc",
               "floor", "is_finite", "lgamma", "neg", "sign", "sinh", "square"]
BINARY_FLOAT = ["add", "atan2", "complex", "div", "eq", "ge", "gt", "le", "lt", "max", "min", "mul", "ne", "pow",
                "rem", "sub"]
UNARY_INT = ["bitwise_not", "clz", "population_count"]
BINARY_INT = ["bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right_arithmetic",
              "shift_right_logical"]

# name -> call by JAX's keyword names (L: toolkit.lax or jax.lax); the values are the jitted function's arguments
KEYWORD_CALLS = {
    **{n: (lambda n: lambda L, f, g, i, s, c: getattr(L, n)(x=f))(n) for n in UNARY_FLOAT},
    "acosh": lambda L, f, g, i, s, c: L.acosh(x=g + 1),
    "real": lambda L, f, g, i, s, c: L.real(x=c),
    "imag": lambda L, f, g, i, s, c: L.imag(x=c),
    **{n: (lambda n: lambda L, f, g, i, s, c: getattr(L, n)(x=f, y=g))(n) for n in BINARY_FLOAT},
    **{n: (lambda n: lambda L, f, g, i, s, c: getattr(L, n)(x=i))(n) for n in UNARY_INT},
    **{n: (lambda n: lambda L, f, g, i, s, c: getattr(L, n)(x=i, y=s))(n) for n in BINARY_INT},
    "nextafter": lambda L, f, g, i, s, c: L.nextafter(x1=f, x2=g),
    "clamp": lambda L, f, g, i, s, c: L.clamp(min=np.float32(-0.5), x=f, max=np.float32(0.5)),
    "convert_element_type": lambda L, f, g, i, s, c: L.convert_element_type(operand=f, new_dtype=np.int32),
    "bitcast_convert_type": lambda L, f, g, i, s, c: L.bitcast_convert_type(operand=f, new_dtype=np.uint8),
    "argmax": lambda L, f, g, i, s, c: L.argmax(operand=f, axis=1, index_dtype=np.int32),
    "argmin": lambda L, f, g, i, s, c: L.argmin(operand=f, axis=0, index_dtype=np.int32),
    "reduce_sum": lambda L, f, g, i, s, c: L.reduce_sum(operand=f, axes=(1,)),
    "reduce_prod": lambda L, f, g, i, s, c: L.reduce_prod(operand=g, axes=(0, 1)),
    "reduce_max": lambda L, f, g, i, s, c: L.reduce_max(operand=f, axes=(0,)),
    "reduce_min": lambda L, f, g, i, s, c: L.reduce_min(operand=f, axes=(1,)),
    "reduce_and": lambda L, f, g, i, s, c: L.reduce_and(operand=i, axes=(1,)),
    "reduce_or": lambda L, f, g, i, s, c: L.reduce_or(operand=i, axes=(0,)),
    "reduce_xor": lambda L, f, g, i, s, c: L.reduce_xor(operand=i, axes=(0, 1)),
    "broadcast": lambda L, f, g, i, s, c: L.broadcast(operand=f, sizes=(2,)),
    "broadcast_in_dim": lambda L, f, g, i, s, c: L.broadcast_in_dim(operand=f[0], shape=(3, 4, 3),
                                                                    broadcast_dimensions=(2,)),
    "dynamic_slice": lambda L, f, g, i, s, c: L.dynamic_slice(operand=f, start_indices=(i[1, 1], 1),
                                                              slice_sizes=(1, 2)),
    "dynamic_update_slice": lambda L, f, g, i, s, c: L.dynamic_update_slice(operand=f, update=g[:1, :2],
                                                                            start_indices=(1, i[0, 0])),
    "pad": lambda L, f, g, i, s, c: L.pad(operand=f, padding_value=np.float32(9), padding_config=((1, 0, 1),
                                                                                                 (0, -1, 0))),
    "reshape": lambda L, f, g, i, s, c: L.reshape(operand=f, new_sizes=(3, 2), dimensions=(1, 0)),
    "rev": lambda L, f, g, i, s, c: L.rev(operand=f, dimensions=(1,)),
    "slice": lambda L, f, g, i, s, c: L.slice(operand=f, start_indices=(0, 1), limit_indices=(2, 3),
                                              strides=(1, 2)),
    "transpose": lambda L, f, g, i, s, c: L.transpose(operand=f, permutation=(1, 0)),
    "cond": lambda L, f, g, i, s, c: L.cond(i[0, 0] > 0, lambda v: v * 2, lambda v: -v, operand=f),
    "switch": lambda L, f, g, i, s, c: L.switch(i[0, 0], [lambda v: v + 1, lambda v: v * 3], operand=g),
    "dot": lambda L, f, g, i, s, c: L.dot(lhs=f, rhs=g.T, precision=L.Precision.HIGHEST,
                                          preferred_element_type=np.float32),
}


def _all_calls(L, *args):
    return {name: call(L, *args) for name, call in KEYWORD_CALLS.items()}


def test_calls_by_jax_keyword_names_give_jax_values():
    args = (F, G, INTS, SHIFTS, C)
    ours = toolkit.jit(lambda *a: _all_calls(lax, *a))(*args)
    theirs = jax.jit(lambda *a: _all_calls(jlax, *a))(*args)
    assert set(ours) == set(theirs)
    for name in theirs:
        assert_same_typed(ours[name], theirs[name], rtol=2e-6, atol=1e-7, what=name)


def test_eager_calls_by_keyword():
    for name in ("add", "clamp", "reshape", "reduce_sum", "convert_element_type"):
        call = KEYWORD_CALLS[name]
        assert_same_typed(call(lax, F, G, INTS, SHIFTS, C), call(jlax, F, G, INTS, SHIFTS, C), what=name)


def test_operand_keyword_with_positional_operands_is_jax_error():
    raises_like(lambda: lax.cond(True, lambda a, b: a, lambda a, b: b, F, operand=G),
                lambda: jlax.cond(True, lambda a, b: a, lambda a, b: b, F, operand=G))
    with pytest.raises(TypeError, match="if 'operand' keyword is passed then no positional operands"):
        lax.switch(0, [lambda a: a], F, operand=G)
    with pytest.raises(TypeError, match="if 'operand' keyword is passed then no positional operands"):
        jlax.switch(0, [lambda a: a], F, operand=G)


# --- mul(out_dtype=) ---------------------------------------------------------------------------------

I8 = np.array([100, -7, 127, -128], np.int8)
J8 = np.array([3, 50, 127, -128], np.int8)
H = np.array([1.5, -2.25, 3e4, 1e-3], np.float16)
W = np.array([2.5, 1e3, -7.0, 0.5], np.float32)

MUL_CASES = {
    "int8_to_int32": lambda L, i8, j8, h, w: L.mul(i8, j8, out_dtype=np.int32),  # no int8 overflow
    "mixed_to_float32": lambda L, i8, j8, h, w: L.mul(h, w, out_dtype=np.float32),
    "int_by_float": lambda L, i8, j8, h, w: L.mul(i8, w, out_dtype=np.float32),
    "to_float16": lambda L, i8, j8, h, w: L.mul(w, w, out_dtype=np.float16),
    "to_bool": lambda L, i8, j8, h, w: L.mul(i8, w, out_dtype=np.bool_),
    "none": lambda L, i8, j8, h, w: L.mul(w, w, out_dtype=None),
    "weak_scalars": lambda L, i8, j8, h, w: L.mul(2.0, 3, out_dtype=np.float32),
    "weak_and_strong": lambda L, i8, j8, h, w: L.mul(2.0, w, out_dtype=np.float32),
    "scalar_broadcasts": lambda L, i8, j8, h, w: L.mul(np.int8(3), i8, out_dtype=np.int16),
}


def test_mul_out_dtype_is_jax():
    args = (I8, J8, H, W)
    ours = toolkit.jit(lambda *a: {k: c(lax, *a) for k, c in MUL_CASES.items()})(*args)
    theirs = jax.jit(lambda *a: {k: c(jlax, *a) for k, c in MUL_CASES.items()})(*args)
    for name in MUL_CASES:
        assert_same_typed(ours[name], theirs[name], what=name)
    # eagerly, with Python scalars: a weak result only when both operands are weak
    assert_same_typed(lax.mul(2.0, 3, out_dtype=np.float32), jlax.mul(2.0, 3, out_dtype=np.float32))
    assert_same_typed(lax.mul(I8, J8, out_dtype=np.int32), jlax.mul(I8, J8, out_dtype=np.int32))


@pytest.mark.x64
def test_mul_out_dtype_float64():
    assert_same_typed(lax.mul(W, W, out_dtype=np.float64), jlax.mul(W, W, out_dtype=np.float64))
    assert_same_typed(lax.mul(I8, W, out_dtype=np.int64), jlax.mul(I8, W, out_dtype=np.int64))


def test_mul_out_dtype_float64_without_x64_is_float32():
    assert_same_typed(lax.mul(W, W, out_dtype=np.float64), jlax.mul(W, W, out_dtype=np.float64))


def test_mul_out_dtype_gradient_and_vmap():
    def loss(L):
        return lambda a, b: L.reduce_sum(L.mul(a, b, out_dtype=np.float32), (0,))
    w2 = W[::-1].copy()
    ours = toolkit.grad(loss(lax), argnums=(0, 1))(W, w2)
    theirs = jax.grad(loss(jlax), argnums=(0, 1))(W, w2)
    for o, t in zip(ours, theirs):
        assert_same_typed(o, t)
    ours = toolkit.vmap(lambda a: lax.mul(a, np.int8(3), out_dtype=np.int32))(I8)
    theirs = jax.vmap(lambda a: jlax.mul(a, np.int8(3), out_dtype=np.int32))(I8)
    assert_same_typed(ours, theirs)


BF_X = np.linspace(-3.1, 2.9, 24, dtype=np.float32).astype(jax.numpy.bfloat16)
BF_Y = np.linspace(1.7, -0.3, 24, dtype=np.float32).astype(jax.numpy.bfloat16)
F16 = np.linspace(-2.3, 5.1, 24, dtype=np.float16)
F32 = np.linspace(0.11, 9.7, 24, dtype=np.float32)
I8_24 = np.arange(-12, 12, dtype=np.int8) * 9

# name -> (loss of L, its float operands' arguments); every loss scales the product by 1.37, so the cotangent
# is not a power of two and JAX's transpose (ct and the coefficient converted to the operand's dtype, then one
# rounding) differs from converting then multiplying in the operand's dtype.
MUL_GRAD_CASES = {
    "bf16_to_f32": (lambda L: lambda a, b: L.mul(a, b, out_dtype=np.float32), (BF_X, BF_Y)),
    "f16_by_f32_to_f32": (lambda L: lambda a, b: L.mul(a, b, out_dtype=np.float32), (F16, F32)),
    "f32_to_bf16": (lambda L: lambda a, b: L.mul(a, b, out_dtype=jax.numpy.bfloat16), (F32, F32[::-1].copy())),
    "bf16_by_int8_to_f32": (lambda L: lambda a: L.mul(a, I8_24, out_dtype=np.float32), (BF_X,)),
}


def _assert_same_bits(ours, theirs, what):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (what, ours.dtype, theirs.dtype)
    assert ours.tobytes() == theirs.tobytes(), (what, ours, theirs)


def test_mul_out_dtype_gradients_are_jax_bit_for_bit():
    """JAX's JVP (mul of the tangent with out_dtype) and transpose (mul with out_dtype the operand's dtype):
    gradients, JVPs and vmapped gradients bit-identical, in one jit each."""
    def everything(L, grad, jvp, vmap):
        def run(*args):
            out = {}
            at = 0
            for name, (product, operands) in MUL_GRAD_CASES.items():
                xs = args[at:at + len(operands)]
                at += len(operands)
                loss = (lambda f: lambda *a: L.reduce_sum(f(*a).astype(np.float32) * np.float32(1.37), (0,)))(
                    product(L))
                out[name + "/grad"] = grad(loss, argnums=tuple(range(len(xs))))(*xs)
                out[name + "/jvp"] = jvp(product(L), xs, tuple(x[::-1] for x in xs))
                out[name + "/vmap_grad"] = vmap(grad(lambda *a: L.reduce_sum(
                    L.mul(*a, out_dtype=np.float32) * np.float32(1.37), (0,))))(
                    *(x.reshape(4, 6) for x in xs), *([] if len(xs) == 2 else [I8_24.reshape(4, 6)]))
            return out
        return run
    args = [x for _, operands in MUL_GRAD_CASES.values() for x in operands]
    ours = toolkit.jit(everything(lax, toolkit.grad, toolkit.jvp, toolkit.vmap))(*args)
    theirs = jax.jit(everything(jlax, jax.grad, jax.jvp, jax.vmap))(*args)
    ours_leaves, ours_tree = toolkit.tree_util.tree_flatten(ours)
    theirs_leaves, theirs_tree = jax.tree_util.tree_flatten(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for i, (o, t) in enumerate(zip(ours_leaves, theirs_leaves)):
        _assert_same_bits(o, t, what=i)


def test_mul_out_dtype_lowers_as_jax():
    # out_dtype is a parameter of mul: a convert of each operand (even to its own type), then the multiply
    def product(L, dtype):
        def mul_out(x, y):
            return L.mul(x, y, out_dtype=dtype)
        return mul_out
    for x, y, dtype in ((BF_X, BF_Y, np.float32), (I8_24, F32, np.int32), (F32, F32, np.float32),
                        (I8_24, F32, np.bool_)):
        ours = toolkit.jit(product(lax, dtype)).lower(x, y).as_text()
        theirs = jax.jit(product(jlax, dtype)).lower(x, y).as_text()
        assert ours == theirs, (dtype, ours, theirs)


def test_mul_out_dtype_errors_are_jax():
    raises_like(lambda: lax.mul(np.array([True]), W[:1], out_dtype=np.float32),
                lambda: jlax.mul(np.array([True]), W[:1], out_dtype=np.float32))
    for bad in ("foo", object()):
        with pytest.raises(TypeError):
            jlax.mul(W, W, out_dtype=bad)
        with pytest.raises(TypeError):
            lax.mul(W, W, out_dtype=bad)


# --- dot(dimension_numbers=) ----------------------------------------------------------------------------

A3 = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
B3 = np.linspace(1, -2, 40, dtype=np.float32).reshape(2, 4, 5)
DOT_CASES = {
    "batched": lambda L, a, b: L.dot(a, b, dimension_numbers=(((2,), (1,)), ((0,), (0,)))),
    "lists": lambda L, a, b: L.dot(a, b, dimension_numbers=([[2], [1]], [[0], [0]]), precision="highest"),
    "outer_contract_two": lambda L, a, b: L.dot(a, a, dimension_numbers=(((1, 2), (1, 2)), ((), ()))),
    "default_matrix": lambda L, a, b: L.dot(a[0], b[0], dimension_numbers=None),
    "default_vector": lambda L, a, b: L.dot(a[0, 0], b[0]),
    "preferred": lambda L, a, b: L.dot(a[0].astype(np.int8) if L is jlax else L.convert_element_type(a[0], np.int8),
                                       (b[0] * 4).astype(np.int8) if L is jlax else
                                       L.convert_element_type(b[0] * 4, np.int8),
                                       preferred_element_type=np.int32),
}


def test_dot_dimension_numbers_is_jax():
    ours = toolkit.jit(lambda a, b: {k: c(lax, a, b) for k, c in DOT_CASES.items()})(A3, B3)
    theirs = jax.jit(lambda a, b: {k: c(jlax, a, b) for k, c in DOT_CASES.items()})(A3, B3)
    for name in DOT_CASES:
        assert_same_typed(ours[name], theirs[name], rtol=1e-6, atol=1e-6, what=name)
    dn = (((2,), (1,)), ((0,), (0,)))
    ours_grad = toolkit.grad(lambda a: lax.reduce_sum(lax.dot(a, B3, dimension_numbers=dn), (0, 1, 2)))(A3)
    their_grad = jax.grad(lambda a: jlax.reduce_sum(jlax.dot(a, B3, dimension_numbers=dn), (0, 1, 2)))(A3)
    assert_same_typed(ours_grad, their_grad, rtol=1e-6)


def test_dot_without_dimension_numbers_errors_are_jax():
    for a, b in ((A3, B3), (A3[0], B3[0, :3]), (np.float32(2), B3[0])):
        raises_like(lambda: lax.dot(a, b), lambda: jlax.dot(a, b))
    with pytest.raises(TypeError):
        jlax.dot(A3[0], B3[0], "highest")  # precision is keyword-only, as JAX's
    with pytest.raises(TypeError):
        lax.dot(A3[0], B3[0], "highest")


# --- all_gather(to=) ----------------------------------------------------------------------------------


def test_all_gather_to_varying_is_the_default():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for tiled in (False, True):
        ours = toolkit.vmap(lambda v: lax.all_gather(v, "i", tiled=tiled, to="varying"), axis_name="i")(x)
        theirs = jax.vmap(lambda v: jlax.all_gather(v, "i", tiled=tiled, to="varying"), axis_name="i")(x)
        assert_same_typed(ours, theirs)


def test_all_gather_to_errors_are_jax():
    x = np.ones(3, np.float32)
    messages = []
    for L in (lax, jlax):
        with pytest.raises(ValueError) as e:
            L.all_gather(x, "i", to="bogus")
        messages.append(str(e.value))
    # JAX prints a set: its order changes between processes, its content does not
    ours, theirs = (m.split(": ", 1) for m in messages)
    assert ours[0] == theirs[0] == "Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are"
    assert ast.literal_eval(ours[1]) == ast.literal_eval(theirs[1]) == {"varying", "reduced", "invarying"}
    for to in ("invarying", "reduced"):
        raises_like(lambda: lax.all_gather(x, "i", axis_index_groups=[[0]], to=to),
                    lambda: jlax.all_gather(x, "i", axis_index_groups=[[0]], to=to))
    # 'invarying' is JAX's all_gather_invariant (tests/shard/test_all_gather_invariant_as_jax.py): an unbound
    # axis is JAX's NameError; 'reduced' needs JAX's reduced types, which toolkit lacks
    for L in (lax, jlax):  # the same type; toolkit's message says where to bind the axis
        with pytest.raises(NameError, match="unbound axis name: i"):
            L.all_gather(x, "i", to="invarying")
    with pytest.raises(NotImplementedError, match="all_gather\\(to='reduced'\\) is not supported"):
        lax.all_gather(x, "i", to="reduced")
