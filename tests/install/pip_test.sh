#!/usr/bin/env bash
# `pip install --no-build-isolation .` as a new user runs it, in a fresh venv and offline: the
# package builds and carries libpowershape_c.so and the CLI, the checkout stays as it was, and
# `import powershape` and the `powershape` on PATH work from another folder with no environment
# variable. The CMake build goes to BUILD_DIR/pip (incremental across runs), without CUDA here
# (the kernels take most of a build; scripts/gpu-check.sh pip installs with them on the GPU).
#   pip_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$(realpath "$1") src=$(realpath "$2")
. "$src/tests/cli/check.sh"
# As README.md says, word for word (HOME is the scratch folder): Debian's python3 (its
# setuptools and wheel; pyenv's may lack wheel) makes the venv.
before=$(git -C "$src" status --porcelain --ignored 2>/dev/null)
start=$(date +%s)
(
  export HOME=$tmp PATH=/usr/bin:$PATH
  unset POWERSHAPE_LIB POWERSHAPE_BIN PYTHONPATH
  cd "$src" || exit 1
  python3 -m venv --system-site-packages ~/venv &&
    POWERSHAPE_BUILD_DIR="$build/pip" POWERSHAPE_CMAKE_ARGS="${POWERSHAPE_CMAKE_ARGS--DPOWERSHAPE_CUDA=OFF}" \
      ~/venv/bin/pip install --no-build-isolation . --no-index
) >"$tmp/pip.log" 2>&1
rc=$?
echo "pip install took $(($(date +%s) - start)) s"
test $rc -eq 0 || tail -n 30 "$tmp/pip.log"
check "pip install --no-build-isolation . succeeds" test $rc -eq 0
check "and leaves the checkout as it was" test "$(git -C "$src" status --porcelain --ignored 2>/dev/null)" = "$before"
cd "$tmp" || exit 1
run() { env -u POWERSHAPE_LIB -u POWERSHAPE_BIN -u PYTHONPATH -u POWERSHAPE_SHARE "$@"; }
run "$tmp/venv/bin/python" -c "import powershape; print(powershape.library_version())" >"$tmp/import.out" 2>&1
check "import powershape works with no environment variable" grep -qx "[0-9][0-9.]*" "$tmp/import.out" || cat "$tmp/import.out"
check "it loads the library it carries" run "$tmp/venv/bin/python" -c "
import powershape._lib as l, os, sys
sys.exit(0 if l.lib()._name.startswith(os.path.dirname(l.__file__)) else 1)"
check "powershape is on the venv's PATH" test -x "$tmp/venv/bin/powershape"
check "the same CLI: its version is the package's" test "$(run "$tmp/venv/bin/powershape" --version)" = "powershape $(cat "$tmp/import.out")"
run "$tmp/venv/bin/powershape" sim --seconds 1 >"$tmp/sim.out" 2>&1
check "the CLI finds its profiles inside the package" grep -q "h200" "$tmp/sim.out" || cat "$tmp/sim.out"
run "$tmp/venv/bin/powershape" nosuch >/dev/null 2>&1
check "and passes its exit code on" test $? -ne 0
exe=$(ls "$tmp"/venv/lib/python3*/site-packages/powershape/_prefix/bin/powershape)
check "the carried CLI is stripped ($(du -h "$exe" | cut -f1))" test "$(stat -c %s "$exe")" -lt 20000000
echo "the installed package: $(du -sh "$tmp"/venv/lib/python3*/site-packages/powershape | cut -f1)"
# On a terminal, pip without -v still shows the build's stages (setup.py writes them to /dev/tty;
# `script` gives the install one). A second install: incremental.
if command -v script >/dev/null; then
  (cd "$src" && HOME=$tmp POWERSHAPE_BUILD_DIR="$build/pip" POWERSHAPE_CMAKE_ARGS="${POWERSHAPE_CMAKE_ARGS--DPOWERSHAPE_CUDA=OFF}" \
    script -qec "$tmp/venv/bin/pip install --no-build-isolation . --no-index" /dev/null) >"$tmp/tty.log" 2>&1
  check "pip on a terminal shows the build's stages" bash -c "grep -q 'powershape: \[1/3\] configuring with CMake' '$tmp/tty.log' && grep -q 'powershape: \[2/3\] building' '$tmp/tty.log' && grep -q 'powershape: \[3/3\] installing' '$tmp/tty.log'"
fi
finish
