// Links the installed LM head op and asks how much workspace a shape needs (no GPU needed).
#include <cstdio>

#include "powershape/kernels/lmhead.hpp"

int main() {
  powershape::kernels::LmHeadOptions o;
  o.chunks = 4;
  std::printf("workspace for 16384x896x151936 at 4 chunks: %zu bytes\n",
              powershape::kernels::LmHead::workspace_bytes(16384, 896, 151936, o));
  return 0;
}
