#!/usr/bin/env bash
# The layering the build enforces (src/CMakeLists.txt, docs/design.md): a module sees the headers
# of the modules below it and no other, and links against their code alone. A planted upward
# reach, from util to sim, must fail both ways, and the same code must pass where sim is allowed.
#   layers_test.sh CXX BUILD_DIR
set -u
cxx=$1 build=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 passed=0
check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok   $what"; passed=$((passed + 1))
  else
    echo "FAIL $what"; failures=$((failures + 1))
  fi
}
compile() { "$cxx" -std=c++20 -fPIC -c "$here/upward.cpp" -o "$tmp/$1.o" "${@:2}" 2>"$tmp/$1.err"; }
link() { "$cxx" -shared -Wl,--no-undefined "$tmp/call.o" -L"$build/layers" "-lpowershape_layer_$1" \
  -Wl,-rpath,"$build/layers" -o "$tmp/$1.so" 2>"$tmp/link_$1.err"; }

compile include_util -I"$build/layers/util"
check "util includes a sim header: it does not compile" \
  grep -q "powershape/sim/profile.hpp: No such file" "$tmp/include_util.err"
check "sim's own layer compiles it" compile include_sim -I"$build/layers/sim"

check "the call alone compiles" compile call -DUPWARD_CALL_ONLY
link util
check "util calls into sim: it does not link" \
  grep -q "undefined reference to .powershape::sim::profile_names" "$tmp/link_util.err"
check "sim's layer links it" link sim
check "and every layer library the build made is here" \
  test "$(ls "$build"/layers/libpowershape_layer_*.so | wc -l)" -ge 15
# The op's own library (libpowershape_op.a) links alone: nothing of NVML or the tune cache in it.
check "the op links without telemetry or the experiment engine" \
  bash -c "! nm -C '$build/layers/libpowershape_layer_op.so' | grep -qE 'powershape::(telemetry|experiment)::|nvml'"
check "and holds the op's ABI" bash -c "nm -D '$build/layers/libpowershape_layer_op.so' | grep -q ' T ps_lmhead_run'"
# What an include tree cannot stop: a relative include out of a module's folder, a CUDA header
# outside kernels/ and the kinds' .cu files, which build with the kernels (a toolkit on the
# compiler's own path), a benchmark that reaches into the CLI.
src=$here/../../src/powershape
check "no module includes another by a relative path" \
  bash -c "! grep -rnE '#include \"\\.\\./' '$src'"
check "no CUDA header outside kernels/ and .cu files" \
  bash -c "! grep -rnE '#include <(cuda|cublas|cudnn|nccl)[a-zA-Z_]*\\.h>' '$src' --exclude-dir=kernels --exclude='*.cu'"
check "no benchmark includes the CLI" \
  bash -c "! grep -rnE '#include \"(\\.\\./)*src/cli/|#include \"(subcommands|workload_options|backend_spec)\\.hpp\"' '$here/../../bench'"
echo "$passed passed, $failures failed"
exit $((failures > 0))
