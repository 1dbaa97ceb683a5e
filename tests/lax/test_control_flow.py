"""cond, switch, while_loop, fori_loop and scan: results vs numpy, program shape, lowering, errors;
associative_scan and map vs jax.lax."""

import collections

import numpy as np
import pytest
from _oracle import assert_same, raises_like

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.core import pytrees

RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# --- cond / switch ------------------------------------------------------------


def test_cond_selects_branch_at_run_time():
    f = toolkit.jit(lambda p, x: lax.cond(p, lambda v: v * 2, lambda v: v - 1, x))
    x = f32(3)
    np.testing.assert_allclose(f(True, x), x * 2)
    np.testing.assert_allclose(f(False, x), x - 1)


def test_cond_is_one_equation_and_lowers_to_case():
    f = lambda p, x: lax.cond(p, lambda v: tnp.sin(v), lambda v: tnp.cos(v), x)
    traced = toolkit.jit(f).trace(True, f32(2))
    assert [e.primitive.name for e in traced.program.eqns] == ["convert_element_type", "cond"]
    text = toolkit.jit(f).lower(True, f32(2)).as_text()
    assert "stablehlo.case" in text and "stablehlo.sine" in text and "stablehlo.cosine" in text


def test_cond_pytree_operands_and_outputs():
    Pair = collections.namedtuple("Pair", "a b")

    def f(p, tree):
        return lax.cond(p, lambda t: {"s": t.a + t.b, "d": (t.a, t.b * 2)},
                        lambda t: {"s": t.a - t.b, "d": (t.b, t.a)}, tree)

    a, b = f32(4), f32(4)
    out = toolkit.jit(f)(True, Pair(a, b))
    np.testing.assert_allclose(out["s"], a + b, rtol=1e-6)
    np.testing.assert_allclose(out["d"][1], b * 2)
    out = toolkit.jit(f)(False, Pair(a, b))
    np.testing.assert_allclose(out["d"][0], b)


def test_cond_captures_outer_values_and_constants():
    w = f32(3)
    const = np.arange(3, dtype=np.float32)

    def f(p, x, y):
        return lax.cond(p, lambda v: v * y + const, lambda v: v - w, x)

    x, y = f32(3), f32(3)
    np.testing.assert_allclose(toolkit.jit(f)(True, x, y), x * y + const, rtol=1e-6)
    np.testing.assert_allclose(toolkit.jit(f)(False, x, y), x - w, rtol=1e-6)
    program = toolkit.jit(f).trace(True, x, y).program
    cond_eqn = [e for e in program.eqns if e.primitive.name == "cond"][0]
    branches = cond_eqn.params["branches"]
    # Every branch takes the same inputs: operand x, then the union of captured values.
    assert len({len(b.invars) for b in branches}) == 1
    assert len(branches[0].invars) == 1 + 3


def test_cond_numeric_pred_and_no_operands():
    f = toolkit.jit(lambda n: lax.cond(n, lambda: np.float32(1), lambda: np.float32(2)))
    assert float(f(np.int32(3))) == 1.0
    assert float(f(np.int32(0))) == 2.0


def test_cond_eager_outside_jit():
    x = f32(3)
    np.testing.assert_allclose(lax.cond(np.bool_(True), lambda v: v + 1, lambda v: v, x), x + 1)
    np.testing.assert_allclose(lax.cond(False, lambda v: v + 1, lambda v: v, x), x)


def test_cond_weak_type_outputs_merge():
    f = toolkit.jit(lambda p, x: lax.cond(p, lambda v: v + 1.0, lambda v: v, x))
    assert f(True, np.float32(1)).dtype == np.float32


def test_cond_branch_type_mismatch_errors():
    with pytest.raises(TypeError, match="true_fun and false_fun output must have identical types"):
        toolkit.jit(lambda p, x: lax.cond(p, lambda v: v, lambda v: v.astype(np.int32), x))(True, f32(2))
    with pytest.raises(TypeError, match="true_fun and false_fun output must have identical types"):
        toolkit.jit(lambda p, x: lax.cond(p, lambda v: v, lambda v: v[:1], x))(True, f32(2))
    with pytest.raises(TypeError, match="same type structure"):
        toolkit.jit(lambda p, x: lax.cond(p, lambda v: (v, v), lambda v: v, x))(True, f32(2))


def test_cond_pred_errors():
    with pytest.raises(TypeError, match="pred must be a scalar"):
        toolkit.jit(lambda p, x: lax.cond(p, lambda v: v, lambda v: v, x))(np.array([True, False]), f32(2))
    with pytest.raises(TypeError, match="boolean or number"):
        toolkit.jit(lambda p, x: lax.cond(p, lambda v: v, lambda v: v, x))(np.complex64(1), f32(2))
    with pytest.raises(TypeError, match="must be callable"):
        toolkit.jit(lambda p, x: lax.cond(p, 3, lambda v: v, x))(True, f32(2))


def test_switch_clamps_index():
    branches = [lambda v: v + 1, lambda v: v * 10, lambda v: -v]
    f = toolkit.jit(lambda i, x: lax.switch(i, branches, x))
    x = f32(3)
    for i, want in [(-5, x + 1), (0, x + 1), (1, x * 10), (2, -x), (7, -x)]:
        np.testing.assert_allclose(f(np.int32(i), x), want, rtol=1e-6)
    assert "stablehlo.clamp" in f.lower(np.int32(0), x).as_text()


def test_switch_multiple_operands_and_single_branch():
    f = toolkit.jit(lambda i, x, y: lax.switch(i, [lambda a, b: a + b, lambda a, b: a * b], x, y))
    x, y = f32(2), f32(2)
    np.testing.assert_allclose(f(1, x, y), x * y)
    assert float(lax.switch(3, [lambda: 5.0])) == 5.0


def test_switch_errors():
    with pytest.raises(ValueError, match="empty"):
        lax.switch(0, [], 1.0)
    with pytest.raises(TypeError, match="must be an integer"):
        toolkit.jit(lambda i: lax.switch(i, [lambda: 1.0, lambda: 2.0]))(np.float32(1))
    with pytest.raises(TypeError, match="switch branches output must have identical types"):
        toolkit.jit(lambda i: lax.switch(i, [lambda: np.float32(1), lambda: np.int32(2)]))(1)


# --- while_loop / fori_loop ------------------------------------------------------


def newton_sqrt(a):
    def body(state):
        x, k = state
        return 0.5 * (x + a / x), k + 1

    def cond(state):
        x, k = state
        return (tnp.max(tnp.abs(x * x - a)) > 1e-5) & (k < 50)

    return lax.while_loop(cond, body, (a, 0))


def test_while_newton_iteration_matches_numpy():
    a = np.array([2.0, 9.0, 0.25, 100.0], np.float32)
    root, steps = toolkit.jit(newton_sqrt)(a)
    np.testing.assert_allclose(root, np.sqrt(a), rtol=1e-5)
    assert 0 < int(steps) < 50


def test_while_lowers_to_one_while_without_unrolling():
    text = toolkit.jit(newton_sqrt).lower(np.ones(4, np.float32)).as_text()
    assert text.count("stablehlo.while") == 1
    assert text.count("stablehlo.divide") == 1


def test_while_captures_outer_tracers():
    def f(x, step):
        return lax.while_loop(lambda v: v < 100, lambda v: v + step, x)
    assert float(toolkit.jit(f)(np.float32(1), np.float32(7))) == 106.0


def test_while_eager_and_weak_carry_promotion():
    assert int(lax.while_loop(lambda v: v < 100, lambda v: v * 2, 1)) == 128
    # A weak Python-scalar carry meeting a strong body result takes the strong type.
    out = toolkit.jit(lambda x: lax.while_loop(lambda v: v < 10, lambda v: v + x, 0.0))(np.float32(3))
    assert out.dtype == np.float32 and float(out) == 12.0


def test_while_body_type_errors_name_the_component():
    with pytest.raises(TypeError, match=r"body_fun output and input must have identical types.*carry\[1\].*dtypes"):
        toolkit.jit(lambda x: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0], c[1] + 0.5), (x, np.int32(0))))(
            f32(2))
    with pytest.raises(TypeError, match="shapes do not match"):
        toolkit.jit(lambda x: lax.while_loop(lambda c: True, lambda c: tnp.concatenate([c, c]), x))(f32(2))
    with pytest.raises(TypeError, match="pytree structure"):
        toolkit.jit(lambda x: lax.while_loop(lambda c: True, lambda c: (c, c), x))(f32(2))
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        toolkit.jit(lambda x: lax.while_loop(lambda c: c, lambda c: c, x))(f32(2))


def test_fori_loop_sum_and_dtype():
    f = toolkit.jit(lambda n, x: lax.fori_loop(0, n, lambda i, acc: acc + i * x, np.float32(0)))
    assert float(f(np.int32(5), np.float32(2))) == 20.0
    assert int(lax.fori_loop(0, 10, lambda i, acc: acc + i, 0)) == 45
    assert int(lax.fori_loop(np.int64(2), 5, lambda i, acc: acc * i, np.int64(1))) == 24
    assert "stablehlo.while" in toolkit.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2, x)).lower(
        np.float32(1)).as_text()


def test_fori_loop_errors():
    with pytest.raises(TypeError, match="lower must be a scalar"):
        toolkit.jit(lambda lo: lax.fori_loop(lo, 3, lambda i, v: v, 1.0))(np.ones(2, np.int32))


def test_loops_as_jax_with_float_bounds_weak_carries_and_no_steps():
    # JAX's: known float bounds count by int(bound) with an int index, traced ones in floats; a weakly typed
    # initial carry (0) is promoted with the body's result type; an empty fori_loop returns an array.
    jax = pytest.importorskip("jax")
    cases = [
        lambda L: L.lax.fori_loop(0.0, 3.0, lambda i, c: c + i, 0.0),
        lambda L: L.lax.fori_loop(0.5, 2.7, lambda i, c: c + i, 0.0),
        lambda L: L.jit(lambda lo: L.lax.fori_loop(lo, 3.0, lambda i, c: c + i, 0.0))(0.5),
        lambda L: L.lax.fori_loop(5, 2, lambda i, c: c + i, 0),
        lambda L: L.lax.fori_loop(5, 2, lambda i, c: c + i, np.float64(1)),
        lambda L: L.lax.fori_loop(0, 3, lambda i, c: c * 0.5, 1),
        lambda L: L.lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0),
        lambda L: L.jit(lambda: L.lax.while_loop(lambda c: c < 3, lambda c: c + np.float32(1.0), 0))(),
        lambda L: L.lax.scan(lambda c, x: (c + x.sum(), c), 0, np.ones((3, 2), np.float32)),
        lambda L: L.lax.scan(lambda c, x: (c + 0.5, c), 0, None, length=2),
    ]
    for case in cases:
        ours, theirs = pytrees.tree_leaves(case(toolkit)), jax.tree_util.tree_leaves(case(jax))
        for o, t in zip(ours, theirs, strict=True):
            assert (o.dtype, o.shape, o.weak_type) == (t.dtype, t.shape, t.weak_type)
            np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
    for lib in (toolkit, jax):  # a shape that differs is still an error after the promotion
        with pytest.raises(TypeError):
            lib.lax.scan(lambda c, x: (lib.numpy.zeros(3), c), 0, None, length=2)


# --- scan -----------------------------------------------------------------------


def rnn_reference(h, xs, w, u):
    hs = []
    for x in xs:
        h = np.tanh(h @ w + x @ u)
        hs.append(h)
    return h, np.stack(hs)


def test_scan_cumulative_rnn_matches_numpy():
    w, u = f32(4, 4) * 0.5, f32(3, 4) * 0.5
    h0, xs = f32(4), f32(6, 3)

    def rnn(h, xs, w, u):
        def step(h, x):
            h = tnp.tanh(h @ w + x @ u)
            return h, h
        return lax.scan(step, h, xs)

    h, hs = toolkit.jit(rnn)(h0, xs, w, u)
    h_ref, hs_ref = rnn_reference(h0, xs, w, u)
    np.testing.assert_allclose(hs, hs_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, h_ref, rtol=1e-5, atol=1e-6)
    text = toolkit.jit(rnn).lower(h0, xs, w, u).as_text()
    assert text.count("stablehlo.while") == 1 and "dynamic_update_slice" in text and "dynamic_slice" in text


def test_scan_cumsum_reverse_and_pytrees():
    xs = {"a": f32(5), "b": f32(5, 2)}

    def f(xs):
        def step(c, x):
            c = (c[0] + x["a"], c[1] + x["b"])
            return c, {"ca": c[0], "cb": c[1]}
        return lax.scan(step, (np.float32(0), np.zeros(2, np.float32)), xs, reverse=True)

    (ca, cb), ys = toolkit.jit(f)(xs)
    np.testing.assert_allclose(ys["ca"], np.cumsum(xs["a"][::-1])[::-1], rtol=1e-5)
    np.testing.assert_allclose(ys["cb"], np.cumsum(xs["b"][::-1], 0)[::-1], rtol=1e-5)
    np.testing.assert_allclose(ca, xs["a"].sum(), rtol=1e-5)


def test_scan_length_without_xs_and_none_outputs():
    carry, ys = lax.scan(lambda c, _: (c * 2, None), np.float32(1), None, length=4)
    assert float(carry) == 16.0 and ys is None
    carry, ys = toolkit.jit(lambda c: lax.scan(lambda c, _: (c + 1, c), c, length=3))(np.int32(0))
    np.testing.assert_array_equal(ys, [0, 1, 2])


def test_scan_zero_length():
    carry, ys = toolkit.jit(lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs))(
        np.float32(1), np.zeros((0,), np.float32))
    assert float(carry) == 1.0 and ys.shape == (0,)


def test_scan_errors():
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, x), 0.0, (np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="no values to scan over"):
        lax.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(ValueError, match="disagrees"):
        lax.scan(lambda c, x: (c, x), 0.0, np.zeros(3), length=4)
    with pytest.raises(TypeError, match="must be a pair"):
        toolkit.jit(lambda xs: lax.scan(lambda c, x: c + x, np.float32(0), xs))(f32(3))
    with pytest.raises(TypeError, match="scan body function carry output and input must have identical types"):
        toolkit.jit(lambda xs: lax.scan(lambda c, x: (x, x), np.float32(0), xs))(f32(3, 2))


# --- nesting ---------------------------------------------------------------------


def test_nested_control_flow():
    def f(xs, limit):
        def step(c, x):
            # a while loop inside a cond inside a scan, all capturing `limit`
            y = lax.cond(x > 0, lambda v: lax.while_loop(lambda u: u < limit, lambda u: u * 2 + 1, v),
                         lambda v: -v, x)
            return c + y, y
        return lax.scan(step, np.float32(0), xs)

    xs = np.array([1.0, -2.0, 3.0, -0.5], np.float32)
    total, ys = toolkit.jit(f)(xs, np.float32(10))

    def ref(x):
        if x > 0:
            while x < 10:
                x = x * 2 + 1
            return x
        return -x
    want = np.array([ref(x) for x in xs], np.float32)
    np.testing.assert_allclose(ys, want)
    np.testing.assert_allclose(total, want.sum())
    text = toolkit.jit(f).lower(xs, np.float32(10)).as_text()
    assert text.count("stablehlo.while") == 2 and text.count("stablehlo.case") == 1


def test_program_pretty_prints_subprograms():
    text = str(toolkit.jit(newton_sqrt).trace(np.ones(2, np.float32)).program)
    assert "while[" in text and "body_program={ lambda" in text


def test_scan_unroll_is_accepted_and_checked():
    carry, ys = lax.scan(lambda c, x: (c + x, c), np.float32(0), np.ones(3, np.float32), unroll=True)
    assert float(carry) == 3.0
    with pytest.raises(ValueError, match="unroll must be a positive integer"):
        lax.scan(lambda c, x: (c, x), 0.0, np.zeros(3), unroll=0)


# --- associative_scan and map, checked against jax.lax 0.10.2 ---------------------------------------------

@pytest.fixture
def jl():
    return pytest.importorskip("jax.lax")


@pytest.mark.parametrize("bad", [
    lambda m: m.associative_scan(3, np.ones(3)),
    lambda m: m.associative_scan(m.add, (np.ones(3), np.ones(4))),
])
def test_associative_scan_errors_match_jax(bad, jl):
    raises_like(lambda: bad(lax), lambda: bad(jl))


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_sum_and_max(n, reverse, jl):
    x = RNG.integers(-5, 5, (n, 3)).astype(np.int32)
    assert_same(lax.associative_scan(lax.add, x, reverse=reverse), jl.associative_scan(jl.add, x, reverse=reverse))
    assert_same(lax.associative_scan(lax.max, x, reverse=reverse, axis=1),
                jl.associative_scan(jl.max, x, reverse=reverse, axis=1))
    b = x > 0
    assert_same(lax.associative_scan(lax.bitwise_or, b, reverse=reverse),
                jl.associative_scan(jl.bitwise_or, b, reverse=reverse))


def test_associative_scan_pytree_linear_recurrence(jl):
    # h_t = a_t * h_{t-1} + b_t as an associative scan over (a, b) pairs.
    a = RNG.uniform(0.5, 1.0, (9, 4)).astype(np.float32)
    b = RNG.standard_normal((9, 4)).astype(np.float32)

    def op(m):
        def fn(x, y):
            return m.mul(y[0], x[0]), m.add(m.mul(y[0], x[1]), y[1])
        return fn

    ours = toolkit.jit(lambda a, b: lax.associative_scan(op(lax), (a, b), axis=0))(a, b)
    theirs = jl.associative_scan(op(jl), (a, b), axis=0)
    for o, t in zip(ours, theirs):
        assert_same(o, t, rtol=1e-5, atol=1e-6)
    ours = lax.associative_scan(lambda x, y: {"v": lax.add(x["v"], y["v"])}, {"v": b}, reverse=True, axis=-1)
    # JAX reverses before canonicalizing the axis (its rev rejects -1): compare with axis=1.
    theirs = jl.associative_scan(lambda x, y: {"v": x["v"] + y["v"]}, {"v": b}, reverse=True, axis=1)
    assert_same(ours["v"], theirs["v"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 5, 7, 0])
def test_map(batch_size, jl):
    jnp = pytest.importorskip("jax.numpy")
    xs = RNG.standard_normal((5, 3)).astype(np.float32)
    ys = np.arange(5, dtype=np.int32)

    def f(m):
        def fn(t):
            x, y = t
            return {"s": m.reduce_sum(x, (0,)) if m is lax else x.sum(), "y": y * 2}
        return fn

    ours = lax.map(f(lax), (xs, ys), batch_size=batch_size)
    theirs = jl.map(f(jl), (xs, ys), batch_size=batch_size)
    assert_same(ours["s"], theirs["s"], rtol=1e-5, atol=1e-6)
    assert_same(ours["y"], theirs["y"])
    ours = toolkit.jit(lambda xs: lax.map(lambda x: tnp.sin(x) * 2, xs, batch_size=batch_size))(xs)
    assert_same(ours, jl.map(lambda x: jnp.sin(x) * 2, xs, batch_size=batch_size), rtol=1e-6, atol=1e-6)


def test_map_batch_size_reaches_vmap_through_the_hook(monkeypatch):
    """lax sits below batching: ``map(batch_size=)`` vectorizes with the vmap ``toolkit.batching`` installs."""
    from toolkit.lax import control_flow
    assert control_flow._vmap_handler is toolkit.vmap
    monkeypatch.setattr(control_flow, "_vmap_handler", None)
    xs = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(lax.map(lambda x: x * 2, xs), xs * 2)  # no batch_size: a scan only
    with pytest.raises(RuntimeError, match="needs toolkit.batching's vmap"):
        lax.map(lambda x: x * 2, xs, batch_size=2)
