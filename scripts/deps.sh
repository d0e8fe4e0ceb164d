#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages powershape needs, where they are missing.
#   scripts/deps.sh build   what building the tool needs (cmake, a C++20 compiler, CLI11,
#                           nlohmann-json, Eigen): the quick start and pip install
#   scripts/deps.sh pip     that, and python3-venv, python3-setuptools and python3-wheel:
#                           pip install --no-build-isolation . in a venv
#   scripts/deps.sh [test]  all of that, and what the tests and CI need: GoogleTest, formatters, clang
#                           (fuzzing), python3-torch/pytest/setuptools/venv (the Python package),
#                           procps, chromium-headless-shell (the report test looks at the page as a
#                           browser draws it)
set -euo pipefail
set_name=${1:-test}
build=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libeigen3-dev)
case $set_name in
  build) want=("${build[@]}") ;;
  pip) want=("${build[@]}" python3-venv python3-setuptools python3-wheel python3-pip) ;;
  test) want=("${build[@]}" libgtest-dev clang-format black flake8 python3-torch python3-pytest
              python3-setuptools python3-wheel python3-venv python3-pip procps file pkg-config clang chromium-headless-shell) ;;
  *) echo "deps.sh: the set is build, pip or test, not '$set_name'" >&2; exit 2 ;;
esac
need=()
for p in "${want[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
# A machine whose image already has the libraries (the GPU machine) may lack dpkg entries for
# them: trust CMake's find_package there.
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "powershape: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
