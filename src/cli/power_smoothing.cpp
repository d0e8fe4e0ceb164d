// `powershape power-smoothing`: Blackwell's own power floor and ramp limits
// (advise/power_smoothing.hpp) shown, or set while a command runs and put back after it, as `advise
// --apply` holds a setting: as root, with a restore record written before anything changes.
#include "powershape/advise/power_smoothing.hpp"

#include <cstdio>
#include <optional>
#include <string>

#include "advise_apply.hpp"
#include "powershape/util/error.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct Args {
  ApplyArgs apply;
  bool json = false, off = false;
  std::optional<int> profile;
  std::optional<double> floor_pct, ramp_up, ramp_down, hysteresis_ms;
};

int run(const Args& a) {
  if (a.apply.force && !a.apply.restore)
    throw CLI::ValidationError("--force", "only with --restore");
  if (a.apply.restore) return restore_left(a.apply);
  const bool asks =
      a.off || a.profile || a.floor_pct || a.ramp_up || a.ramp_down || a.hysteresis_ms;
  if (a.apply.apply) {
    if (a.json) throw CLI::ValidationError("--json", "only to show the state, not with --apply");
    advise::SmoothingChange c;
    c.profile = a.profile;
    c.floor_pct = a.floor_pct;
    c.ramp_up_w_per_s = a.ramp_up;
    c.ramp_down_w_per_s = a.ramp_down;
    c.hysteresis_ms = a.hysteresis_ms;
    if (a.off) c.enabled = false;
    advise::Setting s;
    s.smoothing = c;
    return apply_setting(a.apply, s);
  }
  if (asks || !a.apply.command.empty())
    throw CLI::ValidationError(
        "--profile, --floor, --ramp-up, --ramp-down, --hysteresis, --off and a command after --",
        "they set power smoothing, only with --apply");
  const auto s = advise::read_smoothing(a.apply.gpu);
  if (a.json)
    std::printf("%s\n", advise::to_json(s).dump(1).c_str());
  else
    advise::print_smoothing(stdout, s, a.apply.gpu);
  return 0;
}

}  // namespace

void add_power_smoothing(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "power-smoothing",
      "Show Blackwell's power smoothing (its floor and ramp limits), or set it while a command "
      "runs (--apply, as root) and put it back after");
  static Args a;
  cmd->add_option("--gpu", a.apply.gpu, "The GPU's NVML index (default 0)")
      ->check(CLI::Range(0, 63));
  cmd->add_flag("--json", a.json, "Print the state as JSON");
  cmd->add_flag("--apply", a.apply.apply,
                "Set what the options ask (root or CAP_SYS_ADMIN) while the command after -- "
                "runs, or until Ctrl-C, then put it back as it was");
  cmd->add_option("--profile", a.profile, "With --apply: the preset profile to activate (0-4)")
      ->check(CLI::Range(0, 4));
  cmd->add_option("--floor", a.floor_pct,
                  "With --apply: the profile's floor, N% of the power limit")
      ->transform([](std::string s) { return s.ends_with('%') ? s.substr(0, s.size() - 1) : s; })
      ->check(finite_in(0, 100));
  cmd->add_option("--ramp-up", a.ramp_up, "With --apply: the profile's fastest rise, W/s")
      ->check(finite_in(1e-3, 1e7));
  cmd->add_option("--ramp-down", a.ramp_down, "With --apply: the profile's fastest fall, W/s")
      ->check(finite_in(1e-3, 1e7));
  cmd->add_option("--hysteresis", a.hysteresis_ms,
                  "With --apply: ms of low power before the profile lets power fall")
      ->check(finite_in(0, 600000));
  cmd->add_flag("--off", a.off, "With --apply: turn power smoothing off while the command runs");
  cmd->add_flag("--restore", a.apply.restore,
                "Put back settings a powershape run that did not finish left set, and exit");
  cmd->add_flag("--force", a.apply.force,
                "With --restore: remove records that cannot be read or restored (each named)");
  cmd->add_option("command", a.apply.command, "With --apply: the command to run under it");
  cmd->callback([] { exit_code() = run(a); });
}

}  // namespace powershape::cli
