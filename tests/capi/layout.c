/* Prints the C API's structures as the C compiler lays them out, from powershape_abi.h's tables,
 * in ps_abi_layout()'s form: a line a field ("STRUCT FIELD KIND OFFSET") and one a structure
 * ("STRUCT sizeof SIZE"). python/tests/test_layout.py holds the library's own layout (compiled
 * as C++) and the Python package's ctypes structures to it. */
#include <stddef.h>
#include <stdio.h>

#include "powershape/powershape.h"

#define FIELD(type, name, kind) \
  printf("%s %s %s %zu\n", structure, #name, #kind, offsetof(S, name));
#define STRUCT(s, fields)                                   \
  {                                                         \
    typedef s S;                                            \
    const char* structure = #s;                             \
    fields(FIELD) printf("%s sizeof %zu\n", #s, sizeof(S)); \
  }

int main(void) {
  PS_ABI_STRUCTS(STRUCT)
  return 0;
}
