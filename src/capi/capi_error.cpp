#include "capi_error.hpp"

#include "powershape/powershape.h"

namespace powershape::capi {

std::string& last_error() {
  thread_local std::string e;
  return e;
}

int& last_error_kind() {
  thread_local int kind = PS_ERROR_NONE;
  return kind;
}

static_assert(static_cast<int>(ErrorKind::kInvalidInput) == PS_ERROR_INVALID_INPUT &&
              static_cast<int>(ErrorKind::kUnsupported) == PS_ERROR_UNSUPPORTED &&
              static_cast<int>(ErrorKind::kDevice) == PS_ERROR_DEVICE);

}  // namespace powershape::capi

extern "C" const char* ps_last_error(void) { return powershape::capi::last_error().c_str(); }
extern "C" int ps_last_error_kind(void) { return powershape::capi::last_error_kind(); }
