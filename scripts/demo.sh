#!/usr/bin/env bash
# Install, then run the whole pipeline on a small MLP: trace -> StableHLO -> passes -> XLA.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
python -m toolkit.tools.demo
