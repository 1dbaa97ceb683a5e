"""Run upstream StableHLO lit cases through a refinement pipeline and judge them.

Each file is split on ``// -----``; each case is parsed in a fresh context,
run through a pipeline, judged like ``--verify-diagnostics`` (every
``expected-error`` produced at its line, no other error), and — when it has
CHECK lines and the pipeline succeeded — its printed module is checked with
the Python ``filecheck`` package (``--enable-var-scope``, as upstream's
``lit.cfg.py``).

Cases run in a worker subprocess, because jaxlib's C++ pass dies with SIGFPE
on one upstream case: a crash counts as a failure of that case and the
worker restarts after it.

Command line (used by the tests and by ``bench/refine.py``)::

    python tests/passes/refine_lit_harness.py FILE 'builtin.module(toolkit-refine-shapes{mode=stablehlo})'
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile

from toolkit.ir.diagnostics import parse_expected_diagnostics

SPLIT = re.compile(r"^// -----.*$", re.MULTILINE)
LOCATION = re.compile(r":(\d+):(\d+)")

#: Upstream-pipeline replacements: what our passes are called in a harness run.
OURS = {
    "stablehlo-refine-shapes": "builtin.module(toolkit-refine-shapes{mode=stablehlo})",
}
CXX = {
    "stablehlo-refine-shapes": "builtin.module(stablehlo-refine-shapes)",
}


def split_cases(text: str) -> list[str]:
    return SPLIT.split(text)


def _filecheck(case_text: str, output: str, prefixes: str = "CHECK") -> tuple[bool, str]:
    from filecheck.main import main as filecheck_main

    with tempfile.TemporaryDirectory() as folder:
        checks = os.path.join(folder, "checks.mlir")
        produced = os.path.join(folder, "out.mlir")
        with open(checks, "w") as handle:
            handle.write(case_text)
        with open(produced, "w") as handle:
            handle.write(output)
        stdout, stderr = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                filecheck_main(["filecheck", checks, "--input-file", produced, "--enable-var-scope",
                                "--check-prefixes", prefixes])
            except SystemExit as exit_:
                code = int(exit_.code or 0)
        return code == 0, (stdout.getvalue() + stderr.getvalue())[-2000:]


def run_case(case_text: str, pipeline: str) -> tuple[list[tuple[str, int | None, str]], str | None, str]:
    """Parse and run one case: (diagnostics, printed module or None, failure text)."""
    from jaxlib.mlir import ir, passmanager

    from toolkit.ir.context import make_context

    context = make_context()
    context.allow_unregistered_dialects = False
    if "!quant." in case_text:
        from toolkit.ir.serialization import load_quant_dialect

        load_quant_dialect(context)
    diagnostics: list[tuple[str, int | None, str]] = []

    def handler(diagnostic) -> bool:
        severity = {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
                    ir.DiagnosticSeverity.REMARK: "remark", ir.DiagnosticSeverity.NOTE: "note"}[diagnostic.severity]
        match = LOCATION.search(str(diagnostic.location))
        diagnostics.append((severity, int(match.group(1)) if match else None, diagnostic.message))
        return True

    handle = context.attach_diagnostic_handler(handler)
    output = None
    failure = ""
    try:
        with context, ir.Location.unknown():
            try:
                module = ir.Module.parse(case_text)
            except ir.MLIRError as error:
                for d in error.error_diagnostics:
                    match = LOCATION.search(str(d.location))
                    diagnostics.append(("error", int(match.group(1)) if match else None, d.message))
                module = None
            if module is not None:
                ok = True
                if "toolkit-" in pipeline:
                    from toolkit.passes import PipelineError, run_pipeline

                    try:
                        run_pipeline(module, pipeline, capture_diagnostics=False)
                    except PipelineError as error:
                        ok = False
                        failure = str(error)
                else:
                    try:
                        passmanager.PassManager.parse(pipeline).run(module.operation)
                    except (ir.MLIRError, ValueError) as error:
                        ok = False
                        failure = str(error)
                        for d in getattr(error, "error_diagnostics", []):
                            match = LOCATION.search(str(d.location))
                            diagnostics.append(("error", int(match.group(1)) if match else None, d.message))
                if ok:
                    output = str(module)
    finally:
        handle.detach()
    return diagnostics, output, failure


def judge_failure(text: str, pipeline: str, prefixes: str) -> dict:
    """A ``not opt ... 2>&1 | FileCheck`` RUN line: the pipeline must fail and its errors match."""
    diagnostics, output, failure = run_case(text, pipeline)
    if output is not None:
        return {"ok": False, "why": "pipeline succeeded but the RUN line expects a failure"}
    errors = "\n".join(f"error: {message}" for severity, _, message in diagnostics) + "\n" + failure
    ok, log = _filecheck(text, errors, prefixes)
    return {"ok": ok, "why": "" if ok else "filecheck: " + log}


def judge_case(case_text: str, pipeline: str, prefixes: str = "CHECK") -> dict:
    """Run one case; returns ``{"ok": bool, "why": str}``."""
    diagnostics, output, failure = run_case(case_text, pipeline)
    expected = parse_expected_diagnostics(case_text)
    problems = []
    for severity, line, message in diagnostics:
        if severity == "note":
            continue
        hit = next((e for e in expected if not e.seen and e.severity == severity
                    and e.line == line and e.message in message), None)
        if hit is not None:
            hit.seen = True
        elif not any(e.severity == severity and e.line == line and e.message in message for e in expected):
            problems.append(f"unexpected {severity} at line {line}: {message}")
    problems += [f"expected {e.severity} not produced at line {e.line}: {e.message}"
                 for e in expected if not e.seen]
    if problems:
        return {"ok": False, "why": "; ".join(problems)[:1500]}
    if any(re.search(rf"//\s*{re.escape(p)}[-:]", case_text) for p in prefixes.split(",")):
        if output is None:
            return {"ok": False, "why": "pipeline failed but the case has CHECK lines: " + failure[:500]}
        ok, log = _filecheck(case_text, output, prefixes)
        if not ok:
            return {"ok": False, "why": "filecheck: " + log}
    return {"ok": True, "why": ""}


def _worker(path: str, pipeline: str, start: int, prefixes: str = "CHECK") -> None:
    text = open(path).read()
    for index, case in enumerate(split_cases(text)):
        if index < start:
            continue
        print(json.dumps({"case": index, **judge_case(case, pipeline, prefixes)}), flush=True)


def run_file(path: str, pipeline: str, *, prefixes: str = "CHECK", timeout: float = 600) -> list[dict]:
    """Judge every case of ``path``; one dict per case (``case``, ``ok``, ``why``)."""
    count = len(split_cases(open(path).read()))
    results: dict[int, dict] = {}
    start = 0
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    code = ("import sys; sys.path[:0] = [%r, %r]; import refine_lit_harness as h; h._worker(%r, %r, %d, %r)")
    while start < count:
        process = subprocess.run(
            [sys.executable, "-c", code % (root, here, path, pipeline, start, prefixes)],
            capture_output=True, text=True, timeout=timeout, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
        for line in process.stdout.splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                results[record["case"]] = record
        done = max(results) + 1 if results else 0
        if done >= count:
            break
        crashed = max(done, start)
        results[crashed] = {"case": crashed, "ok": False,
                            "why": f"process died (exit {process.returncode}): {process.stderr[-300:]}"}
        start = crashed + 1
    return [results[i] for i in range(count)]


def case_names(path: str) -> list[str]:
    names = []
    for case in split_cases(open(path).read()):
        match = re.search(r"(?:func\.func|module)\s+(?:public\s+|private\s+)?@(\w+)", case)
        names.append(match.group(1) if match else "?")
    return names


REFINE_ARGUMENT_RUNS = [
    ("split", "types=tensor<f32>,tensor<1xf32>,tensor<?xf32>,tensor<1x?x?xf32>,tensor<*xf32>,!stablehlo.token",
     "CHECK,NO-REFINE"),
    ("split", "types=tensor<f32>,tensor<1xf32>,tensor<2xf32>,tensor<1x4x6xf32>,tensor<8x10xf32>,!stablehlo.token",
     "CHECK,FULL-REFINE"),
    ("split", "types=tensor<f32>,tensor<1xf32>,tensor<?xf32>,tensor<1x4x?xf32>,tensor<8x?xf32>,!stablehlo.token",
     "CHECK,PARTIAL-REFINE"),
    ("fail", "types=!not.a_type", "UNKNOWN-TYPE"),
    ("fail", "types=tensor<f32>,tensor<1xf32>,tensor<?xf32>,tensor<*xf32>,tensor<*xf32>,!stablehlo.token",
     "UNRANKED-ERROR"),
]


def run_refine_arguments_file(path: str, pass_name: str) -> list[dict]:
    """The five RUN lines of upstream's ``stablehlo_refine_parameters.mlir`` with ``pass_name``."""
    results = []
    text = open(path).read()
    for kind, options, prefixes in REFINE_ARGUMENT_RUNS:
        pipeline = f"builtin.module({pass_name}{{{options}}})"
        if kind == "split":
            for record in run_file(path, pipeline, prefixes=prefixes):
                results.append({**record, "run": prefixes})
        else:
            results.append({"case": 0, "run": prefixes, **judge_failure(text, pipeline, prefixes)})
    return results


if __name__ == "__main__":
    file_path, pipeline_text = sys.argv[1], sys.argv[2]
    if pipeline_text in ("stablehlo-refine-arguments", "toolkit-bind-shapes"):
        records = run_refine_arguments_file(file_path, pipeline_text)
        for record in records:
            if not record["ok"]:
                print(f"FAIL {record['run']} {record['case']}: {record['why'][:600]}")
        print(f"{sum(r['ok'] for r in records)}/{len(records)} passed")
        sys.exit(0)
    records = run_file(file_path, pipeline_text)
    names = case_names(file_path)
    for record in records:
        if not record["ok"]:
            print(f"FAIL {record['case']} {names[record['case']]}: {record['why'][:400]}")
    print(f"{sum(r['ok'] for r in records)}/{len(records)} passed")
