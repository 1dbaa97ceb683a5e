"""lax.composite (toolkit/lax/composites.py): lowering, values and errors against JAX in the same run."""

from functools import partial

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax

from _oracle import assert_same

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def _ops(L, np_):
    tanh = L.composite(lambda x: np_.tanh(x), name="my.tanh")

    @partial(L.composite, name="my.scale", version=2)
    def scale(x, *, factor, axis, **others):
        return x * factor

    @partial(L.composite, name="my.pair")
    def pair(x, y):
        return {"s": x + y, "d": x - y}

    def f(x):
        out = pair(scale(tanh(x), factor=2.0, axis=np.int32(1), flag=True, tag="t", table=np.arange(3)), x)
        return out["s"] * out["d"]
    return f


def _composite_lines(text):
    return [s.strip() for s in text.splitlines() if "stablehlo.composite" in s or "func.func private" in s]


def test_lowering_matches_jax():
    ours = toolkit.jit(_ops(lax, tnp)).lower(X).as_text()
    theirs = jax.jit(_ops(jax.lax, jnp)).lower(X).as_text()
    assert _composite_lines(ours) == _composite_lines(theirs)


ATTRIBUTES = {
    "tuple": (1, 2), "nested": (((1,), (0,)), ((), ())), "list": [1.5, "x"], "empty": [], "dict": {"k": 3, "a": (1.5,)},
    "f32": np.float32(2), "int": 3, "bool": True, "np_bool": np.bool_(True), "dtype": np.dtype(np.float32),
    "bf16": np.dtype(jnp.bfloat16), "zero_d": np.array(2.0, np.float32), "array": np.arange(3, dtype=np.int32),
    "bytes": b"xy",
}


@pytest.mark.parametrize("kind", sorted(ATTRIBUTES))
def test_attribute_kinds_lower_as_jax(kind):
    """JAX's attribute table: sequences are array attributes, dicts dictionaries, dtypes types, 0-d arrays dense."""
    texts = []
    for L, jit in ((lax, toolkit.jit), (jax.lax, jax.jit)):
        op = L.composite(lambda a, **attributes: a, name="my.attr")
        texts.append(_composite_lines(jit(lambda a: op(a, value=ATTRIBUTES[kind])).lower(X).as_text()))
    assert texts[0] == texts[1]


def test_complex_attributes_are_refused_like_jax():
    for L, jit in ((lax, toolkit.jit), (jax.lax, jax.jit)):
        op = L.composite(lambda a, **attributes: a, name="my.attr")
        with pytest.raises(TypeError, match="Unsupported scalar attribute type"):
            jit(lambda a: op(a, value=1j)).lower(X)


def test_values_and_vmap():
    assert_same(toolkit.jit(_ops(lax, tnp))(X), jax.jit(_ops(jax.lax, jnp))(X), rtol=1e-6)
    assert_same(_ops(lax, tnp)(X), jax.jit(_ops(jax.lax, jnp))(X), rtol=1e-6)
    tanh = lax.composite(lambda x: tnp.tanh(x), name="my.tanh")
    assert_same(toolkit.vmap(tanh)(X), np.tanh(X), rtol=1e-6)
    text = toolkit.jit(toolkit.vmap(tanh)).lower(X).as_text()
    assert 'stablehlo.composite "my.tanh"' in text and "tensor<2x3xf32>" in text


def test_constants_are_fine_traced_captures_are_refused_like_jax():
    w = np.float32(3.0)
    f = lambda L: lambda x: L.composite(lambda y: y * 2.0 + w, name="my.affine")(x)  # noqa: E731
    assert_same(toolkit.jit(f(lax))(X), jax.jit(f(jax.lax))(X))
    g = lambda L: lambda x, v: L.composite(lambda y: y * v, name="my.scale")(x)  # noqa: E731
    with pytest.raises(jax.errors.UnexpectedTracerError, match="Found a JAX Tracer as a constant"):
        jax.jit(g(jax.lax))(X, np.float32(2.0))
    with pytest.raises(Exception, match="Found a JAX Tracer as a constant"):
        toolkit.jit(g(lax))(X, np.float32(2.0))


def test_differentiation_is_refused_like_jax():
    tanh = lax.composite(lambda x: tnp.tanh(x), name="my.tanh")
    jtanh = jax.lax.composite(lambda x: jnp.tanh(x), name="my.tanh")
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        jax.grad(lambda x: jtanh(x).sum())(X)
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        toolkit.grad(lambda x: tanh(x).sum())(X)


def test_errors():
    with pytest.raises(TypeError, match="decomposition must be callable"):
        lax.composite(3, name="x")
    with pytest.raises(TypeError, match="name must be a non-empty string"):
        lax.composite(lambda x: x, name="")
    with pytest.raises(Exception, match="Found a JAX Tracer as an attribute"):
        toolkit.jit(lambda x: lax.composite(lambda y, *, k: y, name="c")(x, k=x))(X)
    with pytest.raises(TypeError, match="attribute 'k' holds a"):
        lax.composite(lambda y, *, k: y, name="c")(X, k=object())
