// ps_abi_layout(): the structures as this library was compiled with them, from powershape_abi.h's
// tables, so that a binding (the Python package) builds its own from the library it loads.
#include <cstddef>
#include <string>

#include "powershape/powershape.h"

namespace {

std::string layout() {
  std::string out;
  const auto line = [&out](const char* a, const char* b, const char* c, std::size_t n) {
    out +=
        std::string(a) + " " + b + (c[0] != '\0' ? " " : "") + c + " " + std::to_string(n) + "\n";
  };
#define PS_LAYOUT_FIELD(type, name, kind) line(structure, #name, #kind, offsetof(S, name));
#define PS_LAYOUT_STRUCT(s, fields)           \
  {                                           \
    using S = s;                              \
    const char* structure = #s;               \
    fields(PS_LAYOUT_FIELD);                  \
    line(structure, "sizeof", "", sizeof(S)); \
  }
  PS_ABI_STRUCTS(PS_LAYOUT_STRUCT)
#undef PS_LAYOUT_STRUCT
#undef PS_LAYOUT_FIELD
  return out;
}

}  // namespace

extern "C" const char* ps_abi_layout(void) {
  static const std::string text = layout();
  return text.c_str();
}
