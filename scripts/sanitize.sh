#!/usr/bin/env bash
# Builds powershape without CUDA under AddressSanitizer and UndefinedBehaviorSanitizer (with
# float-cast-overflow; any finding stops the test that made it) into build-san/, then runs every
# CPU test there. Extra arguments go to ctest, e.g. -R Sampler.
#   scripts/sanitize.sh [ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
flags="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B build-san "${gen[@]}" -DPOWERSHAPE_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-san -j "$(nproc)"
# detect_leaks: the tests' own exits are leak-free; halt_on_error: a finding fails its test.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Checks of how long things take (a mark's start-up inside a measured step) run in the plain
# build: instrumented, a process's start-up alone takes 0.2 s and more on a busy 2-core machine.
export POWERSHAPE_TIMING_TESTS=0
# python.package loads the instrumented libpowershape_c into an uninstrumented Python, and
# install.downstream builds a project of its own against the install tree with the plain
# compiler, as install.pip builds the package with it, and docs.commands does both as the docs show;
# ASan cannot run these without preloading its runtime: they run in the plain build.
cd build-san && ctest -L cpu -E '^(python\.package|install\.(downstream|pip)|docs\.commands)$' --output-on-failure -j "$(nproc)" "$@"
