#!/usr/bin/env bash
# Installs what cusync needs to build, by package name, only when missing. Idempotent.
set -euo pipefail

apt_packages=(cmake g++ make pkg-config libisl-dev libfmt-dev catch2 clang-19 libclang-19-dev llvm-19-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# CUTLASS headers (production GEMM kernels) come from the nvidia-cutlass package.
if ! python3 -c "import cutlass_library" 2>/dev/null; then
  echo "setup: installing nvidia-cutlass"
  python3 -m pip install -q nvidia-cutlass==4.2.0.0
fi

# pytest runs the Python package's CPU suites (ctest python.tuning, python.example_tuning: configuration choice,
# table formats, cusync-tune); without it ctest reports them skipped.
if ! python3 -c "import pytest" 2>/dev/null; then
  echo "setup: installing pytest"
  python3 -m pip install -q pytest
fi
