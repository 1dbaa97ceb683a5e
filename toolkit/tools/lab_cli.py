"""``toolkit lab PIPELINE [--on zoo | FILES...]``: a pipeline measured on real programs.

(Being built: the sub-command's parser is registered here so ``toolkit``'s
parser stays in one place; see ``docs/pass-lab.md``.)
"""

from __future__ import annotations

import argparse
from typing import TextIO

from toolkit.tools.driver import ToolError


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``toolkit lab`` on ``toolkit``'s sub-command list; returns its parser."""
    lab = commands.add_parser("lab", help="run a pass pipeline on real programs: numerics, op counts, cost, times")
    lab.add_argument("pipeline", help="the pass pipeline (textual, as toolkit-opt's --pass-pipeline)")
    lab.add_argument("files", nargs="*", help="programs to run it on (MLIR, bytecode, VHLO, serialized exports)")
    lab.add_argument("--on", dest="on", default=None, metavar="zoo", help="run on the zoo's programs")
    lab.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file (default: stdout)")
    lab.set_defaults(run=cmd_lab, action=None)
    return lab


def cmd_lab(args: argparse.Namespace, out: TextIO) -> int:
    raise ToolError("toolkit lab is not built yet")
