#pragma once
// What a printer wrote to the FILE* it was given, as a string.
#include <cstdio>
#include <functional>
#include <string>

namespace powershape::testing {

inline std::string printed(const std::function<void(std::FILE*)>& print) {
  std::FILE* f = std::tmpfile();
  print(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  std::fclose(f);
  return s;
}

}  // namespace powershape::testing
