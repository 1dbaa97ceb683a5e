"""Control-flow bodies are traced once per function and context (toolkit.lax.body_traces), as JAX's are."""

import contextlib
import jax
import numpy as np

import toolkit
import toolkit.lax as tlax
import toolkit.numpy as tnp

XS = np.linspace(0.1, 0.9, 6, dtype=np.float32)
WEIGHTS = np.linspace(1.0, 2.0, 6, dtype=np.float32)


def test_an_eager_vmap_of_a_scan_compiles_once(compilations):
    def body(c, x):
        return c + x * WEIGHTS[0], c * x

    def run(xs):
        return tlax.scan(body, 0.0, xs)

    outs, counts = [], []
    for _ in range(4):  # one call site (a loop): the body's trace, the batched program and its executable again
        outs.append(toolkit.vmap(run)(XS.reshape(2, 3)))
        counts.append(compilations[0])
    assert counts[0] >= 1 and counts[1:] == counts[:1] * 3
    first, again = outs[0], outs[-1]
    jax_out = jax.vmap(lambda xs: jax.lax.scan(body, 0.0, xs))(XS.reshape(2, 3))
    for ours, same, theirs in zip(toolkit.tree.leaves(first), toolkit.tree.leaves(again), jax.tree.leaves(jax_out)):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(same))
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def test_a_body_is_traced_once_per_call_site_and_types():
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, None

    def branch(v):
        calls.append(1)
        return v * 2

    def f(xs):
        total = tlax.scan(body, np.float32(0), xs)[0]
        return total + tlax.cond(True, branch, branch, xs).sum()  # both branches one function: traced once

    for n in (6, 4, 6, 4):  # new jit objects from one call site: f traced each time, its bodies once per types
        toolkit.jit(lambda xs: f(xs))(XS[:n])
    assert len(calls) == 1 + 2  # the scan's body sees f32[] steps at both lengths; the cond's f32[6] and f32[4]
    toolkit.jit(lambda xs: f(xs) * 2)(XS)  # another call site: traced again (its ops name this line)
    assert len(calls) == 3 + 2


def test_a_body_capturing_a_traced_value_is_traced_each_time():
    held = {}

    def body(c, x):  # reads a traced value of the enclosing jit through a global
        return c + held["w"] * x, None

    def f(w, xs):
        held["w"] = w
        return tlax.scan(body, 0.0, xs)[0]

    total = float(XS.sum())
    np.testing.assert_allclose(float(toolkit.jit(f)(np.float32(1.0), XS)), total, rtol=1e-6)
    np.testing.assert_allclose(float(toolkit.jit(f)(np.float32(2.0), XS[:4]) * 0 + toolkit.jit(f)(
        np.float32(3.0), XS)), 3 * total, rtol=1e-6)
    # Under another jit with the same argument types: a new trace of the body, with that trace's w.
    np.testing.assert_allclose(float(toolkit.jit(lambda w, xs: f(w, xs))(np.float32(5.0), XS)), 5 * total,
                               rtol=1e-6)


def test_a_kept_body_captures_its_constants_again():
    weights = tnp.asarray(WEIGHTS)

    def body(c, x):
        return c + tnp.sum(weights * x), None

    def f(xs):
        return tlax.scan(body, 0.0, xs)[0]

    expected = float(np.sum(WEIGHTS[None, :] * XS[:, None]))
    np.testing.assert_allclose(float(toolkit.jit(f)(XS)), expected, rtol=1e-5)
    np.testing.assert_allclose(float(toolkit.jit(lambda xs: f(xs) * 2)(XS)), 2 * expected, rtol=1e-5)
    np.testing.assert_allclose(float(toolkit.vmap(f)(XS[None])[0]), expected, rtol=1e-5)


def test_clear_caches_forgets_them():
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, None

    def trace_twice():
        for k in range(2):
            toolkit.jit(lambda xs: tlax.scan(body, np.float32(k), xs)[0])(XS)

    trace_twice()
    assert len(calls) == 1
    toolkit.clear_caches()
    trace_twice()
    assert len(calls) == 2


def test_a_body_traced_under_compute_on_is_its_own():
    def body(c, x):
        return c + x * 2, None

    def f(xs, host):
        with toolkit.compute_on("device_host") if host else contextlib.nullcontext():
            return tlax.scan(body, np.float32(0), xs)[0]  # one call site for both

    plain, hosted = [toolkit.jit(lambda xs: f(xs, host)).lower(XS).as_text() for host in (False, True)]
    assert "_xla_compute_type" not in plain
    assert '_xla_compute_type = "host"' in hosted


def _rnn_step(c, x):  # one function object for every call (a function made inside _rnn is new each time)
    return tnp.tanh(c * WEIGHTS[0] + x), c * x


def _rnn(xs):
    carry, ys = tlax.scan(_rnn_step, np.float32(0), xs)
    return carry + ys.sum()


def _branchy(xs):
    return tnp.sum(tlax.cond(xs[0] > 0, tnp.sin, tnp.cos, xs))


def _jax_rnn(xs):
    def step(c, x):
        return jax.numpy.tanh(c * WEIGHTS[0] + x), c * x
    carry, ys = jax.lax.scan(step, np.float32(0), xs)
    return carry + ys.sum()


def _jax_branchy(xs):
    return jax.numpy.sum(jax.lax.cond(xs[0] > 0, jax.numpy.sin, jax.numpy.cos, xs))


def test_eager_gradients_of_control_flow_compile_once_from_one_call_site(compilations):
    # The backward programs the rules derive from a kept body (scan's stacking forward body, the backward scan
    # and cond) are kept too: the same call again finds them and their executables (JAX compiles grad(scan)
    # and grad(cond) again on every call; vmap(grad(cond)) it finds again, as toolkit now).
    cases = [(lambda: toolkit.grad(_rnn)(XS), lambda: jax.grad(_jax_rnn)(XS)),
             (lambda: toolkit.grad(_branchy)(XS), lambda: jax.grad(_jax_branchy)(XS)),
             (lambda: toolkit.vmap(toolkit.grad(_branchy))(XS.reshape(2, 3)),
              lambda: jax.vmap(jax.grad(_jax_branchy))(XS.reshape(2, 3)))]
    for ours, theirs in cases:
        counts, results = [], []
        for _ in range(3):
            results.append(np.asarray(ours()))
            counts.append(compilations[0])
        assert counts[1] == counts[0] and counts[2] == counts[0]
        np.testing.assert_array_equal(results[0], results[2])
        np.testing.assert_allclose(results[0], np.asarray(theirs()), rtol=1e-5)


def test_a_function_keeps_a_bounded_number_of_traces(monkeypatch):
    from toolkit.lax import body_traces
    monkeypatch.setattr(body_traces, "MAX_PER_OWNER", 2)
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, None

    def trace_at(lengths):
        for n in lengths:  # one call site; a new carry type each length
            toolkit.jit(lambda xs: tlax.scan(body, xs[0], xs[1:])[0])(np.ones((n, n), np.float32))

    counts = []
    for lengths in ([2, 3, 4], [4, 3], [2]):  # one call site for all (the key holds the user's frames)
        trace_at(lengths)
        counts.append(len(calls))
    # Three types traced, two kept; the newest two found again; the forgotten one traced again.
    assert counts == [3, 3, 4] and len(body_traces._TRACES[body]) == 2


def _below_three(state):
    return state[0] < 3


def _count_step(state):
    return state[0] + 1, tnp.sin(state[1]) * 1.5


def _count_down(x):
    return tlax.while_loop(_below_three, _count_step, (0, x))[1].sum()


def _jax_count_down(x):
    return jax.lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, jax.numpy.sin(s[1]) * 1.5), (0, x))[1].sum()


def test_eager_forward_mode_and_batched_bodies_are_derived_once(compilations):
    # What jvp derives from a kept body (cond's branches, while's body and condition, scan's step) and what
    # vmap batches (jacfwd = vmap of jvp; hessian = jacfwd of jacrev) is kept with it: from one call site,
    # the second and later calls compile nothing and add no eager executable (JAX compiles jvp and hessian
    # of these on every call).
    from toolkit import dispatch

    ones = np.ones_like(XS)
    cases = [(lambda: toolkit.jvp(_rnn, (XS,), (ones,))[1], lambda: jax.jvp(_jax_rnn, (XS,), (ones,))[1]),
             (lambda: toolkit.jvp(_branchy, (XS,), (ones,))[1], lambda: jax.jvp(_jax_branchy, (XS,), (ones,))[1]),
             (lambda: toolkit.jvp(_count_down, (XS,), (ones,))[1],
              lambda: jax.jvp(_jax_count_down, (XS,), (ones,))[1]),
             (lambda: toolkit.jacfwd(_count_down)(XS), lambda: jax.jacfwd(_jax_count_down)(XS)),
             (lambda: toolkit.hessian(_rnn)(XS), lambda: jax.hessian(_jax_rnn)(XS)),
             (lambda: toolkit.hessian(_branchy)(XS), lambda: jax.hessian(_jax_branchy)(XS))]
    for ours, theirs in cases:
        counts, sizes, results = [], [], []
        for _ in range(3):
            results.append(np.asarray(ours()))
            counts.append(compilations[0])
            sizes.append(len(dispatch.EAGER_EXECUTABLES._cache))
        assert counts[2] == counts[1] == counts[0] and sizes[2] == sizes[1] == sizes[0]
        np.testing.assert_array_equal(results[0], results[2])
        np.testing.assert_allclose(results[0], np.asarray(theirs()), rtol=1e-5, atol=1e-6)
