#pragma once
// The C API's error handling: every entry point runs its body through guarded(), which turns an
// exception into the failure value, ps_last_error()'s text and ps_last_error_kind()'s kind (per
// thread).
#include <exception>
#include <string>

#include "powershape/util/error.hpp"

namespace powershape::capi {

std::string& last_error();
int& last_error_kind();  // a PS_ERROR_* value

template <class T, class Body>
T guarded(T failure, Body&& body) {
  try {
    last_error().clear();
    last_error_kind() = 0;
    return body();
  } catch (const std::exception& e) {
    last_error() = e.what();
    last_error_kind() = static_cast<int>(kind_of(e));
  } catch (...) {
    last_error() = "unknown error";
    last_error_kind() = static_cast<int>(ErrorKind::kDevice);
  }
  return failure;
}

}  // namespace powershape::capi
