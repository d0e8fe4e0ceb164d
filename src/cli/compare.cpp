#include <cstdio>
#include <string>
#include <vector>

#include "command_backend.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/util/json_io.hpp"
#include "result_table.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> words;  // after --: commands separated by :::
  std::vector<std::string> scan;   // -L NAME V1,V2,...
  std::string source = "nvml", out;
  experiment::Design design;
  double min_effect_pct = 0.5;
};

std::vector<std::vector<std::string>> commands_of(const CompareArgs& a) {
  std::vector<std::vector<std::string>> out(1);
  for (const auto& w : a.words) {
    if (w == ":::") {
      out.emplace_back();
    } else {
      out.back().push_back(w);
    }
  }
  for (const auto& c : out) {
    if (c.empty())
      throw std::runtime_error("compare: an empty command (give CMD ::: CMD after --)");
  }
  if (!a.scan.empty()) {  // -L NAME V1,V2: one command, {NAME} replaced by each value
    if (out.size() != 1) throw std::runtime_error("-L: give one command to scan, not several");
    const std::string key = "{" + a.scan[0] + "}";
    std::vector<std::vector<std::string>> scanned;
    std::string values = a.scan[1];
    for (std::size_t at = 0; at <= values.size();) {
      const auto comma = values.find(',', at);
      const std::string v =
          values.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
      if (v.empty()) throw std::runtime_error("-L: an empty value in '" + values + "'");
      std::vector<std::string> c = out[0];
      bool used = false;
      for (auto& w : c) {
        for (auto p = w.find(key); p != std::string::npos; p = w.find(key, p + v.size())) {
          w.replace(p, key.size(), v);
          used = true;
        }
      }
      if (!used) throw std::runtime_error("-L: the command has no " + key + " to replace");
      scanned.push_back(c);
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    out = scanned;
  }
  if (out.size() < 2) throw std::runtime_error("compare: give two commands or more (CMD ::: CMD)");
  if (out.size() > 64) throw std::runtime_error("compare: at most 64 commands");
  return out;
}

int run_compare(CompareArgs& a) {
  a.design.min_effect = a.min_effect_pct / 100;
  a.design.window_s = 1;  // not used: a run lasts what the command takes
  a.design.warmup_window_s = 0.01;
  a.design.on_round = [](int round, int rounds, double seconds) {
    const double left = seconds / round * (rounds - round);
    std::fprintf(stderr, "\rpowershape: round %d of %d, ~%.0f s left   ", round, rounds, left);
    if (round == rounds) std::fputc('\n', stderr);
  };
  CommandBackend backend(commands_of(a), a.source);
  std::printf(
      "powershape compare on %s: %zu commands x %d rounds, interleaved and shuffled, after "
      "a warm-up on the first\n",
      backend.describe().c_str(), backend.config_count(), a.design.rounds);
  std::fflush(stdout);
  const experiment::Result r = experiment::run_design(backend, a.design);
  print_result(stdout, r);
  if (!a.out.empty()) util::write_json_file(a.out, experiment::to_json(r));
  return 0;
}

}  // namespace

void add_compare(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compare", "Time and energy of commands, like hyperfine for GPUs: CMD ::: CMD, or -L scans");
  static CompareArgs a;
  a.design.rounds = 10;
  a.design.warmup_max_s = 30;
  cmd->add_option("-L,--parameter-list", a.scan,
                  "NAME V1,V2,...: run the command once per value, {NAME} replaced")
      ->expected(2);
  cmd->add_option("--rounds", a.design.rounds, "Rounds (default 10)")->check(CLI::Range(2, 1000));
  cmd->add_option("--warmup-max", a.design.warmup_max_s,
                  "Seconds of warm-up at most, until power and clock settle (default 30)")
      ->check(finite_in(0, 3600));
  cmd->add_option("--source", a.source, "nvml (default), fake:TRACE.csv or hwmon[:ROOT]");
  cmd->add_option("--min-effect", a.min_effect_pct,
                  "A difference under this many percent is called 'within' it (default 0.5)")
      ->check(finite_in(0, 50));
  cmd->add_option("--seed", a.design.seed, "Seed of the run order (default 1)")
      ->check(seed_value());
  cmd->add_option("-o,--output", a.out, "Write every run as JSON");
  cmd->add_option("commands", a.words, "CMD ARGS ::: CMD ARGS ..., after --")->required();
  cmd->positionals_at_end();
  cmd->callback([] { exit_code() = run_compare(a); });
}

}  // namespace powershape::cli
