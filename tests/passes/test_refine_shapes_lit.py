"""Upstream StableHLO lit cases: our passes against jaxlib's C++ passes.

Every case of upstream's refine-shapes tests (two upstream commits) runs
through ``toolkit-refine-shapes{mode=stablehlo}`` and through the C++
``stablehlo-refine-shapes``; every RUN line of the refine-arguments test
through ``toolkit-bind-shapes`` and ``stablehlo-refine-arguments``. Pass rates
are printed; ours must pass every case the C++ pass passes.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import refine_lit_harness as harness  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIT = os.path.join(ROOT, "..", "shared", "corpora", "stablehlo_lit")
REFINE_FILES = ["transforms/stablehlo_refine_shapes.mlir", "transforms_c2ceaecc/stablehlo_refine_shapes.mlir"]

pytestmark = pytest.mark.skipif(not os.path.isdir(LIT), reason="stablehlo_lit corpus not present")


def _report(label: str, ours: list[dict], theirs: list[dict], names: list[str] | None = None) -> None:
    ok_ours, ok_theirs = sum(r["ok"] for r in ours), sum(r["ok"] for r in theirs)
    print(f"\n{label}: toolkit {ok_ours}/{len(ours)}  C++ {ok_theirs}/{len(theirs)}")
    for mine, cxx in zip(ours, theirs):
        if mine["ok"] != cxx["ok"]:
            name = names[mine["case"]] if names else mine.get("run", "")
            print(f"  case {mine['case']} {name}: toolkit {'ok' if mine['ok'] else 'FAIL'}, "
                  f"C++ {'ok' if cxx['ok'] else 'FAIL'}")


@pytest.mark.parametrize("relative", REFINE_FILES)
def test_refine_shapes_upstream_cases(relative):
    path = os.path.join(LIT, relative)
    ours = harness.run_file(path, harness.OURS["stablehlo-refine-shapes"])
    theirs = harness.run_file(path, harness.CXX["stablehlo-refine-shapes"])
    _report(relative, ours, theirs, harness.case_names(path))
    missed = [r["case"] for r, c in zip(ours, theirs) if c["ok"] and not r["ok"]]
    assert not missed, [(i, ours[i]["why"][:300]) for i in missed]
    # Baselines measured with jaxlib 0.10.2 (see the corpus README).
    assert sum(c["ok"] for c in theirs) >= (92 if relative.startswith("transforms/") else 91)


def test_refine_arguments_upstream_runs():
    path = os.path.join(LIT, "transforms/stablehlo_refine_parameters.mlir")
    ours = harness.run_refine_arguments_file(path, "toolkit-bind-shapes")
    theirs = harness.run_refine_arguments_file(path, "stablehlo-refine-arguments")
    _report("stablehlo_refine_parameters.mlir", ours, theirs)
    missed = [(r["run"], r["case"], r["why"][:300]) for r, c in zip(ours, theirs) if c["ok"] and not r["ok"]]
    assert not missed
    assert len(ours) == 23


def test_harness_detects_a_wrong_pass():
    # Guard against a harness that passes everything: with no pass at all,
    # most refine-shapes cases must fail (upstream README: 15/98 pass with no pass).
    path = os.path.join(LIT, REFINE_FILES[0])
    results = harness.run_file(path, "builtin.module(cse)")
    assert sum(r["ok"] for r in results) < 30
