#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs the whole suite. GPU tests run only where a GPU is
# present; elsewhere ctest reports them as skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${CUSYNC_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)"
