#pragma once
// A settings target for tests, without a device.
#include <string>

#include "powershape/advise/apply.hpp"

namespace powershape::advise {

// A GPU whose clock cap is whatever was last set (none as found), every change counted.
class FakeTarget : public SettingsTarget {
 public:
  std::string describe() const override { return "fake GPU"; }
  nlohmann::json snapshot(const Setting&) override {
    return {{"target", {{"kind", "fake"}}}, {"cap", cap}};
  }
  void set(const Setting& s) override {
    cap = s.clock_cap_mhz;
    ++sets;
  }
  void restore(const nlohmann::json& j) override { cap = j.at("cap").get<double>(); }
  double cap = 0;
  int sets = 0;
};

}  // namespace powershape::advise
