#!/usr/bin/env bash
# Installs the build into a fresh prefix, then uses it as a user would: the installed CLI from
# another folder (it must find its profiles and data beside itself), and a program of their own
# built with find_package(powershape) and with pkg-config.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$(realpath "$1") src=$(realpath "$2")
. "$src/tests/cli/check.sh"
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1
check "cmake --install succeeds" test $? -eq 0
check "the installed CLI is stripped" bash -c "file '$prefix/bin/powershape' | grep -q ', stripped'"
check "and so is the C library" bash -c "file -L '$prefix/lib/libpowershape_c.so' | grep -q ', stripped'"
check "the static libraries carry no debug information" bash -c "! readelf -S '$prefix'/lib/libpowershape*.a | grep -q debug_info"
echo "installed: bin/powershape $(du -h "$prefix/bin/powershape" | cut -f1), the tree $(du -sh "$prefix" | cut -f1)"
cd "$tmp" || exit 1
check "--version names the version" grep -q "^powershape [0-9]" <("$prefix/bin/powershape" --version)
"$prefix/bin/powershape" sim --profile nosuch --iterations 1 2>"$tmp/np.err"
check "the installed CLI looks for profiles beside itself" grep -q "profiles in $prefix/share/powershape/profiles" "$tmp/np.err"
"$prefix/bin/powershape" sim calibrate --max-evals 3 >"$tmp/cal.out" 2>&1
check "sim calibrate runs from any folder on the shipped data" grep -q "against $prefix/share/powershape/data/h200" "$tmp/cal.out"

cmake -S "$src/tests/install" -B "$tmp/down" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/down.log" 2>&1 &&
  cmake --build "$tmp/down" >>"$tmp/down.log" 2>&1
check "a downstream project builds with find_package(powershape)" test $? -eq 0 || cat "$tmp/down.log"
check "and runs" grep -q "lmhead 4096x896x151936 chunks=8 dw=bf16: [0-9.]* J per iteration" <("$tmp/down/downstream")
PKG_CONFIG_PATH=$prefix/lib/pkgconfig c++ "$src/tests/install/downstream.cpp" -o "$tmp/down_pc" \
  $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs powershape) >"$tmp/pc.log" 2>&1
check "a downstream program builds with pkg-config" test $? -eq 0 || cat "$tmp/pc.log"
check "and runs" grep -q "chunks=1 dw=bf16: [0-9.]* J per iteration" <("$tmp/down_pc")
if [ -f "$prefix/lib/libpowershape_kernels.a" ]; then
  cmake -S "$src/tests/install" -B "$tmp/down_cuda" -DCMAKE_PREFIX_PATH="$prefix" -DDOWNSTREAM_CUDA=ON \
    >"$tmp/cuda.log" 2>&1 && cmake --build "$tmp/down_cuda" >>"$tmp/cuda.log" 2>&1
  check "find_package(powershape COMPONENTS CUDA) links the LM head op" test $? -eq 0 || cat "$tmp/cuda.log"
  check "and its workspace query runs" grep -q "workspace for 16384x896x151936 at 4 chunks: [0-9]* bytes" \
    <("$tmp/down_cuda/downstream_lmhead")
fi
cuda_def=(); [ -f "$prefix/lib/libpowershape_kernels.a" ] && cuda_def=(-DCAPI_HAS_CUDA=1)
cc -std=c11 -D_POSIX_C_SOURCE=200809L "${cuda_def[@]}" "$src/tests/capi/capi_test.c" -I"$prefix/include" -L"$prefix/lib" \
  -lpowershape_c -lm -o "$tmp/capi" >"$tmp/capi.log" 2>&1
check "a C program builds against the installed C API" test $? -eq 0 || cat "$tmp/capi.log"
check "and records" grep -q " 0 failed" <(LD_LIBRARY_PATH=$prefix/lib "$tmp/capi" "$src/data/h200/gemm_sustained_trace.csv")
if [ -x /usr/bin/python3 ]; then
  check "the installed Python package finds the installed C library" grep -q "^0.3.0$" \
    <(cd "$tmp" && PYTHONPATH=$prefix/lib/powershape/python /usr/bin/python3 -c "import powershape; print(powershape.library_version())")
fi
finish
