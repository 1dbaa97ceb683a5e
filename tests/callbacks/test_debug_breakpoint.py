"""toolkit.debug.breakpoint side by side with jax.debug.breakpoint in the same run.

Both debuggers are driven as JAX's own tests drive theirs: ``breakpoint(stdin=io.StringIO("p x\\nc\\n"),
stdout=out)``. Each program is written once over a namespace ``N`` (toolkit's or jax's ``debug``, ``jit``,
``vmap``, ``grad``, ``lax``, ``numpy``) and run by both; the debugger sessions must be the same text.
"""

import io
import types

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import toolkit  # noqa: E402
import toolkit.debugger  # noqa: E402
import toolkit.export  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402

# JAX's debugger flattens every local of every frame, pytest's generators included (its warning, not ours).
pytestmark = pytest.mark.filterwarnings("ignore:Python iterable type 'generator' is treated as a leaf")

T = types.SimpleNamespace(debug=toolkit.debug, jit=toolkit.jit, vmap=toolkit.vmap, grad=toolkit.grad,
                          lax=toolkit.lax, np=tnp, barrier=toolkit.effects_barrier)
J = types.SimpleNamespace(debug=jax.debug, jit=jax.jit, vmap=jax.vmap, grad=jax.grad, lax=jax.lax, np=jnp,
                          barrier=jax.effects_barrier)


def session(N, program, commands, *args):
    """The debugger's output for ``program(N, io_kwargs, *args)`` fed ``commands``, and the program's value."""
    out = io.StringIO()
    value = program(N, dict(stdin=io.StringIO(commands), stdout=out), *args)
    N.barrier()
    return out.getvalue(), value


def same_session(program, commands, *args):
    t_text, t_value = session(T, program, commands, *args)
    j_text, j_value = session(J, program, commands, *args)
    assert t_text == j_text
    if j_value is not None:
        for t, j in zip(toolkit.tree.leaves(t_value), jax.tree.leaves(j_value)):
            np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=1e-6)
    return t_text


def _sine(N, io_kw, x):
    def f(v):
        y = N.np.sin(v)
        label = "static"  # noqa: F841 - a static local the debugger shows
        N.debug.breakpoint(num_frames=1, **io_kw)
        return y
    return f


X = np.arange(3, dtype=np.float32)


@pytest.mark.parametrize("transform", [
    lambda N, io_kw, x: _sine(N, io_kw, x)(N.np.asarray(x)),
    lambda N, io_kw, x: N.jit(_sine(N, io_kw, x))(x),
    lambda N, io_kw, x: N.vmap(_sine(N, io_kw, x))(x),
    lambda N, io_kw, x: N.jit(N.vmap(_sine(N, io_kw, x)))(x),
    lambda N, io_kw, x: N.grad(lambda v: N.np.sum(_sine(N, io_kw, x)(v)))(x),
], ids=["eager", "jit", "vmap", "jit-vmap", "grad"])
def test_values_in_the_frame_match_jax(transform):
    commands = "p v\npp y\np label, v.shape\nc\n" * 3  # vmap stops once per element (3 stops)
    text = same_session(transform, commands, X)
    assert text.startswith("Entering jdb:\n(jdb) ")


def test_eager_values_keep_their_weak_type():
    text = same_session(lambda N, io_kw, x: _sine(N, io_kw, x)(N.np.asarray(2.0)), "p v\nc\n", None)
    assert "Array(2., dtype=float32, weak_type=True)" in text


def test_scan_stops_once_per_iteration():
    def program(N, io_kw, xs):
        def body(carry, x):
            carry = carry + x
            N.debug.breakpoint(num_frames=1, **io_kw)
            return carry, carry * 2
        return N.lax.scan(body, N.np.float32(0), xs)
    text = same_session(program, "p carry, x\nc\n" * 3, X)
    assert text.count("Entering jdb:") == 3


def test_scan_inside_jit_shows_the_outer_frames_traced_locals():
    def program(N, io_kw, xs):
        def f(v):
            outer_value = v * 10  # noqa: F841 - read by the debugger

            def body(carry, x):
                carry = carry + x
                N.debug.breakpoint(num_frames=2, **io_kw)
                return carry, carry
            return N.lax.scan(body, N.np.float32(0), v)
        return N.jit(f)(xs)
    text = same_session(program, "p carry\nu\np outer_value\nc\n" * 2, X[:2])
    assert "Array([ 0., 10.], dtype=float32)" in text


def test_fori_loop_stops_once_per_iteration():
    def program(N, io_kw, x):
        def body(i, acc):
            N.debug.breakpoint(num_frames=1, **io_kw)
            return acc * 2
        return N.jit(lambda v: N.lax.fori_loop(0, 3, body, v))(x)
    assert same_session(program, "p i, acc\nc\n" * 3, np.float32(1.0)).count("Entering jdb:") == 3


def test_token_is_returned_and_orders_the_stop():
    def program(N, io_kw, x):
        def f(v):
            y = v + 1
            y = N.debug.breakpoint(token=y, num_frames=1, **io_kw)
            return y * 2
        return N.jit(f)(x)
    text = same_session(program, "p y\nc\n", X)
    assert "Array([1., 2., 3.], dtype=float32)" in text
    out = toolkit.debug.breakpoint(token=tnp.ones(2), stdin=io.StringIO("c\n"), stdout=io.StringIO())
    np.testing.assert_array_equal(np.asarray(out), np.ones(2))


def test_frame_commands_match_jax():
    def program(N, io_kw, x):
        def inner(v):
            w = v * 3
            N.debug.breakpoint(num_frames=2, **io_kw)
            return w

        def outer(u):
            z = u + 1
            return inner(z)
        return N.jit(outer)(x)
    commands = "p w\nu\np z\nu\nd\nd\nl\nw\np undefined_name\n1 +\nw * 2\n\nc\n"  # an empty line repeats
    text = same_session(program, commands, np.float32(1.0))
    assert "At topmost frame." in text and "At bottommost frame." in text
    assert "*** NameError: name 'undefined_name' is not defined" in text


def test_ll_lists_the_whole_function_and_help_lists_commands():
    out = io.StringIO()

    def f(v):
        first = v + 1
        toolkit.debug.breakpoint(stdin=io.StringIO("ll\nh\nh p\nc\n"), stdout=out)
        return first
    toolkit.jit(f)(np.float32(1.0))
    text = out.getvalue()
    assert "        def f(v):\n            first = v + 1\n->          toolkit.debug.breakpoint(" in text
    assert "            return first" in text
    for command in ("continue", "down", "list", "ll", "quit", "up", "where"):
        assert command in text
    assert "Evaluates and prints the value of an expression" in text


def test_globals_are_visible_and_locals_win():
    out = io.StringIO()
    np_ = 3  # noqa: F841 - read by the debugger

    def f(v):
        toolkit.debug.breakpoint(stdin=io.StringIO("p np.float32(2) * v\np [k for k in (v,)]\nc\n"), stdout=out)
        return v
    toolkit.jit(f)(np.float32(1.5))
    assert out.getvalue() == ("Entering jdb:\n(jdb) Array(3., dtype=float32)\n(jdb) [Array(1.5, dtype=float32)]\n"
                              "(jdb) ")


def test_ordered_breakpoints_keep_program_order_with_ordered_prints():
    def program(N, io_kw, x):
        events = []

        class Log(io.StringIO):
            def write(self, text):
                events.append(text)
                return len(text)

        def f(v):
            N.debug.callback(lambda a: events.append(f"callback {a}"), v, ordered=True)
            N.debug.breakpoint(ordered=True, num_frames=1, stdin=io.StringIO("p v\nc\n"), stdout=Log())
            N.debug.callback(lambda a: events.append(f"callback {a * 2}"), v, ordered=True)
            return v
        N.jit(f)(x)
        N.barrier()
        return events
    t_events, j_events = program(T, None, np.float32(1.0)), program(J, None, np.float32(1.0))
    assert "".join(t_events) == "".join(j_events)
    assert t_events[0] == "callback 1.0" and t_events[-1] == "callback 2.0"


def test_filter_frames_and_num_frames():
    seen = {}

    def record(frames, thread_id, **kwargs):
        seen["files"] = [frame.filename for frame in frames]
        seen["kwargs"] = kwargs
    toolkit.debugger.register_debugger("record-frames", record, -10)

    def f(v):
        toolkit.debug.breakpoint(backend="record-frames", flag=1)
        return v
    toolkit.jit(f)(np.float32(1.0))
    assert seen["files"][0] == __file__ and all("/toolkit/" not in name for name in seen["files"])
    assert seen["kwargs"] == {"flag": 1}
    toolkit.debug.breakpoint(backend="record-frames", filter_frames=False, num_frames=3)
    assert len(seen["files"]) == 3 and seen["files"][0] == __file__
    toolkit.jit(lambda v: toolkit.debug.breakpoint(backend="record-frames", filter_frames=False))(np.float32(1))
    assert any(name.endswith("toolkit/stages.py") for name in seen["files"])
    with pytest.raises(ValueError, match='Debugger with name "record-frames" already registered.'):
        toolkit.debugger.register_debugger("record-frames", record, 0)


def test_unknown_backend_falls_back_to_the_cli_as_jax():
    out = io.StringIO()
    toolkit.debug.breakpoint(backend="colab", stdin=io.StringIO("p 1 + 1\nc\n"), stdout=out)
    assert out.getvalue() == "Entering jdb:\n(jdb) 2\n(jdb) "


def test_quit_exits_as_jax():
    with pytest.raises(SystemExit):
        toolkit.debug.breakpoint(stdin=io.StringIO("q\n"), stdout=io.StringIO())

    def f(v):
        toolkit.debug.breakpoint(stdin=io.StringIO("q\n"), stdout=io.StringIO())
        return v
    with pytest.raises(Exception, match="SystemExit"):  # inside a program: the callback's error, as JAX's
        toolkit.jit(f)(np.float32(1.0))
        toolkit.effects_barrier()


def test_bad_arguments_are_refused_at_the_call():
    with pytest.raises(ValueError, match="`ordered` and `token` are mutually exclusive arguments."):
        toolkit.debug.breakpoint(ordered=True, token=tnp.ones(1))
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['stdn'\]"):
        toolkit.debug.breakpoint(stdn=io.StringIO("c\n"))


def test_export_refuses_a_breakpoint_as_jax():
    def f(v):
        toolkit.debug.breakpoint(stdin=io.StringIO("c\n"), stdout=io.StringIO())
        return v * 2

    def g(v):
        jax.debug.breakpoint(stdin=io.StringIO("c\n"), stdout=io.StringIO())
        return v * 2
    with pytest.raises(NotImplementedError) as jax_error:
        jax.export.export(jax.jit(g))(np.float32(1.0))
    with pytest.raises(NotImplementedError) as toolkit_error:
        toolkit.export.export(toolkit.jit(f))(np.float32(1.0))
    assert str(toolkit_error.value).startswith(str(jax_error.value))
