"""toolkit-opt accepts the upstream StableHLO lit files (../shared/corpora/stablehlo_lit).

* every transforms file: split on `// -----`, each case parses, prints, and the
  printed text parses back to the same text;
* the refine-shapes lit file at the commit closest to jaxlib's StableHLO passes
  its own CHECK lines and expected-error annotations through toolkit-opt and
  the pip `filecheck`;
* VHLO artifacts up to jaxlib's StableHLO version read and print like their
  source; newer ones are rejected with a clear error.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from toolkit.ir.context import make_context
from toolkit.ir.serialization import read_module
from toolkit.tools.opt import _split

CORPUS = pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "corpora" / "stablehlo_lit"
TRANSFORMS = sorted(CORPUS.glob("transforms*/*.mlir"))
VHLO_ARTIFACTS = sorted(CORPUS.glob("vhlo/*.mlir.bc"))
NEWEST_READABLE = (1, 17, 0)

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="stablehlo_lit corpus not found")


def _version(path: pathlib.Path) -> tuple[int, ...]:
    match = re.search(r"\.(\d+)_(\d+)_(\d+)\.mlir", path.name)
    assert match, path
    return tuple(int(g) for g in match.groups())


@pytest.mark.parametrize("path", TRANSFORMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lit_file_cases_parse_and_round_trip(path: pathlib.Path) -> None:
    from jaxlib.mlir import ir

    chunks = _split(path.read_text())
    assert len(chunks) > 5
    generic_only = []
    for text, first_line in chunks:
        module = read_module(text, make_context())
        printed = str(module)
        try:
            again = str(read_module(printed, make_context()))
        except ir.MLIRError:
            # The custom printer of a few ops (a stablehlo.while whose operand
            # and block-argument types differ) is not re-parseable; the generic
            # form must still round-trip.
            generic_only.append(first_line)
            printed = module.operation.get_asm(print_generic_op_form=True)
            again = read_module(printed, make_context()).operation.get_asm(print_generic_op_form=True)
        assert printed == again, f"{path.name}: case at line {first_line} does not round-trip"
    assert len(generic_only) <= 2, f"cases only round-tripping in generic form: lines {generic_only}"


@pytest.mark.parametrize("path", TRANSFORMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_toolkit_opt_splits_whole_file_without_errors(path: pathlib.Path) -> None:
    result = subprocess.run([sys.executable, "-m", "toolkit.tools.opt", str(path), "--split-input-file"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("// -----") == len(_split(path.read_text())) - 1


def test_refine_shapes_lit_file_passes_its_checks() -> None:
    filecheck = shutil.which("filecheck", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("filecheck")
    if filecheck is None:
        pytest.skip("filecheck not installed")
    path = CORPUS / "transforms_c2ceaecc" / "stablehlo_refine_shapes.mlir"
    opt = subprocess.run([sys.executable, "-m", "toolkit.tools.opt", str(path), "--split-input-file",
                          "--verify-diagnostics", "--stablehlo-refine-shapes"],
                         capture_output=True, text=True, timeout=300)
    assert opt.returncode == 0, opt.stderr
    check = subprocess.run([filecheck, "--enable-var-scope", str(path)], input=opt.stdout,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr[:3000]


@pytest.mark.parametrize("artifact", VHLO_ARTIFACTS, ids=lambda p: p.name)
def test_vhlo_artifacts(artifact: pathlib.Path) -> None:
    source = artifact.with_suffix("")  # X.mlir.bc -> X.mlir
    if _version(artifact) > NEWEST_READABLE:
        with pytest.raises(ValueError, match="cannot read the StableHLO portable artifact"):
            read_module(artifact.read_bytes(), make_context())
        return
    from_artifact = str(read_module(artifact.read_bytes(), make_context()))
    from_source = str(read_module(source.read_text(), make_context()))
    assert from_artifact == from_source


REFINE_ARGUMENTS_RUNS = [
    ("types=tensor<f32>,tensor<1xf32>,tensor<?xf32>,tensor<1x?x?xf32>,tensor<*xf32>,!stablehlo.token",
     ["--split-input-file", "--verify-diagnostics"], "CHECK,NO-REFINE", 0),
    ("types=tensor<f32>,tensor<1xf32>,tensor<2xf32>,tensor<1x4x6xf32>,tensor<8x10xf32>,!stablehlo.token",
     ["--split-input-file", "--verify-diagnostics"], "CHECK,FULL-REFINE", 0),
    ("types=tensor<f32>,tensor<1xf32>,tensor<?xf32>,tensor<1x4x?xf32>,tensor<8x?xf32>,!stablehlo.token",
     ["--split-input-file", "--verify-diagnostics"], "CHECK,PARTIAL-REFINE", 0),
    ("types=!not.a_type", [], "UNKNOWN-TYPE", 1),
    ("types=tensor<f32>,tensor<1xf32>,tensor<?xf32>,tensor<*xf32>,tensor<*xf32>,!stablehlo.token", [],
     "UNRANKED-ERROR", 1),
]


@pytest.mark.parametrize("options, flags, prefixes, status", REFINE_ARGUMENTS_RUNS, ids=lambda v: str(v)[:20])
def test_refine_arguments_lit_file_runs_like_upstream(options, flags, prefixes, status) -> None:
    """The five upstream RUN lines, with toolkit-opt in place of stablehlo-opt."""
    filecheck = shutil.which("filecheck", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("filecheck")
    if filecheck is None:
        pytest.skip("filecheck not installed")
    path = CORPUS / "transforms" / "stablehlo_refine_parameters.mlir"
    opt = subprocess.run([sys.executable, "-m", "toolkit.tools.opt", f"--stablehlo-refine-arguments={options}",
                          *flags, str(path)], capture_output=True, text=True, timeout=300)
    assert opt.returncode == status, opt.stderr
    output = opt.stdout if status == 0 else opt.stdout + opt.stderr
    check = subprocess.run([filecheck, "--enable-var-scope", f"--check-prefixes={prefixes}", str(path)],
                           input=output, capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr[:3000]
