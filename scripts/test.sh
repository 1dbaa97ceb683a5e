#!/usr/bin/env bash
# Install, then run every test: pytest (unit, corpus, interop) and lit (golden IR tests).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
. .venv/bin/activate
status=0
lit -sv test/lit || status=1
python -m pytest -q -p no:cacheprovider tests "$@" || status=1
exit $status
