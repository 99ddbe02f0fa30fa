#!/usr/bin/env bash
# Tests of the Python reader: a venv under .venv, the pinned dependencies from the configured
# package index, then pytest (which imports the package from src/, see pyproject.toml).
# Usage: ./test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")"
python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
exec .venv/bin/python -m pytest -q "$@"
