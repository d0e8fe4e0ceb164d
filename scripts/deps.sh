#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages powershape builds and tests with, where they are missing
# (chromium-headless-shell: the report test looks at the HTML report as a browser draws it).
set -euo pipefail
need=()
for p in cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libgtest-dev libeigen3-dev clang-format black flake8 python3-torch python3-pytest python3-setuptools procps clang chromium-headless-shell; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
# A machine whose image already has the libraries (the GPU machine) may lack dpkg entries for
# them: trust CMake's find_package there.
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "powershape: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
