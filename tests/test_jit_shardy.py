"""jit partitioned with Shardy (``TOOLKIT_PARTITIONER=shardy`` / ``lower(partitioner="shardy")``) on 8 CPU devices."""

import os

os.environ["TOOLKIT_NUM_CPU_DEVICES"] = "8"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402

import toolkit  # noqa: E402
from toolkit import lax  # noqa: E402
import toolkit.numpy as tnp  # noqa: E402
from toolkit.passes.sharding_annotate import annotate_shardings  # noqa: E402
from toolkit.shard import GSPMDSharding, Mesh, NamedSharding, PartitionSpec as P  # noqa: E402
from toolkit.sharding_plan import partitioner_choice  # noqa: E402

# The same mesh, model and reference as the GSPMD tests: only the partitioner differs.
from test_jit_sharding import _params, _reference, mlp  # noqa: E402

pytestmark = pytest.mark.multidevice


@pytest.fixture
def shardy(monkeypatch):
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")


def test_batch_sharded_mlp(mesh, shardy):
    rng = np.random.default_rng(0)
    params, x = _params(rng), rng.standard_normal((8, 16)).astype(np.float32)
    batch = NamedSharding(mesh, P("x"))
    f = toolkit.jit(mlp, in_shardings=(NamedSharding(mesh, P()), batch), out_shardings=batch)
    text = f.lower(params, x).as_text()
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in text and "mhlo.sharding" not in text
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in text
    out = f(params, x)
    np.testing.assert_allclose(np.asarray(out), _reference(params, x), rtol=1e-5, atol=1e-5)
    assert out.sharding == batch
    assert all(s.data.shape == (4, 8) for s in out.addressable_shards)


def test_model_parallel_mlp_matches_gspmd(mesh, monkeypatch):
    rng = np.random.default_rng(1)
    params, x = _params(rng), rng.standard_normal((8, 16)).astype(np.float32)
    shardings = ((NamedSharding(mesh, P(None, "y")), NamedSharding(mesh, P("y"))),
                 (NamedSharding(mesh, P("y", None)), NamedSharding(mesh, P())))
    placed = toolkit.device_put(params, shardings)
    xs = toolkit.device_put(x, NamedSharding(mesh, P("x")))
    gspmd = toolkit.jit(mlp)(placed, xs)
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "shardy")
    f = toolkit.jit(mlp)
    assert "sdy.sharding" in f.lower(placed, xs).as_text()
    out = f(placed, xs)
    np.testing.assert_allclose(np.asarray(out), _reference(params, x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(out), np.asarray(gspmd), rtol=1e-5, atol=1e-5)


def test_compiled_reports_requested_shardings(mesh):
    x = np.ones((8, 8), np.float32)
    row = NamedSharding(mesh, P("x"))
    lowered = toolkit.jit(lambda a: a * 2, in_shardings=row, out_shardings=row).trace(x).lower(partitioner="shardy")
    compiled = lowered.compile()
    (arg,), _ = compiled.input_shardings
    assert arg.is_equivalent_to(row, 2)
    assert compiled.output_shardings.is_equivalent_to(row, 2)
    np.testing.assert_allclose(np.asarray(compiled(x)), x * 2)


def test_xla_chooses_unspecified_output_sharding(mesh, shardy):
    col = NamedSharding(mesh, P(None, "y"))
    out = toolkit.jit(lambda a: a + 1, in_shardings=col)(np.ones((8, 8), np.float32))
    assert out.sharding.is_equivalent_to(col, 2)


def test_with_sharding_constraint(mesh, shardy):
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    target = NamedSharding(mesh, P("y", "x"))
    f = toolkit.jit(lambda a: lax.with_sharding_constraint(a * 2, target) + 1)
    text = f.lower(x).as_text()
    assert 'sdy.sharding_constraint %1 <@mesh, [{"y"}, {"x"}]>' in text
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in text and "@Sharding" not in text
    out = f(x)
    np.testing.assert_allclose(np.asarray(out), x * 2 + 1)
    assert out.sharding.is_equivalent_to(target, 2)


def test_keyword_overrides_environment(mesh, shardy):
    x = np.ones((8, 8), np.float32)
    f = toolkit.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("x")))
    text = f.trace(x).lower(partitioner="gspmd").as_text()
    assert "mhlo.sharding" in text and "sdy." not in text
    assert "sdy.sharding" in f.trace(x).lower().as_text()


def test_single_device_ignores_partitioner(shardy):
    text = toolkit.jit(lambda a: a + 1).lower(np.ones(4, np.float32)).as_text()
    assert "sdy." not in text


def test_bad_partitioner_names(mesh, monkeypatch):
    f = toolkit.jit(lambda a: a, in_shardings=NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError, match="partitioner must be 'gspmd' or 'shardy', got 'auto'"):
        f.trace(np.ones(8, np.float32)).lower(partitioner="auto")
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "spmd")
    with pytest.raises(ValueError, match="TOOLKIT_PARTITIONER must be 'gspmd' or 'shardy', got 'spmd'"):
        f.lower(np.ones(8, np.float32))


def test_partitioner_choice(monkeypatch):
    monkeypatch.delenv("TOOLKIT_PARTITIONER", raising=False)
    assert partitioner_choice() == "shardy"  # JAX 0.10's default
    monkeypatch.setenv("TOOLKIT_PARTITIONER", "GSPMD")
    assert partitioner_choice() == "gspmd"
    assert partitioner_choice("shardy") == "shardy"


def test_shardings_over_two_meshes_get_one_symbol_each(mesh, shardy):
    # As JAX 0.10: @mesh for @main's mesh, @mesh_0 for the constraint's; the output is read back over the
    # first input's mesh (the same layout as the constraint's, written over that mesh).
    flat = Mesh(np.array(toolkit.devices()[:8]), ("z",))
    f = toolkit.jit(lambda a: lax.with_sharding_constraint(a, NamedSharding(flat, P("z"))),
                    in_shardings=NamedSharding(mesh, P("x")))
    text = f.lower(np.ones((8, 8), np.float32)).as_text()
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n  sdy.mesh @mesh_0 = <["z"=8]>' in text
    assert 'sdy.sharding_constraint %arg0 <@mesh_0, [{"z"}, {}]>' in text
    out = f(np.arange(64, dtype=np.float32).reshape(8, 8))
    np.testing.assert_array_equal(np.asarray(out), np.arange(64, dtype=np.float32).reshape(8, 8))
    assert out.sharding == NamedSharding(mesh, P(("x", "y")))


def test_annotate_writes_replicated_on_the_partitioned_mesh(mesh):
    # A replicated GSPMD sharding (jit's default for unannotated arguments) fits any mesh.
    f = toolkit.jit(lambda a, b: a + b)
    lowered = f.trace(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)).lower()
    module = lowered.compiler_ir()
    with module.context:
        module = ir.Module.parse(str(module))
    annotate_shardings(module, [GSPMDSharding.get_replicated(toolkit.devices()[:8]), None], [None],
                       mode="shardy", body_shardings=[(NamedSharding(mesh, P("x")), 2)])
    text = str(module)
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in text
    assert "#sdy.sharding<@mesh, [{}, {}]>" in text


def test_shardy_is_the_default_and_xla_does_not_warn(tmp_path):
    # XLA logs "GSPMD sharding propagation is going to be deprecated" on every GSPMD compilation;
    # with Shardy as the default partitioner a sharded jit compiles without it.
    import subprocess
    import sys
    script = tmp_path / "sharded.py"
    script.write_text(
        "import numpy as np, toolkit\n"
        "from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P\n"
        "mesh = Mesh(np.array(toolkit.devices()).reshape(2, 4), ('x', 'y'))\n"
        "x = toolkit.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P('x', 'y')))\n"
        "f = toolkit.jit(lambda a: (a * 2).sum(0))\n"
        "print(f.lower(x).as_text().count('sdy.sharding'), f(x).sharding.spec)\n")
    env = {k: v for k, v in os.environ.items() if k != "TOOLKIT_PARTITIONER"}
    env.update(TOOLKIT_NUM_CPU_DEVICES="8", TF_CPP_MIN_LOG_LEVEL="0")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "P('y',)" in done.stdout and int(done.stdout.split()[0]) >= 1
    assert "GSPMD sharding propagation" not in done.stderr
    env["TOOLKIT_PARTITIONER"] = "gspmd"  # the check sees the warning when it is there
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert "GSPMD sharding propagation" in done.stderr


def test_output_shardings_are_named_as_jax_gives_them(mesh):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    try:
        jax.config.update("jax_num_cpu_devices", 8)
    except Exception:  # jax's backend is already up: keep what it has
        pass
    if jax.device_count() < 8:
        pytest.skip("jax has fewer than 8 devices in this process")
    from jax.sharding import Mesh as JaxMesh, NamedSharding as JaxNamed, PartitionSpec as JaxP

    data = np.arange(64, dtype=np.float32).reshape(8, 8)

    def program(np_module):
        return lambda a: (a * 2, a.sum(0), a.T, np_module.ones(3), a[:, :4] + 1)

    x = toolkit.device_put(data, NamedSharding(mesh, P("x", "y")))
    ours = toolkit.jit(program(tnp))(x)
    jax_mesh = JaxMesh(np.array(jax.devices()[:8]).reshape(2, 4), ("x", "y"))
    theirs = jax.jit(program(jnp))(jax.device_put(data, JaxNamed(jax_mesh, JaxP("x", "y"))))
    for o, t in zip(ours, theirs):
        assert isinstance(o.sharding, NamedSharding) and o.sharding.mesh == mesh
        assert tuple(o.sharding.spec) == tuple(t.sharding.spec)
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
    compiled = toolkit.jit(program(tnp)).lower(x).compile()
    assert [s.spec for s in compiled.output_shardings] == [o.sharding.spec for o in ours]
    assert compiled.input_shardings[0][0] == NamedSharding(mesh, P("x", "y"))
