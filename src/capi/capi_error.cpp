#include "capi_error.hpp"

#include "powershape/powershape.h"

namespace powershape::capi {

std::string& last_error() {
  thread_local std::string e;
  return e;
}

}  // namespace powershape::capi

extern "C" const char* ps_last_error(void) { return powershape::capi::last_error().c_str(); }
