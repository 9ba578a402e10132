#!/usr/bin/env bash
# openapi-python-client (pinned) in the project's virtual environment (.venv/, git-ignored,
# shared with the fuzzers' scripts/fuzz/python-venv.sh), never system-wide: test/openapi-client
# generates a Python client from the served OpenAPI document with it. Idempotent. Prints the
# venv's bin directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=0.29.1
# One install at a time: the fuzzers and the loader tests share the venv and may start together.
exec 9>.venv.lock
flock 9
VENV=.venv
if [ -x "$VENV/bin/openapi-python-client" ] && "$VENV/bin/openapi-python-client" --version 2>/dev/null | grep -q "$VERSION"; then
  echo "$PWD/$VENV/bin"
  exit 0
fi
command -v python3 >/dev/null || { echo "python-client-venv: python3 is required" >&2; exit 1; }
[ -x "$VENV/bin/pip" ] || python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "openapi-python-client==$VERSION" >&2
echo "$PWD/$VENV/bin"
