#pragma once
// The C API's error handling: every entry point runs its body through guarded(), which turns an
// exception into the failure value and ps_last_error()'s text (per thread).
#include <exception>
#include <string>

namespace powershape::capi {

std::string& last_error();

template <class T, class Body>
T guarded(T failure, Body&& body) {
  try {
    last_error().clear();
    return body();
  } catch (const std::exception& e) {
    last_error() = e.what();
  } catch (...) {
    last_error() = "unknown error";
  }
  return failure;
}

}  // namespace powershape::capi
