"""jit's fast call path (``toolkit.dispatch``: ``FastPath`` before the signature, ``fast_caller``).

The fast path answers calls of pytrees of Arrays from what an earlier call
remembered (a dict's key order, the last hit's tree and avals, the
executable's expected shardings). These tests pin what it must give: the
same values and output structure as the full path, and a fall back to the
full path (never a wrong answer) whenever an input is not what it remembered.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit import call_trees, dispatch
from toolkit.numpy import _core as numpy_core


def _params(keys, shape=(8,)):
    return {k: toolkit.device_put(np.full(shape, i, np.float32)) for i, k in enumerate(keys)}


def _inc_tree(p):
    return {k: v + 1 for k, v in p.items()}


@pytest.mark.parametrize("keys", [["w0", "w1", "w2"], ["b", "c", "a"]], ids=["sorted", "unsorted"])
def test_dict_argument_repeated_and_fed_back(keys, compilations):
    f = toolkit.jit(_inc_tree)
    params = _params(keys)
    expected = {k: np.full(8, i + 1, np.float32) for i, k in enumerate(keys)}
    for _ in range(3):  # the same dict again: the remembered key order gives its leaves
        out = f(params)
        assert list(out) == sorted(keys)  # as tree_unflatten builds dicts: keys in sorted order
        for k in keys:
            np.testing.assert_array_equal(np.asarray(out[k]), expected[k])
    out = params
    for step in range(4):  # outputs fed back: new aval objects equal to the remembered ones
        out = f(out)
        for i, k in enumerate(keys):
            np.testing.assert_array_equal(np.asarray(out[k]), np.full(8, i + 1 + step, np.float32))
    assert compilations[0] == 1


def test_dict_of_another_shape_with_the_same_keys_compiles_again(compilations):
    f = toolkit.jit(_inc_tree)
    f(_params(["a", "b"]))
    out = f(_params(["a", "b"], shape=(2, 3)))
    assert out["b"].shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(out["b"]), np.full((2, 3), 2, np.float32))
    assert compilations[0] == 2
    out = f(_params(["a", "b"]))  # and back: the first executable, no third compile
    assert out["a"].shape == (8,) and compilations[0] == 2


def test_a_leaf_that_is_not_an_array_takes_the_full_path(compilations):
    f = toolkit.jit(_inc_tree)
    params = _params(["a", "b"])
    f(params)
    mixed = {"a": params["a"], "b": np.full(8, 5, np.float32)}  # numpy leaf: same avals, not an Array
    out = f(mixed)
    np.testing.assert_array_equal(np.asarray(out["b"]), np.full(8, 6, np.float32))
    assert compilations[0] == 1


def test_arguments_on_another_device_are_moved_not_misread():
    devices = toolkit.devices()
    if len(devices) < 2:
        pytest.skip("needs two devices")
    f = toolkit.jit(_inc_tree)
    f(_params(["a", "b"]))
    elsewhere = {k: toolkit.device_put(np.full(8, i, np.float32), devices[1]) for i, k in enumerate("ab")}
    out = f(elsewhere)  # committed to device 1: the expected-sharding check misses, the full path runs
    np.testing.assert_array_equal(np.asarray(out["b"]), np.full(8, 2, np.float32))
    assert out["b"].devices() == {devices[1]}


@pytest.mark.parametrize("make", [tuple, list], ids=["tuple", "list"])
def test_flat_sequence_outputs_keep_their_type(make):
    f = toolkit.jit(lambda a, b: make([a + 1, b * 2, a - b]))
    a, b = (toolkit.device_put(np.full(4, v, np.float32)) for v in (3, 2))
    for _ in range(2):
        out = f(a, b)
        assert type(out) is make and len(out) == 3
        np.testing.assert_array_equal(np.asarray(out[2]), np.full(4, 1, np.float32))


def test_output_builder_handles_only_flat_containers():
    flat_dict = toolkit.tree_util.tree_structure({"b": 0, "a": 0})
    build = call_trees.output_builder(flat_dict, 2)
    assert build(["x", "y"]) == {"a": "x", "b": "y"}
    nested = toolkit.tree_util.tree_structure({"a": (0, 0)})
    assert call_trees.output_builder(nested, 2) is None


def test_clear_cache_forgets_the_last_hits_too():
    f = toolkit.jit(lambda a: a + 1)
    x = toolkit.device_put(np.ones(4, np.float32))
    f(f(x))  # the last hit remembered
    f.clear_cache()
    fast = f._fast_path
    assert fast.entries == {} and fast.last_single is None and fast.last_many is None
    np.testing.assert_array_equal(np.asarray(f(x)), np.full(4, 2, np.float32))  # the full path, then remembered
    assert fast.last_single is None and len(fast.entries) == 1


# --- large trees through jaxlib's C++ pytrees (toolkit.runtime.native_pytrees) ---------------------


def _training_state(layers, shape=(4,)):
    """A dict of params and Adam moments: 3 * layers leaves, nested two deep."""
    def put(i):
        return toolkit.device_put(np.full(shape, i, np.float32))
    return {"params": {f"layer{i}": {"w": put(i)} for i in range(layers)},
            "m": {f"layer{i}": {"w": put(0)} for i in range(layers)},
            "v": {f"layer{i}": {"w": put(1)} for i in range(layers)}}


def _adam_like(state):
    return {"params": {k: {"w": p["w"] - 0.5 * state["m"][k]["w"]} for k, p in state["params"].items()},
            "m": {k: {"w": m["w"] + 1} for k, m in state["m"].items()}, "v": state["v"]}


def test_large_state_fed_back_flattens_in_cpp_and_matches_the_full_path(compilations):
    f = toolkit.jit(_adam_like)
    state = _training_state(40)  # 120 leaves: over NATIVE_FLATTEN_MIN_LEAVES
    out = state
    for step in range(4):
        out = f(out)
    assert compilations == [1]
    assert len(f._fast_path.native_trees) == 1  # remembered: later calls flatten in C++
    expected = {k: np.full(4, i - 0.5 * (0 + 1 + 2 + 3), np.float32) for i, k in enumerate(state["params"])}
    assert list(out) == ["m", "params", "v"] and list(out["params"]) == sorted(state["params"])
    for k, want in expected.items():
        np.testing.assert_array_equal(np.asarray(out["params"][k]["w"]), want)
        np.testing.assert_array_equal(np.asarray(out["m"][k]["w"]), np.full(4, 4, np.float32))
    assert toolkit.tree_util.tree_structure(out) == toolkit.tree_util.tree_structure(state)


def test_large_output_trees_keep_named_tuples_none_and_lists():
    import collections

    Moments = collections.namedtuple("Moments", "mu nu")

    def step(xs):
        return [Moments(x + 1, None) for x in xs], (xs[0], {"z": xs[1], "a": xs[2]})

    xs = [toolkit.device_put(np.full(2, i, np.float32)) for i in range(20)]
    f = toolkit.jit(step)
    for _ in range(2):
        out = f(xs)
        assert isinstance(out[0], list) and all(type(m) is Moments and m.nu is None for m in out[0])
        assert list(out[1][1]) == ["a", "z"]
        np.testing.assert_array_equal(np.asarray(out[0][7].mu), np.full(2, 8, np.float32))


def test_a_named_tuple_registered_later_is_flattened_its_new_way(compilations):
    import collections

    Pair = collections.namedtuple("Pair", "a b")
    f = toolkit.jit(lambda ps: [p.a * 2 + p.b for p in ps])
    pairs = [Pair(toolkit.device_put(np.float32(i)), toolkit.device_put(np.float32(-i))) for i in range(10)]
    f(pairs)
    np.testing.assert_array_equal([float(x) for x in f(pairs)], [float(i) for i in range(10)])
    assert f._fast_path.native_trees
    # From now on the children are (b, a), swapped: the C++ structures remembered before must not answer.
    toolkit.tree_util.register_pytree_node(Pair, lambda p: ((p.b, p.a), None), lambda _, ch: Pair(ch[1], ch[0]))
    np.testing.assert_array_equal([float(x) for x in f(pairs)], [float(i) for i in range(10)])
    assert compilations == [2]  # a new structure (a custom node now): traced and compiled again
    assert not f._fast_path.native_trees  # and not one jaxlib flattens the same


def test_non_string_keys_and_custom_nodes_stay_on_toolkits_flatten():
    import collections

    f = toolkit.jit(lambda d: {k: v + 1 for k, v in d.items()})
    by_int = {i: toolkit.device_put(np.float32(i)) for i in range(20)}
    ordered = collections.OrderedDict((f"k{i}", toolkit.device_put(np.float32(i))) for i in reversed(range(20)))
    for _ in range(2):
        out = f(by_int)
        assert list(out) == list(range(20)) and float(out[3]) == 4.0
        out = f(ordered)
        assert float(out["k3"]) == 4.0
    assert not f._fast_path.native_trees  # neither structure is one jaxlib flattens the same


def test_native_output_builder_only_for_large_built_in_trees():
    from toolkit.core import pytrees

    big = pytrees.tree_structure({"a": [0] * 20, "b": (0, None)})
    build = call_trees.native_output_builder(big, big.num_leaves)
    assert build is not None and build(list(range(21))) == {"a": list(range(20)), "b": (20, None)}
    assert call_trees.native_output_builder(pytrees.tree_structure([0, 0]), 2) is None  # small: toolkit's own
    import collections
    custom = pytrees.tree_structure(collections.OrderedDict(a=[0] * 20))
    assert call_trees.native_output_builder(custom, 20) is None


# --- block_until_ready --------------------------------------------------------------------------


def test_block_until_ready_waits_for_arrays_in_any_node_and_returns_its_argument():
    import collections

    @toolkit.tree_util.register_dataclass
    @__import__("dataclasses").dataclass
    class Box:
        x: object

    tree = {"a": [toolkit.device_put(np.ones(3)) for _ in range(5)],
            "b": collections.OrderedDict(c=toolkit.device_put(np.zeros(2))), "box": Box(toolkit.numpy.ones(2)),
            "n": None, "s": "not an array", "i": 3}
    assert toolkit.block_until_ready(tree) is tree
    single = toolkit.device_put(np.ones(2))
    assert toolkit.block_until_ready(single) is single
    assert toolkit.block_until_ready([]) == []


def test_block_until_ready_of_a_deleted_array_raises_its_own_error():
    arrays = [toolkit.device_put(np.ones(2)) for _ in range(3)]
    arrays[1].delete()
    with pytest.raises(Exception) as batched:
        toolkit.block_until_ready(arrays)
    with pytest.raises(Exception) as alone:
        arrays[1].block_until_ready()
    assert type(batched.value) is type(alone.value) and str(batched.value) == str(alone.value)


# --- eager operations ---------------------------------------------------------------------------


def _eager_executables():
    from toolkit.core import tracing
    return tracing._eager_handler.__self__  # the EagerExecutables install_eager_handlers made


def test_eager_scalar_operands_are_computed_once_and_recomputed_when_deleted():
    # x ** 1.5 binds its operations eagerly (toolkit's ufuncs run compiled whole, as JAX's jitted ones).
    x = toolkit.device_put(np.full(8, 4.0, np.float32))
    executables = _eager_executables()
    executables._constants.clear()
    numpy_core._SCALAR_OPERANDS.clear()
    np.testing.assert_allclose(np.asarray(x ** 1.5), np.full(8, 8, np.float32))
    kept = dict(executables._constants)
    assert len(kept) == 1  # the broadcast of the 1.5
    (operand,) = numpy_core._SCALAR_OPERANDS.values()  # toolkit.numpy keeps the same Array, found from x and 1.5
    assert [operand] == list(kept.values())[0]
    np.testing.assert_allclose(np.asarray(x ** 1.5), np.full(8, 8, np.float32))
    assert executables._constants == kept
    for outs in kept.values():
        for out in outs:
            out.delete()
    np.testing.assert_allclose(np.asarray(x ** 1.5), np.full(8, 8, np.float32))  # computed again
    assert all(not o.is_deleted() for outs in executables._constants.values() for o in outs)


def test_eager_constants_are_told_apart_by_type_and_value():
    x = toolkit.device_put(np.ones(4, np.float32))
    assert float((x + 1)[0]) == 2.0 and float((x + 1.5)[0]) == 2.5 and float((x + True)[0]) == 2.0
    assert float((x * -0.0)[0]) == 0.0 and np.signbit(np.asarray(x * -0.0)[0])
    assert float((x * 0.0)[0]) == 0.0 and not np.signbit(np.asarray(x * 0.0)[0])
    i = toolkit.device_put(np.ones(4, np.int32))
    assert (i + 1).dtype == np.int32 and (i + 1.0).dtype == np.float32


def test_large_eager_constants_are_not_kept():
    executables = _eager_executables()
    executables._constants.clear()
    x = toolkit.device_put(np.ones(4096, np.float32))
    np.testing.assert_array_equal(np.asarray(x + 1), np.full(4096, 2, np.float32))
    assert not executables._constants  # 16 KB of broadcast 1s: over CONSTANT_MAX_BYTES


# --- eager operations on an Array and a Python scalar (toolkit.numpy's kept scalar operands) ---------------------

@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv"])
@pytest.mark.parametrize("scalar", [1, 2.5, -0.0])
@pytest.mark.parametrize("kind", ["float32", "int32", "bfloat16", "weak float32", "float32[]"])
def test_array_and_python_scalar_as_jax(op, scalar, kind):
    """Both operand orders, twice (the general path, then the kept operand): values, dtype and weak type as JAX's."""
    jax = pytest.importorskip("jax")
    import operator

    if op == "truediv" and kind == "int32":
        pytest.skip("toolkit's int / float is strongly typed where JAX's is weak (true_divide, before this path)")
    fn = getattr(operator, op)

    def make(lib):
        if kind == "weak float32":
            return lib.lax.full((4,), 2.0)  # weakly typed, as a Python scalar's broadcast
        shape = () if kind == "float32[]" else (4,)
        return lib.device_put(np.full(shape, 3, np.dtype(kind.split("[")[0]) if kind != "bfloat16"
                                      else jax.numpy.bfloat16))
    ours, theirs = make(toolkit), make(jax)
    for _ in range(2):
        for left, right, jleft, jright in ((ours, scalar, theirs, scalar), (scalar, ours, scalar, theirs)):
            got, want = fn(left, right), fn(jleft, jright)
            assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
            # (JAX folds an eager scalar divisor into its executable, a reciprocal: 3/7 may differ in the last bit)
            np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=1e-6)
            assert np.signbit(np.asarray(got, np.float32)).tolist() == np.signbit(np.asarray(want, np.float32)).tolist()


# --- eager operations on numpy operands (toolkit.numpy's put of same-typed numpy arrays) ------------------------

@pytest.mark.parametrize("op", ["add", "mul", "lt"])
@pytest.mark.parametrize("left, right", [
    ("Array float32", "numpy float32"), ("numpy float32", "Array float32"), ("numpy float32", "numpy float32"),
    ("Array float32", "numpy float64"), ("numpy int64", "numpy int64"), ("Array int32", "numpy int64"),
    ("Array float32", "numpy int32"), ("weak Array float32", "numpy float32"), ("Array float32", "numpy float32[]"),
    ("numpy bool", "Array bool"), ("Array float32", "numpy float32 strided"), ("Array float32[2,3]", "numpy float32[3]"),
])
def test_array_and_numpy_operands_as_jax(op, left, right):
    """Both libraries, twice (the second from the kept executables): values, dtype, weak type and shape as JAX's."""
    jax = pytest.importorskip("jax")
    import operator

    fn = getattr(operator, op)

    def make(lib, spec):
        shape = (2, 3) if "[2,3]" in spec else (3,) if "[3]" in spec else () if "[]" in spec else (6,)
        dtype = np.dtype(spec.split()[-1 if "strided" not in spec else -2].split("[")[0])
        value = (np.arange(12) % 5).astype(dtype)[::2] if "strided" in spec \
            else (np.arange(int(np.prod(shape))) % 5).astype(dtype).reshape(shape)
        if spec.startswith("numpy"):
            return value
        if spec.startswith("weak"):
            return lib.lax.full(shape, 2.0)
        return lib.device_put(value)
    ours, theirs = (make(toolkit, left), make(toolkit, right)), (make(jax, left), make(jax, right))
    if type(ours[0]) is np.ndarray and type(ours[1]) is np.ndarray:  # numpy's own operators would answer
        ours, theirs = (toolkit.numpy.asarray(ours[0]), ours[1]), (jax.numpy.asarray(theirs[0]), theirs[1])
    for _ in range(2):
        got, want = fn(*ours), fn(*theirs)
        assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    for name in ("add", "multiply", "less"):  # toolkit.numpy's functions take two numpy arrays too
        got, want = getattr(toolkit.numpy, name)(*map(np.asarray, ours)), getattr(jax.numpy, name)(*map(np.asarray, theirs))
        assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_numpy_operands_in_a_trace_stay_constants_of_the_program():
    values = np.arange(4, dtype=np.float32)
    f = toolkit.jit(lambda x: x + values)
    assert "stablehlo.constant" in f.lower(toolkit.device_put(np.ones(4, np.float32))).as_text()
    np.testing.assert_array_equal(np.asarray(f(np.ones(4, np.float32))), values + 1)


@pytest.mark.parametrize("level", ["disallow", "log"])
def test_numpy_operands_of_eager_operations_are_transfers_under_a_guard_as_jax(level):
    jax = pytest.importorskip("jax")
    x = np.ones(4, np.float32)
    ours, theirs = toolkit.device_put(x), jax.device_put(x)
    ours + x, theirs + x  # compiled outside the guard
    outcomes = []
    for guard, array in ((toolkit.transfer_guard, ours), (jax.transfer_guard, theirs)):
        with guard(level):
            try:
                array + x
                outcomes.append("ok")
            except Exception as error:  # jaxlib's JaxRuntimeError in both
                outcomes.append("Disallowed host-to-device transfer" in str(error))
    assert outcomes[0] == outcomes[1] == ("ok" if level == "log" else True)


def test_warm_eager_x_plus_1_is_one_compiled_call(monkeypatch, compilations):
    from toolkit.core import tracing
    x = toolkit.device_put(np.ones(8, np.float32))
    x + 1, 1 - x  # warm: each ufunc's program compiled (as JAX's jitted add and subtract), the 1 kept on the device
    ran = []
    handler = tracing._eager_handler

    def counting(primitive, args, params):
        ran.append(primitive.name)
        return handler(primitive, args, params)
    monkeypatch.setattr(tracing, "_eager_handler", counting)
    before = compilations[0]
    np.testing.assert_array_equal(np.asarray(x + 1), np.full(8, 2, np.float32))
    np.testing.assert_array_equal(np.asarray(1 - x), np.zeros(8, np.float32))
    np.testing.assert_array_equal(np.asarray(x + 2), np.full(8, 3, np.float32))  # another value: the same program
    assert ran == [] and compilations[0] == before  # no operation bound eagerly, nothing compiled


def test_eager_scalar_operand_overflow_raises_every_time():
    i = toolkit.device_put(np.ones(4, np.int32))
    for _ in range(2):
        with pytest.raises(OverflowError, match="1099511627776"):
            i + 2**40
    assert (i + 2**30).dtype == np.int32


@pytest.mark.x64
def test_eager_scalar_operands_follow_x64_as_jax():
    jax = pytest.importorskip("jax")
    for dtype in (np.int32, np.int64, np.float32, np.float64):
        ours, theirs = toolkit.device_put(np.ones(4, dtype)), jax.device_put(np.ones(4, dtype))
        for scalar in (1, 1.5):
            for _ in range(2):
                got, want = ours + scalar, theirs + scalar
                assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    with toolkit.enable_x64(False):
        i = toolkit.device_put(np.ones(4, np.int32))
        assert (i + 1.5).dtype == np.float32  # not the float64 kept under x64 on


@pytest.mark.parametrize("level", ["disallow", "log"])
def test_warm_eager_scalar_operands_are_transfers_under_a_guard_as_jax(level):
    jax = pytest.importorskip("jax")
    ours, theirs = toolkit.device_put(np.ones(4, np.float32)), jax.device_put(np.ones(4, np.float32))
    ours + 1, theirs + 1  # warm: kept operands and constants must not hide the upload
    outcomes = []
    for guard, x in ((toolkit.transfer_guard, ours), (jax.transfer_guard, theirs)):
        with guard(level):
            try:
                x + 1
                outcomes.append("ok")
            except Exception as error:  # jaxlib's JaxRuntimeError in both
                outcomes.append("Disallowed host-to-device transfer" in str(error))
    assert outcomes[0] == outcomes[1] == ("ok" if level == "log" else True)


def test_warm_eager_scalar_operands_under_debug_nans_as_jax():
    jax = pytest.importorskip("jax")
    ours, theirs = toolkit.device_put(np.zeros(4, np.float32)), jax.device_put(np.zeros(4, np.float32))
    assert np.isnan(np.asarray(ours / 0.0)).all() and np.isnan(np.asarray(ours / 0.0)).all()
    with toolkit.debug_nans(True), pytest.raises(FloatingPointError):
        ours / 0.0
    with jax.debug_nans(True), pytest.raises(FloatingPointError):
        theirs / 0.0


def test_eager_scalar_operands_keep_only_small_broadcasts():
    numpy_core._SCALAR_OPERANDS.clear()
    x = toolkit.device_put(np.ones(4096, np.float32))
    np.testing.assert_array_equal(np.asarray(x + 3), np.full(4096, 4, np.float32))
    assert not numpy_core._SCALAR_OPERANDS  # 16 KB: over SCALAR_OPERAND_MAX_BYTES


def test_eager_ops_on_two_arrays_as_jax():
    """Equal strong types skip promotion; weak, mixed and broadcast operands take the general path."""
    jax = pytest.importorskip("jax")

    def operands(lib):
        f32, i32 = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.int32)
        return [(lib.device_put(f32), lib.device_put(f32 + 1)), (lib.device_put(i32), lib.device_put(f32)),
                (lib.device_put(f32), lib.lax.full((4,), 2.0)), (lib.device_put(f32.reshape(4, 1)), lib.device_put(f32))]
    for _ in range(2):
        for (x, y), (jx, jy) in zip(operands(toolkit), operands(jax)):
            for got, want in ((x + y, jx + jy), (y * x, jy * jx), (x - y, jx - jy)):
                assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_eager_op_last_hit_follows_config_changes():
    z = toolkit.device_put(np.zeros(4, np.float32))
    for _ in range(2):  # warm: the primitive's last hit is the unchecked executable
        assert np.isnan(np.asarray(z / z)).all()
    with toolkit.debug_nans(True), pytest.raises(FloatingPointError):
        z / z
    assert np.isnan(np.asarray(z / z)).all()  # and back
    with toolkit.no_execution(True), pytest.raises(RuntimeError, match="no_execution"):
        z / z


def test_eager_ops_on_committed_arrays_run_where_they_live():
    devices = toolkit.devices()
    if len(devices) < 2:
        pytest.skip("needs two devices")
    x = toolkit.device_put(np.ones(4, np.float32))
    x + x  # warm, uncommitted
    on_1 = toolkit.device_put(np.ones(4, np.float32), devices[1])
    for _ in range(2):
        out = on_1 + on_1
        assert out.devices() == {devices[1]} and out.committed
        np.testing.assert_array_equal(np.asarray(out), np.full(4, 2, np.float32))
        out = on_1 + 1
        assert out.devices() == {devices[1]}


# --- numpy arguments of jit calls -----------------------------------------------------------------


def test_numpy_arguments_of_their_parameter_type_are_put_directly(monkeypatch):
    from toolkit.runtime import arrays as runtime_arrays

    put = []
    original = runtime_arrays.put_shards
    monkeypatch.setattr(runtime_arrays, "put_shards", lambda *a, **k: put.append(a[2]) or original(*a, **k))
    f = toolkit.jit(lambda a, b, c, d: (a + b.sum(), c * 2, d + 1))
    exact, strided = np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(12, dtype=np.float32)[::2]
    wide, scalar = np.arange(3, dtype=np.float64), np.float32(2.5)  # float64 under x64 off: converted
    for _ in range(2):  # compiled, then from the cache
        put.clear()
        a, c, d = f(exact, strided, wide, scalar)
        np.testing.assert_array_equal(np.asarray(a), exact + strided.sum())
        np.testing.assert_array_equal(np.asarray(c), wide.astype(np.float32) * 2)
        assert c.dtype == np.float32 and float(d) == 3.5
        assert sum(1 for shards in put if shards[0] is exact) == 1  # the array itself, no conversion or copy
        assert not any(shards[0] is strided for shards in put)  # not contiguous: made so first


def test_the_last_numpy_call_puts_arrays_of_the_same_type_without_the_general_key(monkeypatch):
    f = toolkit.jit(lambda x, y, n: (x * n + y.ravel()).sum(), static_argnums=2)
    x, y = np.arange(6, dtype=np.float32), np.ones((2, 3), np.float32)
    for i in range(3):  # compiled, then found by the general key twice (then remembered)
        assert float(f(x + i, y, 2)) == float(((x + i) * 2 + y.ravel()).sum())
    assert any(type(k) is dispatch.KeptHostArray for k in f._fast_path.last_general.args)
    keys = []
    original = dispatch.FastPath.general_key
    monkeypatch.setattr(dispatch.FastPath, "general_key", lambda self, a, k: keys.append(1) or original(self, a, k))
    strided = np.arange(12, dtype=np.float32)[::2]  # not contiguous: made so on the way
    for value in (x * 3, strided, np.zeros(6, np.float32)):  # new values, the same type: put, no general key
        assert float(f(value, y, 2)) == float((value * 2 + y.ravel()).sum())
    assert not keys
    for other in (np.arange(6, dtype=np.float64), np.arange(1, dtype=np.float32), np.arange(6, dtype=np.int32),
                  np.float32(2.0), x.view(np.matrix)):  # another dtype, shape or type: the general path decides
        assert float(f(other, y, 2)) == pytest.approx(float((np.asarray(other, np.float32) * 2 + y.ravel()).sum()))
    assert len(keys) >= 5


@pytest.mark.parametrize("level", ["disallow", "log"])
def test_numpy_arguments_put_directly_are_transfers_under_a_guard_as_jax(level):
    jax = pytest.importorskip("jax")
    x = np.ones(4, np.float32)
    f, g = toolkit.jit(lambda a: a * 2), jax.jit(lambda a: a * 2)
    f(x), g(x), f(x), f(x)  # compiled outside the guard, the call remembered (FastPath.last_general)
    assert any(type(k) is dispatch.KeptHostArray for k in f._fast_path.last_general.args)
    outcomes = []
    for guard, fun in ((toolkit.transfer_guard, f), (jax.transfer_guard, g)):
        with guard(level):
            try:
                fun(x)
                outcomes.append("ok")
            except Exception as error:  # jaxlib's JaxRuntimeError in both
                outcomes.append("Disallowed host-to-device transfer" in str(error))
    assert outcomes[0] == outcomes[1] == ("ok" if level == "log" else True)


# --- calls with static, keyword and host scalar arguments (FastPath.call_general) -----------------


def test_static_keyword_and_scalar_calls_are_answered_without_the_full_path(compilations, monkeypatch):
    from toolkit import stages

    f = toolkit.jit(lambda x, n, *, scale, shift=0.0: x * n * scale + shift, static_argnums=1)
    x = toolkit.device_put(np.arange(4, dtype=np.float32))
    expected = np.arange(4, dtype=np.float32) * 3 * 2 + 0.5
    np.testing.assert_array_equal(np.asarray(f(x, 3, scale=2.0, shift=0.5)), expected)
    signatures = []
    original = stages.Wrapped._signature
    monkeypatch.setattr(stages.Wrapped, "_signature", lambda self, a, k: signatures.append(1) or original(self, a, k))
    for _ in range(3):  # equal calls: the general fast path, no signature
        np.testing.assert_array_equal(np.asarray(f(x, 3, scale=2.0, shift=0.5)), expected)
    assert not signatures and compilations[0] == 1
    np.testing.assert_array_equal(np.asarray(f(x, 4, scale=2.0, shift=0.5)),  # another static value
                                  np.arange(4, dtype=np.float32) * 4 * 2 + 0.5)
    np.testing.assert_array_equal(np.asarray(f(x, 3, scale=1.0)), np.arange(4, dtype=np.float32) * 3)
    assert compilations[0] == 3  # and the keyword set without shift is another tree
    np.testing.assert_array_equal(np.asarray(f(x, 3, scale=2, shift=0.5)), expected)  # an int scale: another aval
    assert compilations[0] == 4


def test_general_fast_path_keys_the_scalar_type_the_x64_mode_and_the_pipeline(compilations):
    f = toolkit.jit(lambda x, s: x + s)
    x = toolkit.device_put(np.arange(3, dtype=np.int32))
    for _ in range(2):
        assert f(x, 1).dtype == np.int32 and f(x, 1.5).dtype == np.float32
    with toolkit.enable_x64(True):
        assert f(x, 1.5).dtype == np.float64  # weak float: the widest float under x64
    assert f(x, 1.5).dtype == np.float32
    assert f(x, True).dtype == np.int32 and np.asarray(f(x, True)).tolist() == [1, 2, 3]
    from toolkit.passes import default_pipeline
    saved = default_pipeline.JIT_PIPELINE
    try:  # a new pipeline generation: the remembered calls are not used, the executable is found again
        toolkit.passes.set_jit_pipeline(saved)
        assert f._fast_path.call_general((x, 1), {}) is dispatch.MISS
        np.testing.assert_array_equal(np.asarray(f(x, 1)), [1, 2, 3])
    finally:
        toolkit.passes.set_jit_pipeline(saved)
    compiled = compilations[0]
    f(x, 1), f(x, 1.5)
    assert compilations[0] == compiled


def test_unhashable_static_error_is_jaxs_word_for_word():
    # jaxlib's message shows the value's str: "[0 1 2]" for a numpy array (toolkit's showed its repr).
    jax = pytest.importorskip("jax")
    for value in ([0, 1], np.arange(3), {"a": 1}):
        with pytest.raises(ValueError) as want:
            jax.jit(lambda x, s: x, static_argnums=1)(1.0, value)
        with pytest.raises(ValueError) as got:
            toolkit.jit(lambda x, s: x, static_argnums=1)(1.0, value)
        assert str(got.value) == str(want.value)


def test_general_fast_path_falls_back_for_unhashable_statics_and_other_devices():
    f = toolkit.jit(lambda x, axis: x.sum(axis), static_argnames="axis")
    x = toolkit.device_put(np.ones((2, 3), np.float32))
    assert f(x, axis=0).shape == (3,)
    for _ in range(2):  # never remembered: the full path's error each time
        with pytest.raises(ValueError, match="Non-hashable static arguments"):
            f(x, axis=[0])
    devices = toolkit.devices()
    if len(devices) > 1:
        on_1 = toolkit.device_put(np.ones((2, 3), np.float32), devices[1])
        out = f(on_1, axis=0)
        assert out.devices() == {devices[1]}


def test_the_last_static_call_is_compared_again_not_rehashed(compilations, monkeypatch):
    # FastPath.last_general: a call equal to the last general hit (Arrays with the same aval objects, static
    # values of the same types and equal) skips the general key; anything else takes the general path.
    f = toolkit.jit(lambda x, n, *, axis, keepdims=False: x.sum(axis, keepdims=keepdims) * n,
                    static_argnums=1, static_argnames=("axis", "keepdims"))
    x = toolkit.device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
    expected = np.arange(6, dtype=np.float32).reshape(2, 3).sum(1) * 2
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(x, 2, axis=1)), expected)
    assert f._fast_path.last_general is not None and compilations[0] == 1
    keys = []
    original = dispatch.FastPath.general_key
    monkeypatch.setattr(dispatch.FastPath, "general_key", lambda self, a, k: keys.append(1) or original(self, a, k))
    np.testing.assert_array_equal(np.asarray(f(x, 2, axis=1)), expected)
    assert not keys  # compared with the last hit, not keyed
    # 2.0 is not the last hit's int (another type), but an equal static value, as in JAX: the general key finds
    # the same program.
    np.testing.assert_array_equal(np.asarray(f(x, 2.0, axis=1)), expected)
    assert keys and compilations[0] == 1
    np.testing.assert_array_equal(np.asarray(f(x, 2, axis=1, keepdims=True)), expected[:, None])
    np.testing.assert_array_equal(np.asarray(f(x, 2, axis=0)), np.arange(6, dtype=np.float32).reshape(2, 3).sum(0) * 2)
    assert compilations[0] == 3
    with pytest.raises(ValueError, match="Non-hashable static arguments"):  # an array where a static value was
        f(x, np.array([2, 3]), axis=0)
    with toolkit.enable_x64(True):  # another configuration: not the last hit's executable
        assert f(toolkit.device_put(np.ones((2, 3), np.float64)), 2, axis=0).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(f(x, 2, axis=1)), expected)


def test_keyword_arrays_of_the_last_call_go_in_flattening_order(compilations, monkeypatch):
    # Dynamic keyword Arrays are compared by aval object too; their leaves follow the positional ones in the
    # order of their names (as flattening gives them), whatever order the call wrote them in.
    f = toolkit.jit(lambda x, *, by, c: x * by + c)
    x = toolkit.device_put(np.arange(3, dtype=np.float32))
    two, one = toolkit.device_put(np.full(3, 2, np.float32)), toolkit.device_put(np.ones(3, np.float32))
    for _ in range(3):  # compiled, then found by the general key twice (then remembered)
        np.testing.assert_array_equal(np.asarray(f(x, c=one, by=two)), [1, 3, 5])
    keys = []
    original = dispatch.FastPath.general_key
    monkeypatch.setattr(dispatch.FastPath, "general_key", lambda self, a, k: keys.append(1) or original(self, a, k))
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(x, c=one, by=two)), [1, 3, 5])
        np.testing.assert_array_equal(np.asarray(f(x, by=two, c=one)), [1, 3, 5])
    assert not keys  # answered by the last hit
    np.testing.assert_array_equal(np.asarray(f(x, c=two, by=one)), [2, 3, 4])
    np.testing.assert_array_equal(np.asarray(f(x, by=one, c=np.float32(5))), [5, 6, 7])  # a host scalar: keyed
    assert compilations[0] == 2


def test_host_scalar_arguments_are_uploaded_once_per_value(monkeypatch):
    from toolkit.runtime import arrays as runtime_arrays

    x = toolkit.device_put(np.linspace(-2, 2, 5, dtype=np.float32))
    put = []
    original = runtime_arrays.put_shards
    monkeypatch.setattr(runtime_arrays, "put_shards", lambda *a, **k: put.append(a[2][0]) or original(*a, **k))
    dispatch._PLACED_SCALARS.clear()
    f = toolkit.jit(lambda x, lo, hi: toolkit.numpy.clip(x, lo, hi))
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(x, 0, 1)), np.clip(np.linspace(-2, 2, 5), 0, 1))
    assert len(put) == 2  # 0 and 1, once each
    g = toolkit.jit(lambda s: 1.0 / s)
    assert np.asarray(g(0.0)) == np.inf and np.asarray(g(-0.0)) == -np.inf  # the sign is part of the value
    assert np.asarray(g(np.float32(-0.0))) == -np.inf and np.asarray(g(np.array(0.0, np.float32))) == np.inf
    add = toolkit.jit(lambda x, s: x + s)
    ints = toolkit.device_put(np.ones(2, np.int32))
    assert np.asarray(add(ints, 1)).tolist() == [2, 2]
    for _ in range(2):  # the remembered call's executable, but the value does not fit its int32: as the full path
        with pytest.raises(OverflowError):
            add(ints, 2**40)
    with pytest.raises(TypeError, match="not a valid jit argument|object"):
        add(ints, np.array([object()] * 2))


def test_the_last_scalar_call_is_compared_again_by_type_value_and_sign(monkeypatch):
    f = toolkit.jit(lambda x, s: x * s)
    x = toolkit.device_put(np.ones(2, np.float32))
    for _ in range(3):  # compiled, then found by the general key twice (then remembered)
        np.testing.assert_array_equal(np.asarray(f(x, 2.0)), [2, 2])
    assert f._fast_path.last_general.scalars
    keys = []
    original = dispatch.FastPath.general_key
    monkeypatch.setattr(dispatch.FastPath, "general_key", lambda self, a, k: keys.append(1) or original(self, a, k))
    np.testing.assert_array_equal(np.asarray(f(x, 2.0)), [2, 2])
    assert not keys  # the kept upload of 2.0, without the general key
    for value, expected in ((2, [2, 2]), (True, [1, 1]), (3.0, [3, 3]), (float("nan"), [np.nan] * 2)):
        for _ in range(3):  # another type or value takes the general key; NaN equals nothing, every time
            out = f(x, value)
            np.testing.assert_array_equal(np.asarray(out), expected)
            assert out.dtype == np.float32
    assert len(keys) >= 4
    g = toolkit.jit(lambda s: 1.0 / s)
    for _ in range(3):
        assert float(g(0.0)) == np.inf
    assert float(g(-0.0)) == -np.inf and float(g(0.0)) == np.inf  # 0.0 == -0.0, but the sign is the value
    with toolkit.transfer_guard("disallow"), pytest.raises(Exception, match="Disallowed host-to-device transfer"):
        g(0.0)  # the kept upload stands in only while host transfers are unguarded, as in JAX
    assert float(g(0.0)) == np.inf


@pytest.mark.parametrize("level", ["disallow", "log"])
def test_warm_host_scalar_arguments_are_transfers_under_a_guard_as_jax(level):
    jax = pytest.importorskip("jax")
    f, g = toolkit.jit(lambda a, s: a * s), jax.jit(lambda a, s: a * s)
    ours, theirs = toolkit.device_put(np.ones(4, np.float32)), jax.device_put(np.ones(4, np.float32))
    # Compiled, the scalar kept and the call remembered (FastPath.last_general), outside the guard.
    f(ours, 2.0), g(theirs, 2.0), f(ours, 2.0), f(ours, 2.0)
    assert f._fast_path.last_general is not None and f._fast_path.last_general.scalars
    outcomes = []
    for guard, fun, x in ((toolkit.transfer_guard, f, ours), (jax.transfer_guard, g, theirs)):
        with guard(level):
            try:
                fun(x, 2.0)
                outcomes.append("ok")
            except Exception as error:  # jaxlib's JaxRuntimeError in both
                outcomes.append("Disallowed host-to-device transfer" in str(error))
    assert outcomes[0] == outcomes[1] == ("ok" if level == "log" else True)


def test_a_donated_host_scalar_is_not_kept():
    f = toolkit.jit(lambda s: s + 1, donate_argnums=0)
    dispatch._PLACED_SCALARS.clear()  # (a worker's earlier tests kept theirs)
    for _ in range(2):
        assert float(f(np.float32(1.0))) == 2.0
    assert not dispatch._PLACED_SCALARS


# --- Compiled.__call__ (dispatch.call_compiled) -------------------------------------------------------


def test_a_compiled_function_answers_calls_seen_before_without_checks_and_still_rejects_others(monkeypatch):
    from toolkit import stages

    compiled = toolkit.jit(_inc_tree).lower(_params(["a", "b"])).compile()
    params = _params(["a", "b"])
    out = compiled(params)
    signatures = []
    original = stages.Wrapped._signature
    monkeypatch.setattr(stages.Wrapped, "_signature", lambda self, a, k: signatures.append(1) or original(self, a, k))
    for step in range(3):  # fed back: the executable's own fast path
        out = compiled(out)
        np.testing.assert_array_equal(np.asarray(out["b"]), np.full(8, 3 + step, np.float32))
    assert not signatures
    with pytest.raises(TypeError, match=r"has type f32\[2\], but it was compiled for f32\[8\]"):
        compiled(_params(["a", "b"], shape=(2,)))
    with pytest.raises(TypeError, match="tree structure"):
        compiled(_params(["a", "c"]))
    mixed = {"a": params["a"], "b": np.full(8, 5, np.float32)}  # a numpy leaf: checked and placed
    np.testing.assert_array_equal(np.asarray(compiled(mixed)["b"]), np.full(8, 6, np.float32))


def test_a_compiled_function_refuses_arrays_committed_elsewhere_after_warm_calls_too():
    devices = toolkit.devices()
    if len(devices) < 2:
        pytest.skip("needs two devices")
    compiled = toolkit.jit(lambda a: a * 2).lower(np.ones(4, np.float32)).compile()
    x = toolkit.device_put(np.ones(4, np.float32))
    compiled(x), compiled(x)  # remembered
    elsewhere = toolkit.device_put(np.full(4, 3, np.float32), devices[1])  # not laid out as compiled: full path
    for _ in range(2):
        with pytest.raises(ValueError, match=r"committed to devices \[1\], but the computation runs on \[0\]"):
            compiled(elsewhere)
    np.testing.assert_array_equal(np.asarray(compiled(x)), np.full(4, 2, np.float32))


def test_large_numpy_trees_called_again_flatten_in_cpp_and_follow_x64(compilations, monkeypatch):
    from toolkit.core import pytrees

    f = toolkit.jit(lambda p, *, scale: {k: v * scale for k, v in p.items()})
    tree = {f"w{i:02d}": np.full(3, i, np.float64) for i in range(20)}  # float64: float32 with x64 off
    for _ in range(2):
        out = f(tree, scale=2)
        assert out["w07"].dtype == np.float32 and np.asarray(out["w07"]).tolist() == [14.0] * 3
    assert f._fast_path.native_trees  # the (args, kwargs) structure is known to jaxlib's flatten now
    flattened = []
    original = pytrees.tree_flatten
    with monkeypatch.context() as patch:
        patch.setattr(pytrees, "tree_flatten", lambda *a, **k: flattened.append(1) or original(*a, **k))
        np.testing.assert_array_equal(np.asarray(f(tree, scale=2)["w19"]), np.full(3, 38, np.float32))
    assert not flattened and compilations[0] == 1
    with toolkit.enable_x64(True):
        assert f(tree, scale=2)["w07"].dtype == np.float64  # another aval under x64: another executable
    assert f(tree, scale=2)["w07"].dtype == np.float32 and compilations[0] == 2


def test_a_program_that_ignores_an_argument_is_answered_by_the_fast_path(monkeypatch):
    # jit(zeros_like) keeps none of its inputs (kept_var_idx), and every call of it took the full path: 12.5 us
    # a call against 5 for x * 2. The fast caller now passes only the kept arguments, after checking all of them.
    from toolkit import stages

    x = toolkit.device_put(np.arange(4, dtype=np.float32))
    zeros = toolkit.jit(toolkit.numpy.zeros_like)
    first = toolkit.jit(lambda a, b: a * 2)
    compiled = toolkit.jit(lambda a, b: b + 1).lower(x, x).compile()
    for _ in range(2):  # the second calls are remembered ones
        zeros(x), first(x, x), compiled(x, x)
    y = x + 1
    signatures = []
    original = stages.Wrapped._signature
    monkeypatch.setattr(stages.Wrapped, "_signature", lambda self, a, k: signatures.append(1) or original(self, a, k))
    np.testing.assert_array_equal(np.asarray(zeros(x)), np.zeros(4, np.float32))
    np.testing.assert_array_equal(np.asarray(first(x, y)), np.arange(4, dtype=np.float32) * 2)
    np.testing.assert_array_equal(np.asarray(compiled(y, x)), np.arange(4, dtype=np.float32) + 1)
    assert not signatures
    assert toolkit.jit(lambda a, b: a).lower(x, x).kept_var_idx == (0,)


def test_argument_paths_named_once_per_structure():
    from toolkit.core import pytrees

    tree = pytrees.tree_structure(((0, {"w": 0, "b": 0}), {"scale": 0}))
    first = call_trees.argument_paths(tree, (1,))
    assert first == ["args[0]", "args[2]['b']", "args[2]['w']", "scale"]
    first.append("changed by the caller")  # each call gets its own list
    assert call_trees.argument_paths(tree, (1,)) == ["args[0]", "args[2]['b']", "args[2]['w']", "scale"]
    assert call_trees.argument_paths(tree) == ["args[0]", "args[1]['b']", "args[1]['w']", "scale"]



def test_a_call_unlike_the_last_general_hit_is_compared_with_it_once(monkeypatch):
    # Wrapped.__call__ compares a call with the last general hit first; the general path it takes when that
    # differs does not compare again.
    f = toolkit.jit(lambda a, k: a * k, static_argnums=1)
    x = toolkit.device_put(np.ones(4, np.float32))
    for k in (3, 2, 2, 2):  # both compiled; the last general hit is k=2 (remembered on a repeat)
        f(x, k)
    compared = []
    same_as_last = dispatch.FastPath._same_as_last
    monkeypatch.setattr(dispatch.FastPath, "_same_as_last",
                        lambda self, *a: compared.append(1) or same_as_last(self, *a))
    np.testing.assert_array_equal(np.asarray(f(x, 3)), np.full(4, 3, np.float32))  # unlike k=2: the general key
    assert len(compared) == 1
