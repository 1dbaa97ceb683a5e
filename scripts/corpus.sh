#!/usr/bin/env bash
# The long corpus run: every case of ../shared/corpora/jax_poly_harness at its stored sizes AND at other
# sizes against JAX (the quick suite checks other sizes for a sample), plus refinement against jaxlib's C++.
# About 7 minutes on 2 cores. Extra arguments go to pytest (e.g. -k cholesky).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
. .venv/bin/activate
TOOLKIT_HARNESS_ALL_SIZES=1 exec python -m pytest -q -p no:cacheprovider tests/export/test_jax_poly_harness.py "$@"
