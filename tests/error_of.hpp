#pragma once
// What a call throws: the message of a std::runtime_error, or the subject of a refusal.
#include <stdexcept>
#include <string>

#include "powershape/util/error.hpp"

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

// The subject of the invalid-input Error a call throws ("chunks"); otherwise what it threw, or
// "no error".
template <class F>
std::string refused_for(F&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.kind() == ErrorKind::kInvalidInput ? e.subject()
                                                : std::string("not invalid input: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("not an Error: ") + e.what();
  }
  return "no error";
}

}  // namespace powershape::testing
