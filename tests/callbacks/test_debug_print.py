"""toolkit.debug.print and toolkit.debug.callback side by side with jax.debug in the same run.

Each program is written once over a namespace ``N`` (toolkit's or jax's ``debug``, ``jit``, ``vmap``,
``grad``, ``lax``, ``numpy``) and run by both; what they print (captured) must be the same text.
"""

import types

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402

T = types.SimpleNamespace(debug=toolkit.debug, jit=toolkit.jit, vmap=toolkit.vmap, grad=toolkit.grad,
                          lax=toolkit.lax, np=tnp, barrier=lambda: None, checkpoint=toolkit.checkpoint,
                          jvp=toolkit.jvp, jacrev=toolkit.jacrev)
J = types.SimpleNamespace(debug=jax.debug, jit=jax.jit, vmap=jax.vmap, grad=jax.grad, lax=jax.lax, np=jnp,
                          barrier=jax.effects_barrier, checkpoint=jax.checkpoint, jvp=jax.jvp, jacrev=jax.jacrev)


def printed(capsys, N, fun, *args):
    """What ``fun(N, *args)`` prints (after every effect has run), and its value."""
    capsys.readouterr()
    out = fun(N, *args)
    N.barrier()
    return capsys.readouterr().out, out


def same_output(capsys, fun, *args, sort=False):
    """Run ``fun`` with toolkit and with jax; the printed text must agree (as sorted lines when ``sort``)."""
    t_text, t_out = printed(capsys, T, fun, *args)
    j_text, j_out = printed(capsys, J, fun, *args)
    if sort:
        t_text, j_text = sorted(t_text.splitlines()), sorted(j_text.splitlines())
    assert t_text == j_text
    if j_out is not None:
        np.testing.assert_allclose(np.asarray(t_out), np.asarray(j_out), rtol=1e-6)
    return t_text


X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("fmt,args,kwargs", [
    ("x={x}", (), {"x": X}),
    ("{} and {}", (X, np.int32(3)), {}),
    ("{0} {0}", (X,), {}),
    ("scalar {s:.3f}", (), {"s": np.float32(1.25)}),
    ("", (), {}),
    ("static {name} {x}", (), {"name": "label", "x": X}),
    ("python numbers {} {}", (3, 2.5), {}),
])
@pytest.mark.parametrize("jitted", [False, True])
def test_formatting_matches_jax(capsys, fmt, args, kwargs, jitted):
    def fun(N, *a):
        def f(*a):
            N.debug.print(fmt, *a, **kwargs)
            return a[0] + 1 if a else None
        return (N.jit(f) if jitted else f)(*a)
    text = same_output(capsys, fun, *args)
    assert text.endswith("\n")


def test_without_placeholders_the_arguments_follow(capsys):
    def fun(N, x):
        N.jit(lambda v: N.debug.print("no placeholders", v, 2, skip_format_check=True))(x)
    assert same_output(capsys, fun, X).startswith("no placeholders [[0. 1. 2.]")


def test_print_options_at_the_call_are_used(capsys):
    def fun(N, x):
        with np.printoptions(precision=2):
            f = N.jit(lambda v: N.debug.print("{}", v / 3))
            f(x)
    text = same_output(capsys, fun, X)
    assert "0.33" in text and "0.333" not in text


def test_ordered_prints_keep_program_order(capsys):
    def fun(N, x):
        def f(v):
            for i in range(5):
                N.debug.print("step {i} {v}", i=i, v=v + i, ordered=True)
            return v
        return N.jit(f)(x)
    text = same_output(capsys, fun, np.float32(1.0))
    assert [line.split()[1] for line in text.splitlines()] == ["0", "1", "2", "3", "4"]


def test_two_call_form(capsys):
    same_output(capsys, lambda N, x: N.jit(lambda v: N.debug.print(ordered=True)("v={v}", v=v))(x), X)


def test_vmap_prints_each_element(capsys):
    text = same_output(capsys, lambda N, x: N.vmap(lambda r: N.debug.print("row {}", r))(x), X)
    assert len(text.splitlines()) == 2
    same_output(capsys, lambda N, x: N.jit(N.vmap(lambda r, s: N.debug.print("{} {}", r, s), in_axes=(0, None)))(
        x, np.float32(7)), X)


def test_grad_prints_the_primal_values_once(capsys):
    def fun(N, x):
        def loss(v):
            N.debug.print("forward {}", v)
            return (v * v).sum()
        return N.grad(loss)(x)
    text = same_output(capsys, fun, X)
    assert text.count("forward") == 1
    same_output(capsys, lambda N, x: N.jit(N.grad(lambda v: (N.debug.print("v {}", v), (v ** 3).sum())[1]))(x), X)


def test_scan_prints_every_iteration_in_order(capsys):
    def fun(N, xs):
        def body(carry, x):
            N.debug.print("carry={c} x={x}", c=carry, x=x, ordered=True)
            return carry + x, carry
        return N.jit(lambda xs: N.lax.scan(body, np.float32(0), xs))(xs)[0]
    text = same_output(capsys, fun, np.arange(4, dtype=np.float32))
    assert len(text.splitlines()) == 4


def test_while_loop_and_cond(capsys):
    def fun(N, x):
        def body(v):
            N.debug.print("loop {}", v, ordered=True)
            return v + 1
        def f(v):
            out = N.lax.while_loop(lambda v: v < 3, body, v)
            N.lax.cond(out > 2, lambda: N.debug.print("big {}", out), lambda: N.debug.print("small {}", out))
            return out
        return N.jit(f)(x)
    same_output(capsys, fun, np.int32(0))


def test_eager_print_runs_now(capsys):
    toolkit.debug.print("eager {}", tnp.arange(3))
    assert capsys.readouterr().out == "eager [0 1 2]\n"


def test_debug_callback_gets_cpu_arrays_and_static_leaves():
    # As JAX 0.10's: array arguments arrive as arrays on the CPU device (JAX's jax.Array), other leaves as given.
    seen = []
    def cb(x, *, tag):
        seen.append((type(x), [d.platform for d in x.devices()], np.asarray(x).tolist(), tag))
    toolkit.jit(lambda v: toolkit.debug.callback(cb, v * 2, tag="t"))(tnp.arange(3.0))
    assert seen == [(toolkit.Array, ["cpu"], [0.0, 2.0, 4.0], "t")]
    jseen = []
    jax.jit(lambda v: jax.debug.callback(lambda x, *, tag: jseen.append(
        (isinstance(x, jax.Array), [d.platform for d in x.devices()], np.asarray(x).tolist(), tag)), v * 2,
        tag="t"))(jnp.arange(3.0))
    jax.effects_barrier()
    assert [(True, *s[1:]) for s in seen] == jseen


def test_debug_callback_two_call_form_and_vmap():
    seen = []
    toolkit.vmap(lambda v: toolkit.debug.callback(ordered=True)(lambda x: seen.append(float(x)), v))(tnp.arange(3.0))
    assert seen == [0.0, 1.0, 2.0]


def test_debug_callback_return_value_is_ignored():
    assert toolkit.jit(lambda v: (toolkit.debug.callback(lambda x: 123, v), v)[1])(tnp.ones(2)).shape == (2,)


# --- errors ---------------------------------------------------------------------------------------------


def test_unused_arguments_are_refused_as_jax_does():
    for N in (T, J):
        with pytest.raises(ValueError, match="Unused positional arguments"):
            N.debug.print("{}", 1, 2)
        with pytest.raises(ValueError, match="f-string"):
            N.debug.print("x", x=1)
    toolkit.debug.print("{}", 1, 2, skip_format_check=True)  # allowed when asked


def test_two_call_form_refuses_arguments():
    for N in (T, J):
        with pytest.raises(TypeError, match="unexpected arguments in the two-call form"):
            N.debug.print(None, 1)
        with pytest.raises(TypeError, match="unexpected arguments in the two-call form"):
            N.debug.callback(None, 1)


def test_callback_must_be_callable():
    for N in (T, J):
        with pytest.raises(TypeError, match="must be callable"):
            N.debug.callback(42, 1.0)


def test_format_must_be_a_string():
    with pytest.raises(TypeError, match="format must be a string"):
        toolkit.debug.print(42)


def test_an_exception_in_the_callback_reaches_the_caller():
    def bad(x):
        raise KeyError("boom")
    with pytest.raises(Exception, match="boom"):
        toolkit.jit(lambda v: toolkit.debug.callback(bad, v))(tnp.ones(2))


def test_effects_barrier_returns_after_every_print(capsys):
    toolkit.jit(lambda v: toolkit.debug.print("before {}", v))(tnp.ones(2))
    assert toolkit.effects_barrier() is None
    assert capsys.readouterr().out == "before [1. 1.]\n"


def _traced_sin(N, x):
    N.debug.print("f {}", x)
    return N.np.sin(x) * x


@pytest.mark.parametrize("transform", [
    lambda N, x: N.grad(lambda v: N.checkpoint(lambda u: _traced_sin(N, u))(v))(x),
    lambda N, x: N.jvp(lambda v: _traced_sin(N, v), (x,), (x,)),
    lambda N, x: N.vmap(N.grad(lambda v: _traced_sin(N, v)))(N.np.stack([x, x + 1])),
    lambda N, x: N.jit(N.jacrev(lambda v: _traced_sin(N, v)))(x),
], ids=["checkpoint-grad", "jvp", "vmap-grad", "jit-jacrev"])
def test_prints_under_differentiation_match_jax(capsys, transform):
    same_output(capsys, lambda N, x: transform(N, x), np.float32(1.0))


def test_log_goes_to_the_logger_with_the_call_site(caplog):
    import logging
    with caplog.at_level(logging.INFO, logger="toolkit.debug"):
        toolkit.jit(lambda v: toolkit.debug.log("logged {v}", v=v))(tnp.arange(2.0))
    (record,) = [r for r in caplog.records if r.name == "toolkit.debug"]
    assert record.getMessage() == "logged [0. 1.]" and record.levelno == logging.INFO
    assert record.pathname == __file__
    with pytest.raises(TypeError, match="toolkit.debug.log: the format must be a string"):
        toolkit.debug.log(3)
