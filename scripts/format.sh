#!/usr/bin/env bash
# Formats the C++ and CUDA sources with clang-format (.clang-format) and the Python with black
# (pyproject.toml); --check only reports the files that are not formatted, and the Python that
# flake8 finds fault with (.flake8), and exits 1 if there are any (CI runs it so).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in clang-format black flake8; do
  command -v $tool >/dev/null || { echo "format: $tool is not installed (scripts/deps.sh installs it)" >&2; exit 2; }
done
mapfile -t py < <(git ls-files --cached --others --exclude-standard '*.py')
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.c')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f"); done
  mapfile -t -O ${#bad[@]} bad < <(black --check "${py[@]}" 2>&1 | sed -n 's/^would reformat //p')
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format: ${#bad[@]} files are not formatted (run scripts/format.sh): ${bad[*]}" >&2
    exit 1
  fi
  flake8 "${py[@]}" || { echo "format: flake8 finds fault with the Python above" >&2; exit 1; }
  echo "format: ${#files[@]} C++/CUDA and ${#py[@]} Python files formatted, the Python lint-clean"
else
  clang-format -i "${files[@]}"
  black -q "${py[@]}"
fi
