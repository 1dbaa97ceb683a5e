"""``toolkit lab PIPELINE [--on zoo | PROGRAMS...]``: a pass pipeline measured on real programs.

For each program: op counts per dialect and op, XLA's cost (flops, bytes
accessed), compile time and median run time (with min/max) before and after
the pipeline, numerics equal or not (``--verify-numerics``) and any pass
failure with a reproducer file. The rows come from
:func:`toolkit.lab.measurement.measure_pipeline`; the default output is a
table (``toolkit.lab.text_table``), ``--json`` prints the rows as JSON
(keys in ``docs/pass-lab.md``) and ``--report out.html`` also writes a
self-contained HTML page with a chart per program (``toolkit.lab.html_report``).

Progress goes to stderr: a bar redrawn in place when stderr is a terminal,
one line per program otherwise (``--quiet``: none).

Exit status: 0 when every program is ok, 1 when one failed or its numerics
differ (so CI can gate a pass on it), 2 for a wrong command line.

Example::

    toolkit lab "toolkit-simplify, cse, canonicalize" --on zoo --verify-numerics --report lab.html
    toolkit lab "my-pass, cse" model.mlir export.bin --load-pass-plugin my_passes.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, TextIO

from toolkit.lab import html_report, measurement, text_table
from toolkit.passes import PassOptionError, PipelineError, UnknownPassError, load_pass_plugin, parse_pipeline
from toolkit.runtime import client as runtime_client
from toolkit.tools.driver import EXIT_FAILURE, EXIT_SUCCESS, ToolArgumentParser, ToolError, UsageError, write_output

#: The version of ``--json``'s top-level object (the rows' keys are ``measurement.ROW_KEYS``).
JSON_SCHEMA = "toolkit-lab/1"


class _IntermixedArgumentParser(ToolArgumentParser):
    """``toolkit lab``'s parser: programs may follow flags (``toolkit lab P --runs 3 a.mlir b.mlir``).

    Plain argparse gives a ``nargs="*"`` positional only the words before the
    first flag; ``parse_known_intermixed_args`` collects them all (it calls
    ``parse_known_args`` itself, hence the guard).
    """

    _inside = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        if self._inside:
            return super().parse_known_args(args, namespace)
        self._inside = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inside = False


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``toolkit lab`` on ``toolkit``'s sub-command list; returns its parser."""
    lab = commands.add_parser(
        "lab", help="run a pass pipeline on real programs: numerics, op counts, cost, times",
        description="Measure a pass pipeline on programs: op counts, XLA's cost, compile and run time before "
                    "and after, numerics, failures with reproducers. Exit 1 when a program failed or its "
                    "numerics differ.")
    lab.add_argument("pipeline", help="the pass pipeline (textual, as toolkit-opt's --pass-pipeline)")
    lab.add_argument("files", nargs="*", metavar="PROGRAM",
                     help="programs: files (MLIR, bytecode, VHLO, serialized exports) or zoo program names")
    lab.add_argument("--on", dest="on", default=None, choices=("zoo",), help="run on every zoo program")
    lab.add_argument("--verify-numerics", action="store_true",
                     help="compare each program's results before and after the pipeline and name the pass that "
                          "changed them (toolkit.passes.verify_numerics)")
    lab.add_argument("--rtol", type=float, default=None, metavar="X",
                     help="relative tolerance of float results (default: the zoo's for zoo programs, else by dtype)")
    lab.add_argument("--atol", type=float, default=None, metavar="X", help="absolute tolerance of float results")
    lab.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    lab.add_argument("--report", default=None, metavar="OUT.html", help="also write a self-contained HTML page")
    lab.add_argument("--runs", type=int, default=5, metavar="N", help="timed runs per executable (default 5)")
    lab.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the inputs (default 0)")
    lab.add_argument("--reproducers", default=None, metavar="DIR",
                     help="where failing pipelines' reproducers go (default: a new temporary folder)")
    lab.add_argument("--load-pass-plugin", action="append", default=[], metavar="PLUGIN",
                     help="a Python file or module registering passes (repeatable)")
    lab.add_argument("--quiet", action="store_true", help="no progress on stderr")
    lab.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (default: stdout)")
    lab.set_defaults(run=cmd_lab, action=None)
    # toolkit's sub-command list makes ToolArgumentParsers; this one also takes programs after flags.
    lab.__class__ = _IntermixedArgumentParser
    return lab


class ProgressBar:
    """Progress of a lab run on ``stream``: a bar redrawn in place on a terminal, plain lines otherwise.

    Called as ``measure_pipeline``'s ``progress(index, total, program, stage)``.
    On a terminal the bar shows programs done, the current program and stage
    and the time spent; elsewhere (a log, CI) one line per finished program.
    """

    WIDTH = 24

    def __init__(self, stream: TextIO, *, interactive: bool | None = None):
        self.stream = stream
        self.interactive = stream.isatty() if interactive is None else interactive
        self.start = time.perf_counter()
        self.program_start = self.start
        self.current: str | None = None
        self.drawn = 0  # characters on the bar's line (cleared before the next draw)

    def __call__(self, index: int, total: int, program: str, stage: str) -> None:
        now = time.perf_counter()
        if program != self.current:
            self.current, self.program_start = program, now
        if self.interactive:
            done = index + (1 if stage == "done" else 0)
            filled = self.WIDTH * done // max(total, 1)
            text = (f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total} {program}: {stage} "
                    f"({now - self.start:.0f}s)")
            self.stream.write("\r" + text.ljust(self.drawn))
            self.drawn = len(text)
            if stage == "done" and done == total:
                self.stream.write("\n")
                self.drawn = 0
        elif stage == "done":
            self.stream.write(f"lab: {index + 1}/{total} {program} measured in {now - self.program_start:.1f}s\n")
        self.stream.flush()


def _programs(args: argparse.Namespace) -> list[Any]:
    if args.on and args.files:
        raise UsageError("give --on zoo or programs, not both")
    if args.on == "zoo":
        return ["zoo"]
    if not args.files:
        raise UsageError("no programs: give files or zoo program names, or --on zoo")
    return list(args.files)


def _device_count_for(programs: list[measurement.LabProgram]) -> None:
    """Ask for as many CPU devices as the programs need, unless the user chose a number or devices exist already."""
    need = max(program.num_devices for program in programs)
    if need > 1 and "TOOLKIT_NUM_CPU_DEVICES" not in os.environ and not runtime_client.backends_are_initialized():
        os.environ["TOOLKIT_NUM_CPU_DEVICES"] = str(need)


def cmd_lab(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``toolkit lab``: measure, print the table or JSON, write the HTML page; 1 when a program is not ok."""
    if args.runs < 1:
        raise UsageError(f"--runs must be at least 1, got {args.runs}")
    for flag, value in (("--rtol", args.rtol), ("--atol", args.atol)):
        if value is not None and not value >= 0:
            raise UsageError(f"{flag} must be a non-negative number, got {value}")
    for plugin in args.load_pass_plugin:
        try:
            load_pass_plugin(plugin)
        except Exception as error:  # whatever the plugin's own code raises
            raise UsageError(f"cannot load pass plugin: {error}") from None
    try:
        pipeline = parse_pipeline(args.pipeline)
    except (PipelineError, PassOptionError, UnknownPassError) as error:
        raise UsageError(f"bad pipeline: {error}") from None
    wanted = _programs(args)
    try:
        programs = measurement.resolve_programs(wanted)
    except ValueError as error:
        raise ToolError(str(error)) from None
    _device_count_for(programs)
    progress = None if args.quiet else ProgressBar(sys.stderr)
    start = time.perf_counter()
    rows = measurement.measure_pipeline(pipeline, programs, verify_numerics=args.verify_numerics, runs=args.runs,
                                        seed=args.seed, rtol=args.rtol, atol=args.atol,
                                        reproducer_dir=args.reproducers, progress=progress)
    seconds = time.perf_counter() - start
    if args.report:
        page = html_report.render_lab_report(rows, pipeline=str(pipeline), seconds=seconds)
        write_output(args.report, page.encode())
    if args.json:
        document = {"schema": JSON_SCHEMA, "pipeline": str(pipeline), "runs": args.runs, "seed": args.seed,
                    "verify_numerics": args.verify_numerics, "rtol": args.rtol, "atol": args.atol,
                    "seconds": seconds,
                    "rows": [row.to_dict() for row in rows]}
        out.write(json.dumps(document, indent=2) + "\n")
    else:
        out.write(text_table.format_table(rows, pipeline=str(pipeline)))
        out.write(f"measured in {seconds:.1f}s\n")
    return EXIT_SUCCESS if all(row.ok for row in rows) else EXIT_FAILURE
