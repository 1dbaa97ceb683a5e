"""The conventions toolkit-opt, toolkit-run and toolkit export share (toolkit/tools/driver.py, docs/tools.md).

One exit-code table (0 success, 1 failure of the input or a pass, 2 usage),
one message style (``<tool>: error: ...`` or ``file[:line:col]: error: ...``,
one line, no traceback), mlir-opt's single-dash flags, and faulthandler.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from toolkit.tools import export_cli, opt, run
from toolkit.tools.driver import normalize_flags

GOOD = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
BAD_SYNTAX = "func.func @main() {\n  return %nope : tensor<f32>\n}\n"
CHECKED = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %expected = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%x, %expected) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %x : tensor<2xf32>
}
"""
NO_MAIN = "func.func @helper() {\n  return\n}\n"
MISSING = "/nonexistent-dir/missing.mlir"
UNWRITABLE = "/nonexistent-dir/out"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    import toolkit
    from toolkit.export import export

    root = tmp_path_factory.mktemp("cli")
    paths = {}
    for name, text in (("good", GOOD), ("bad", BAD_SYNTAX), ("checked", CHECKED), ("nomain", NO_MAIN)):
        (root / f"{name}.mlir").write_text(text)
        paths[name] = str(root / f"{name}.mlir")
    (root / "junk.bin").write_bytes(b"\xff\xfe not UTF-8, not bytecode, not an export")
    paths["junk"] = str(root / "junk.bin")
    for name, fn in (("neg", lambda x: -x), ("twice", lambda x: x * 2)):
        path = root / f"{name}.export"
        path.write_bytes(bytes(export(toolkit.jit(fn))(np.ones(2, np.float32)).serialize()))
        paths[name] = str(path)
    return paths


# (tool, argv with {placeholders}, exit status, stderr: a regex for its one line, a tuple of regexes for
# its lines, or None for no stderr)
TABLE = [
    # toolkit-opt
    ("opt", ["{good}"], 0, None),
    ("opt", ["{good}", "-cse", "-o", "{tmp}/o.mlir"], 0, None),
    ("opt", ["{bad}"], 1, r"^.*bad\.mlir:2:\d+: error: use of undeclared SSA value name$"),
    ("opt", ["{nomain}", "-toolkit-checks-to-results"], 1,  # the failure once, at its location (as mlir-opt)
     r"nomain\.mlir:\d+:\d+: error: no function @main"),
    ("opt", [MISSING], 1, r"^toolkit-opt: error: cannot read '/nonexistent-dir/missing\.mlir': No such file"),
    ("opt", ["{good}", "-o", UNWRITABLE], 1,
     r"^toolkit-opt: error: cannot write '/nonexistent-dir/out': No such file or directory$"),
    ("opt", ["{junk}"], 1, r"junk\.bin: error: neither UTF-8 MLIR text"),
    ("opt", ["{good}", "-toolkit-simplfy"], 2, r"^toolkit-opt: error: unknown pass 'toolkit-simplfy'"),
    ("opt", ["{good}", "{good}"], 2, r"^toolkit-opt: error: unrecognized argument"),
    ("opt", ["{good}", "-cse", "-pass-pipeline=cse"], 2, r"^toolkit-opt: error: use either -pass-pipeline"),
    ("opt", ["{good}", "--emit=vhlo", "--target-version=9.9.9"], 2, r"^toolkit-opt: error: --target-version=9\.9\.9"),
    ("opt", ["{good}", "--emit=xml"], 2, r"^toolkit-opt: error: argument --emit: invalid choice"),
    ("opt", ["{good}", "--load-pass-plugin={tmp}/nope.py"], 2, r"^toolkit-opt: error: cannot load pass plugin"),
    # toolkit-run
    ("run", ["{checked}", "-arg", "[1, 2]"], 0, None),
    ("run", ["{checked}", "-arg", "[1, 3]"], 1, None),  # a missed check: the verdict is on stdout
    ("run", ["{bad}"], 1, r"^.*bad\.mlir:2:\d+: error: use of undeclared SSA value name$"),
    ("run", ["{nomain}"], 1, r"nomain\.mlir: error: no function @main"),
    ("run", [MISSING], 1, r"^toolkit-run: error: cannot read '/nonexistent-dir/missing\.mlir'"),
    ("run", ["{checked}"], 2, r"^toolkit-run: error: @main takes 1 arguments; pass them with --arg$"),
    ("run", ["{checked}", "-arg", "[1, 2, 3]"], 2, r"^toolkit-run: error: --arg '\[1, 2, 3\]' has shape"),
    ("run", ["{checked}", "-arg", "[1, 2]", "-pass-pipeline=builtin.module(nope)"], 2,
     r"^toolkit-run: error: unknown pass 'nope'"),
    ("run", ["{checked}", "-o", "x"], 2, r"^toolkit-run: error: unrecognized arguments: -o x"),
    # toolkit export
    ("cli", ["export", "inspect", "{neg}"], 0, None),
    ("cli", ["export", "diff", "{neg}", "{neg}"], 0, None),
    ("cli", ["export", "diff", "{neg}", "{twice}"], 1, None),  # differences: shown on stdout
    ("cli", ["export", "inspect", "{junk}"], 1, r"^.*junk\.bin: error: Not a serialized Exported"),
    ("cli", ["export", "mlir", MISSING], 1, r"^toolkit export mlir: error: cannot read '/nonexistent-dir/missing"),
    ("cli", ["export", "mlir", "{neg}", "-o", UNWRITABLE], 1,
     r"^toolkit export mlir: error: cannot write '/nonexistent-dir/out'"),
    ("cli", ["export", "frob"], 2, r"^toolkit export: error: argument .*invalid choice: 'frob'"),
    ("cli", ["export", "diff", "{neg}"], 2, r"^toolkit export diff: error: the following arguments are required: b"),
    ("cli", ["export", "inspect", "{neg}", "-full"], 2, r"^toolkit export inspect: error: unrecognized arguments"),
]
MAINS = {"opt": opt.main, "run": run.main, "cli": export_cli.main}


@pytest.mark.parametrize("tool, argv, status, message", TABLE,
                         ids=[f"{t}-{s}-{'-'.join(a)[:40]}" for t, a, s, _ in TABLE])
def test_exit_code_and_message(tool, argv, status, message, files, tmp_path, capsys) -> None:
    arguments = [a.format(tmp=tmp_path, **files) for a in argv]
    assert MAINS[tool](arguments) == status
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if message is None:
        assert err == ""
        return
    lines = err.splitlines()
    expected = (message,) if isinstance(message, str) else message
    assert len(lines) == len(expected), err
    for line, pattern in zip(lines, expected):
        assert re.search(pattern, line), line
        assert re.match(r"^(toolkit(-opt|-run| export( \w+)?)|[^:]+(:\d+:\d+)?): error: ", line), line


def test_version_names_toolkit_jaxlib_and_stablehlo(capsys) -> None:
    import jaxlib.version
    from jaxlib.mlir.dialects import stablehlo

    for main, tool in ((opt.main, "toolkit-opt"), (run.main, "toolkit-run"), (export_cli.main, "toolkit")):
        assert main(["--version"]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"{tool} (toolkit ")
        assert f"jaxlib {jaxlib.version.__version__}" in out
        assert f"StableHLO {stablehlo.get_current_version()}" in out
    assert opt.main(["-version"]) == 0  # one dash, as mlir-opt accepts it
    capsys.readouterr()


def test_generic_and_debuginfo_printing(files, capsys) -> None:
    assert opt.main([files["good"], "--mlir-print-op-generic"]) == 0
    assert '"stablehlo.negate"(%arg0)' in capsys.readouterr().out
    assert opt.main([files["good"], "-mlir-print-debuginfo"]) == 0
    assert "loc(" in capsys.readouterr().out
    assert export_cli.main(["export", "mlir", files["neg"], "-mlir-print-op-generic"]) == 0
    assert '"stablehlo.negate"' in capsys.readouterr().out


def test_export_reads_stdin_without_a_file(files) -> None:
    blob = pathlib.Path(files["neg"]).read_bytes()
    for argv in (["export", "inspect"], ["export", "inspect", "-"]):
        result = subprocess.run([sys.executable, "-m", "toolkit.tools.export_cli", *argv], input=blob,
                                capture_output=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert b"fun_name: <lambda>" in result.stdout


@pytest.mark.parametrize("argv, expected", [
    (["-split-input-file", "-canonicalize"], ["--split-input-file", "--canonicalize"]),
    (["-pass-pipeline=builtin.module(cse)"], ["--pass-pipeline=builtin.module(cse)"]),
    (["-o", "-out.mlir", "-o=x.mlir"], ["-o", "-out.mlir", "-o", "x.mlir"]),  # -o's value is left alone
    (["-", "-h"], ["-", "-h"]),
    (["--arg", "-1", "-arg", "-inf"], ["--arg", "-1", "--arg", "-inf"]),  # values of value-taking flags
    (["-1.5", "--", "-not-a-flag"], ["-1.5", "--", "-not-a-flag"]),
])
def test_single_dash_flags_normalize(argv, expected) -> None:
    parser = run._parser()
    parser.add_argument("-o")
    assert normalize_flags(argv, parser) == expected


def test_internal_error_is_one_line(files, capsys, monkeypatch) -> None:
    def broken(*args, **kwargs):
        raise TypeError("an unexpected bug\nsecond line")

    monkeypatch.setattr(opt, "_process_chunk", broken)
    assert opt.main([files["good"]]) == 1
    err = capsys.readouterr().err
    assert err == ("toolkit-opt: error: internal error: TypeError: an unexpected bug "
                   "(TOOLKIT_PASS_TRACEBACK=1 prints the traceback)\n")


CRASHING_PLUGIN = '''
import ctypes
import dataclasses
from typing import ClassVar

from toolkit.passes import ModulePass, register_pass


@register_pass
@dataclasses.dataclass(frozen=True)
class CrashPass(ModulePass):
    name: ClassVar[str] = "test-crash"
    description: ClassVar[str] = "Read address 0, as a bad native call would."

    def apply(self, op):
        ctypes.string_at(0)  # the line faulthandler must point at
'''


def test_a_native_crash_prints_where_it_happened(files, tmp_path) -> None:
    plugin = tmp_path / "crash_plugin.py"
    plugin.write_text(CRASHING_PLUGIN)
    result = subprocess.run([sys.executable, "-m", "toolkit.tools.opt", files["good"],
                             f"--load-pass-plugin={plugin}", "-test-crash"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode not in (0, 1, 2)  # killed by the signal
    assert "Fatal Python error: Segmentation fault" in result.stderr
    line = next(i for i, text in enumerate(CRASHING_PLUGIN.splitlines(), 1) if "string_at(0)" in text)
    assert re.search(rf'File ".*crash_plugin\.py", line {line} in apply', result.stderr), result.stderr
