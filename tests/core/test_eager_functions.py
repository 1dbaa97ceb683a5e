"""Eager control flow and batching rules find their trace and executable again (toolkit.core.eager_functions)."""

import numpy as np
import pytest

import toolkit
import toolkit.lax as tlax
import toolkit.numpy as tnp
from toolkit.core import eager_functions
from toolkit.core.eager_functions import closure_key, stable


def _closure(value):
    return lambda x: x + value


def test_equal_closures_have_one_key_and_different_ones_differ():
    assert closure_key(_closure(2)) == closure_key(_closure(2))
    assert closure_key(_closure((1, "a"))) == closure_key(_closure((1, "a")))
    for a, b in [(2, 3), (1, True), (0.0, -0.0), (1, 1.0), (np.float32(1), np.float64(1)), ((1,), (True,)),
                 (len, abs)]:
        assert closure_key(_closure(a)) != closure_key(_closure(b)), (a, b)
    assert closure_key(_closure(float("nan"))) == closure_key(_closure(float("nan")))  # the same bytes
    assert closure_key(lambda x: x) != closure_key(lambda x: x)  # two code objects


@pytest.mark.parametrize("value", [[1], {"a": 1}, {1}, np.ones(2), bytearray(b"x"), ([1],)],
                         ids=["list", "dict", "set", "ndarray", "bytearray", "tuple-of-list"])
def test_mutable_or_unhashable_cells_are_not_keyed(value):
    fun = _closure(value)
    assert closure_key(fun) is None
    assert stable(fun) is fun


def test_defaults_are_part_of_the_key_and_builtins_have_none():
    def make(k):
        def f(x, k=k):
            return x * k
        return f
    assert closure_key(make(2)) == closure_key(make(2)) != closure_key(make(3))
    assert closure_key(len) is None


def test_stable_returns_the_first_function_and_forgets_the_least_recently_used(monkeypatch):
    monkeypatch.setattr(eager_functions, "MAX_ENTRIES", 2)
    eager_functions.clear()
    first = _closure(1)
    assert stable(first) is first and stable(_closure(1)) is first
    stable(_closure(2))
    assert stable(_closure(1)) is first  # used again: the newest
    stable(_closure(3))  # forgets 2, the least recently used
    two = _closure(2)
    assert stable(two) is two
    eager_functions.clear()
    again = _closure(1)
    assert stable(again) is again


def _body(c, x):
    return c + x, c * x


def _cond_fun(v):
    return v < 5


def _body_fun(v):
    return v + 1


def _add(a, b):
    return a + b


X = np.linspace(0.1, 0.9, 6, dtype=np.float32)


@pytest.mark.parametrize("name, run", [
    ("scan", lambda: tlax.scan(_body, 0.0, X)),
    ("while_loop", lambda: tlax.while_loop(_cond_fun, _body_fun, 0.0)),
    ("cond", lambda: tlax.cond(True, tnp.sin, tnp.cos, X)),
    ("switch", lambda: tlax.switch(1, [tnp.sin, tnp.cos], X)),
    ("reduce_window", lambda: tlax.reduce_window(X, 0.0, tlax.add, (2,), (1,), "VALID")),
    ("reduce", lambda: tlax.reduce(X, 0.0, _add, (0,))),
])
def test_an_eager_op_with_the_same_functions_compiles_once(compilations, name, run):
    first = run()
    count = compilations[0]
    assert count >= 1
    second = run()
    assert compilations[0] == count, name
    for a, b in zip(toolkit.tree.leaves(first), toolkit.tree.leaves(second)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_an_eager_vmap_of_a_jitted_function_compiles_once(compilations):
    vf = toolkit.vmap(toolkit.jit(lambda v: tnp.sum(tnp.sin(v))))
    first = vf(X[None])
    count = compilations[0]
    np.testing.assert_array_equal(np.asarray(vf(X[None])), np.asarray(first))
    assert compilations[0] == count


def test_a_body_reading_a_changed_global_sees_its_first_trace_as_in_jax():
    jax = pytest.importorskip("jax")
    scale = {"k": 1.0}  # read by the bodies at trace time, as a global would be

    def body(c, x):
        return c + scale["k"] * x, None

    def loop_cond(v):
        return v < 3

    def loop_body(v):
        return v + scale["k"]

    def run(lib):
        scale["k"] = 1.0
        first = (lib.lax.scan(body, 0.0, np.ones(3, np.float32))[0], lib.lax.while_loop(loop_cond, loop_body, 0.0))
        scale["k"] = 5.0
        second = (lib.lax.scan(body, 0.0, np.ones(3, np.float32))[0], lib.lax.while_loop(loop_cond, loop_body, 0.0))
        return [float(v) for v in first + second]

    ours, theirs = run(toolkit), run(jax)
    assert ours == theirs == [3.0, 3.0, 3.0, 3.0]  # the same functions: traced once, in both
