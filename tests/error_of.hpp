#pragma once
// The message of the std::runtime_error a call throws, or "no error".
#include <stdexcept>
#include <string>

namespace powershape::testing {

template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace powershape::testing
