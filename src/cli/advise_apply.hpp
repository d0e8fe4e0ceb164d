#pragma once
// advise --apply / --restore: the recommended setting held while a command runs (or until a
// signal), then put back.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "powershape/advise/apply.hpp"
#include "powershape/advise/setting.hpp"

namespace powershape::cli {

struct ApplyArgs {
  bool apply = false, restore = false, force = false;
  int gpu = 0;
  std::string sysfs = "/sys";  // where a Jetson's devfreq is looked for
  std::vector<std::string> command;
};

void add_apply_options(CLI::App* cmd, ApplyArgs& a);
// Puts back what runs that did not finish left set; prints a line for each. Returns 0.
int restore_left(const ApplyArgs& a);
// The same before a setting is applied (--apply, --sweep): leftovers first.
void restore_first(const std::string& sysfs);
// Sets `s` (after restoring leftovers), runs the command under it or waits for SIGINT/SIGTERM,
// restores, and returns the command's exit code (128 + signal when stopped by one).
int apply_setting(const ApplyArgs& a, const advise::Setting& s);

}  // namespace powershape::cli
