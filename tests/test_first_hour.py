"""Regression tests for the first-hour papercuts of issue 27 (one or more per papercut).

1. the README says how to get the tools on PATH and names the clone-shadowing pitfall (checked as described);
2. ``toolkit.ir.parse_module`` and docs/passes.md section 3 running as written;
3. a pass file loaded as a plugin and imported registers once;
4. the demo shows what its pipeline changed, on stdout; scripts/setup.sh does not reinstall when nothing changed;
5. ``toolkit export``: runnable check-compat suggestions, ``--platform`` not present, MLIR handed to it;
6. ``grad`` with tuple ``argnums`` returns Arrays and ``has_aux`` passes any aux through, against JAX.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.ir import parse_module
from toolkit.ir.serialization import write_module
from toolkit.ir.walk import ops_named
from toolkit.passes import registry
from toolkit.runtime import platforms as runtime_platforms
from toolkit.tools import demo, export_cli

ROOT = Path(__file__).resolve().parents[1]
PYTHON_TIMEOUT = 120

NEGATE_TWICE = """
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.negate %x : tensor<3xf32>
  %1 = stablehlo.negate %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=PYTHON_TIMEOUT)


def _code_block(markdown: str, heading: str, language: str) -> str:
    """The first ``language`` code block after ``heading`` in ``markdown``."""
    section = markdown[markdown.index(heading):]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match is not None, f"no {language} block after {heading!r}"
    return match.group(1)


# --- 1. README: PATH and the shadowing pitfall ---------------------------------------------------------------------

def test_readme_says_how_to_get_the_tools_on_path_and_names_the_shadowing_pitfall():
    readme = (ROOT / "README.md").read_text()
    assert ". .venv/bin/activate" in readme
    assert ".venv/bin/toolkit-opt" in readme
    assert "shadows the installed one" in readme and "toolkit.__file__" in readme


def test_a_toolkit_folder_in_the_current_directory_shadows_the_install_as_the_readme_says(tmp_path):
    shadow = tmp_path / "toolkit"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = _run([sys.executable, "-c", "import toolkit; print(toolkit.__file__)"], tmp_path, env)
    assert found.stdout.strip() == str(shadow / "__init__.py")  # the pitfall is real
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = _run([sys.executable, "-c", "import toolkit; print(toolkit.__file__)"], elsewhere, env)
    assert found.stdout.strip() == str(ROOT / "toolkit" / "__init__.py")


# --- 2. parse_module and docs/passes.md section 3 ---------------------------------------------------------------

def test_parse_module_reads_text_and_bytecode_into_a_context_with_toolkits_dialects():
    module = parse_module(NEGATE_TWICE)
    assert "stablehlo.negate" in str(module)
    again = parse_module(write_module(module, "bytecode"))
    assert str(again) == str(module)
    assert str(parse_module(bytearray(NEGATE_TWICE.encode()))) == str(module)
    registry_report = toolkit.passes.run_pipeline(module, "builtin.module(toolkit-simplify, cse)")
    assert [r.name for r in registry_report.records] == ["toolkit-simplify", "cse"]


def test_parse_module_errors_name_what_is_wrong():
    with pytest.raises(TypeError, match="parse_module needs MLIR text .* got int"):
        parse_module(3)  # type: ignore[arg-type]  # (the wrong type on purpose)
    expected = r"cannot parse the MLIR module: loc\(\"-\":1:18\): custom op .stablehlo.not_an_op. is unknown"
    with pytest.raises(ValueError, match=expected):
        parse_module("func.func @f() { stablehlo.not_an_op }")


def test_parse_module_of_a_path_puts_the_file_name_in_locations_and_pass_diagnostics(tmp_path):
    from toolkit.passes import ModulePass, emit_warning, register_pass

    pass_name = f"first-hour-warn-{uuid.uuid4().hex[:8]}"

    @register_pass
    @dataclasses.dataclass(frozen=True)
    class WarnAtNegate(ModulePass):
        name: ClassVar[str] = pass_name
        description: ClassVar[str] = "Warns at every negate."

        def apply(self, op):
            for negate in ops_named(op, "stablehlo.negate"):
                emit_warning(negate, "a negate")

    source = tmp_path / "negate.mlir"
    source.write_text(NEGATE_TWICE.lstrip())
    try:
        report = toolkit.passes.run_pipeline(parse_module(source), f"builtin.module({pass_name})")
    finally:
        registry._registered.pop(pass_name, None)
    assert [d.location for d in report.diagnostics] == [f"{source}:2:8", f"{source}:3:8"]
    with pytest.raises(ValueError, match="cannot read the MLIR module .*missing.mlir"):
        parse_module(tmp_path / "missing.mlir")
    (tmp_path / "bad.mlir").write_text("func.func @f() {\n  stablehlo.nope\n}\n")
    with pytest.raises(ValueError, match=r"bad.mlir\":2:3\): custom op .stablehlo.nope. is unknown"):
        parse_module(tmp_path / "bad.mlir")


def test_docs_passes_section_3_runs_as_written(tmp_path):
    doc = (ROOT / "docs" / "passes.md").read_text()
    assert "toolkit.ir.builders.insert_before" in doc
    (tmp_path / "my_passes.py").write_text(_code_block(doc, "## 2. The pattern", "python"))
    (tmp_path / "section3.py").write_text(_code_block(doc, "## 3. Run it from Python", "python"))
    result = _run([sys.executable, "section3.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "return %arg0 : tensor<3xf32>" in result.stdout
    assert "stablehlo.negate" not in result.stdout


# --- 3. a plugin file also imported registers once ---------------------------------------------------------------

PLUGIN = """
import dataclasses
from typing import ClassVar
from toolkit.passes import ModulePass, register_pass

@register_pass
@dataclasses.dataclass(frozen=True)
class {cls}(ModulePass):
    name: ClassVar[str] = "{name}"
    description: ClassVar[str] = "Does nothing."
    def apply(self, op):
        pass
"""


def test_a_plugin_file_loaded_and_imported_registers_once(tmp_path, monkeypatch):
    name = f"first-hour-{uuid.uuid4().hex[:8]}"
    module_name = f"first_hour_plugin_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{module_name}.py"
    path.write_text(PLUGIN.format(cls="NothingPass", name=name))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        registry.load_pass_plugin(str(path))
        first = registry.lookup_python_pass(name)
        generation = registry.registry_generation()
        __import__(module_name)  # the same file under its own module name: no DuplicatePassError
        assert registry.lookup_python_pass(name) is first
        assert registry.registry_generation() == generation  # nothing compiled needs compiling again
        registry.load_pass_plugin(str(path))  # and loading it again is fine too
        # A different class under the same name is still an error.
        other = tmp_path / "other_plugin.py"
        other.write_text(PLUGIN.format(cls="NothingPass", name=name))
        with pytest.raises(registry.DuplicatePassError, match=f"pass '{name}'"):
            registry.load_pass_plugin(str(other))
    finally:
        registry._registered.pop(name, None)
        sys.modules.pop(module_name, None)


def test_toolkit_pass_plugins_and_an_import_of_the_same_file_work_together(tmp_path):
    (tmp_path / "my_passes.py").write_text(PLUGIN.format(cls="NothingPass", name="my-nothing"))
    (tmp_path / "script.py").write_text(textwrap.dedent("""
        import my_passes
        from toolkit.ir import parse_module
        from toolkit.passes import run_pipeline
        report = run_pipeline(parse_module("module {}"), "builtin.module(my-nothing)")
        print([r.name for r in report.records])
    """))
    env = dict(os.environ, TOOLKIT_PASS_PLUGINS="my_passes.py")
    result = _run([sys.executable, "script.py"], tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['my-nothing']"


# --- 4. the demo and setup.sh ----------------------------------------------------------------------------------------

def test_demo_shows_what_the_pipeline_changed_with_its_tables_on_stdout(capsys):
    assert demo.main([]) == 0
    out, err = capsys.readouterr()
    section2 = out[out.index("=== 2."):out.index("=== 3.")]
    section3 = out[out.index("=== 3."):out.index("=== 4.")]
    assert section3.count("stablehlo.transpose") == 3  # two removed lines in the diff, one table row
    assert "-    %8 = stablehlo.transpose" in section3
    assert "toolkit-simplify: transpose_of_transpose x1" in section3
    table = section3[section3.index("Operation counts"):section3.index("What the pipeline changed")]
    assert re.search(r"stablehlo\.transpose\s+2\s+0\s+<- changed", table)
    after = section3[section3.index("The module after the pipeline:"):]
    assert "stablehlo.transpose" not in after and "stablehlo.transpose" in section2
    assert "Operation" not in err and "stablehlo" not in err


def _fake_checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of setup.sh in a checkout whose .venv's pip only records its calls."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", repo / "scripts" / "setup.sh")
    (repo / "pyproject.toml").write_text("[project]\nname = 'toolkit'\n")
    (repo / "toolkit").mkdir()
    (repo / "toolkit" / "__init__.py").write_text("")
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "pip.log"
    # python: pip calls are logged (and do nothing); anything else runs the real interpreter on this checkout.
    (bin_dir / "python").write_text(textwrap.dedent(f"""\
        #!/usr/bin/env bash
        if [ "$1" = -m ] && [ "$2" = pip ]; then echo "$*" >> {shlex.quote(str(log))}; exit 0; fi
        PYTHONPATH={shlex.quote(str(repo))} exec {shlex.quote(sys.executable)} "$@"
    """))
    (bin_dir / "activate").write_text(f"PATH={shlex.quote(str(bin_dir))}:$PATH\n")
    (bin_dir / "toolkit-opt").write_text("#!/bin/sh\n")
    for tool in ("python", "toolkit-opt"):
        (bin_dir / tool).chmod(0o755)
    return repo, log


def test_setup_reinstalls_only_when_pyproject_changed(tmp_path):
    repo, log = _fake_checkout(tmp_path)

    def installs() -> int:
        result = _run(["bash", "scripts/setup.sh"], repo)
        assert result.returncode == 0, result.stderr
        return sum("install -q -e" in line for line in log.read_text().splitlines()) if log.exists() else 0

    assert installs() == 1
    assert installs() == 1  # nothing changed: no pip
    with open(repo / "pyproject.toml", "a") as stream:
        stream.write("dependencies = ['numpy']\n")
    assert installs() == 2  # a new dependency: pip again
    assert installs() == 2
    env = dict(os.environ, TOOLKIT_REINSTALL="1")
    assert _run(["bash", "scripts/setup.sh"], repo, env).returncode == 0
    assert sum("install -q -e" in line for line in log.read_text().splitlines()) == 3


# --- 5. toolkit export -----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def two_platform_export(tmp_path_factory):
    from toolkit.export import export

    spec = toolkit.ShapeDtypeStruct((2, 3), np.float32)
    exp = export(toolkit.jit(lambda x, y: tnp.tanh(x) * 2 + y), platforms=("cpu", "cuda"))(spec, spec)
    directory = tmp_path_factory.mktemp("exports")
    path = directory / "two platforms.bin"  # a space: the suggestion must quote it
    path.write_bytes(exp.serialize())
    (directory / "f.mlir").write_text(exp.mlir_module())
    (directory / "f.mlirbc").write_bytes(write_module(parse_module(exp.mlir_module()), "bytecode"))
    (directory / "f.vhlo").write_bytes(write_module(parse_module(exp.mlir_module()), "vhlo"))
    return directory


def test_check_compat_suggests_a_command_that_runs_as_printed(two_platform_export, capsys):
    blob = str(two_platform_export / "two platforms.bin")
    assert export_cli.main(["export", "check-compat", blob, "--consumer", "cc=9,stablehlo=1.8.0"]) == 1
    out = capsys.readouterr().out
    line = next(text for text in out.splitlines() if text.startswith("convertible: yes"))
    assert "BLOB" not in line and "OUT" not in line
    command = shlex.split(line[len("convertible: yes ("):-1])
    assert command[:3] == ["toolkit", "export", "convert"] and command[3] == blob
    assert export_cli.main(command[1:]) == 0
    converted = command[-1]
    assert converted == str(two_platform_export / "two platforms.converted.bin")
    assert export_cli.main(["export", "check-compat", converted, "--consumer", "cc=9,stablehlo=1.8.0"]) == 0
    assert "readable: yes" in capsys.readouterr().out
    assert export_cli.main(["export", "check-compat", blob, "--consumer", "cc=9,stablehlo=1.8.0", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["command"] == shlex.join(command)


def test_run_with_a_platform_that_is_not_present_is_an_error_naming_the_present_ones(two_platform_export, capsys):
    if runtime_platforms.available("cuda"):
        pytest.skip("CUDA is present here")
    blob = str(two_platform_export / "two platforms.bin")
    args = ["--arg", "[[0, 0, 0], [1, 1, 1]]", "--arg", "[[1, 1, 1], [1, 1, 1]]"]
    assert export_cli.main(["export", "run", blob, "--platform", "cuda", *args]) == 2
    err = capsys.readouterr().err
    assert "--platform cuda: the platform is not present" in err and "platforms present: cpu" in err
    assert export_cli.main(["export", "run", blob, "--platform", "tpu", *args]) == 2
    assert "unknown platform 'tpu'" in capsys.readouterr().err
    assert export_cli.main(["export", "run", blob, "--platform", "cpu", *args]) == 0
    assert "result[0]" in capsys.readouterr().out


@pytest.mark.parametrize("name, kind", [("f.mlir", "MLIR text"), ("f.mlirbc", "MLIR bytecode"),
                                        ("f.vhlo", "a StableHLO portable artifact")])
def test_mlir_handed_to_toolkit_export_is_recognised_and_pointed_to_the_module_tools(
        two_platform_export, capsys, name, kind):
    path = str(two_platform_export / name)
    assert export_cli.main(["export", "inspect", path]) == 1
    err = capsys.readouterr().err
    assert f"this is {kind}, not a serialized export" in err
    assert f"toolkit-run {path}" in err and f"toolkit-opt {path}" in err
    assert "multiple of 4" not in err and "root table offset" not in err


def test_a_broken_export_still_gets_the_byte_level_error(tmp_path, capsys):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x10\x00\x00\x00garbage!")
    assert export_cli.main(["export", "inspect", str(bad)]) == 1
    assert "not a serialized export (what" not in capsys.readouterr().err


# --- 6. grad, value_and_grad, jacfwd, jacrev against JAX -----------------------------------------------------------

def _kinds(tree, array_type):
    import jax

    return jax.tree.map(lambda leaf: "array" if isinstance(leaf, array_type) else type(leaf).__name__, tree)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacfwd", "jacrev"])
@pytest.mark.parametrize("argnums", [0, (0, 1), (1,)])
def test_derivatives_with_tuple_argnums_return_arrays_as_jax(transform, argnums):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x, y = np.float32(2.0), np.float32(3.0)
    ours = getattr(toolkit, transform)(lambda a, b: a * b + tnp.sin(a), argnums=argnums)(x, y)
    theirs = getattr(jax, transform)(lambda a, b: a * b + jnp.sin(a), argnums=argnums)(x, y)
    assert _kinds(ours, toolkit.Array) == _kinds(theirs, jax.Array)
    for mine, reference in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        np.testing.assert_allclose(np.asarray(mine), np.asarray(reference), rtol=1e-6)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacrev"])
def test_has_aux_passes_any_aux_pytree_through_as_jax(transform):
    jax = pytest.importorskip("jax")
    x = np.float32(2.0)

    def aux_of(value):
        return {"name": "hello", "count": 3, "scale": 1.5, "none": None, "twice": value * 2.0}

    ours = getattr(toolkit, transform)(lambda a: (a * 3.0, aux_of(a)), has_aux=True)(x)
    theirs = getattr(jax, transform)(lambda a: (a * 3.0, aux_of(a)), has_aux=True)(x)
    our_aux = ours[1] if transform != "value_and_grad" else ours[0][1]
    their_aux = theirs[1] if transform != "value_and_grad" else theirs[0][1]
    assert {k: v for k, v in our_aux.items() if k != "twice"} == {k: v for k, v in their_aux.items() if k != "twice"}
    np.testing.assert_allclose(np.asarray(our_aux["twice"]), np.asarray(their_aux["twice"]))
    assert toolkit.grad(lambda a: (a * 3.0, "just a string"), has_aux=True)(x)[1] == "just a string"
    # jacfwd too (JAX's jacfwd refuses a string aux: it batches it).
    assert toolkit.jacfwd(lambda a: (a * 3.0, "s"), has_aux=True)(x)[1] == "s"


def test_has_aux_with_traced_values_still_works_under_jit():
    def loss(w):
        return tnp.sum(w ** 2), {"norm": tnp.sqrt(tnp.sum(w ** 2)), "label": 7}

    grads, aux = toolkit.jit(lambda w: toolkit.grad(loss, has_aux=True)(w)[0])(np.ones(3, np.float32)), None
    np.testing.assert_allclose(np.asarray(grads), 2.0)
    grads, aux = toolkit.grad(loss, has_aux=True)(np.ones(3, np.float32))
    assert aux["label"] == 7
    np.testing.assert_allclose(np.asarray(aux["norm"]), np.sqrt(3.0), rtol=1e-6)
