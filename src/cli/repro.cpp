#include <cstdio>
#include <string>
#include <vector>

#include "backend_spec.hpp"
#include "powershape/bench/engine.hpp"
#include "powershape/workload/builders.hpp"
#include "result_table.hpp"
#include "sim_workload.hpp"
#include "source_spec.hpp"
#include "json_out.hpp"
#include "subcommands.hpp"

namespace powershape::cli {
namespace {

struct ReproArgs {
  std::string workload = "msm";
  std::string shape;
  std::string chunks = "1,2,4,8,16,32";
  std::string device;
  bench::Design design;
  double min_effect_pct = 0.2;
  std::string out;
};

int run_repro(ReproArgs& a) {
  if (a.workload != "msm" && a.workload != "lmhead") {
    throw std::runtime_error("--workload: expected msm or lmhead, found '" + a.workload + "'");
  }
  if (!(a.min_effect_pct >= 0 && a.min_effect_pct < 100)) {
    throw std::runtime_error("--min-effect: expected a percentage in [0, 100), found " + std::to_string(a.min_effect_pct));
  }
  a.design.min_effect = a.min_effect_pct / 100;
  std::string why;
  auto backend = open_backend(a.device, a.design.seed, &why);
  if (backend->simulated()) {
    std::printf("powershape repro on the %s%s\n", backend->describe().c_str(),
                why.empty() ? "" : (": no GPU here (" + why + ")").c_str());
  } else {
    std::printf("powershape repro on %s\n", backend->describe().c_str());
  }
  std::vector<workload::Plan> configs;
  for (int c : parse_int_list(a.chunks, "--chunks")) {
    if (c < 1) throw std::runtime_error("--chunks: chunk counts start at 1");
    WorkloadArgs w;
    w.workload = a.workload;
    w.shape = a.shape;
    w.chunks = c;
    configs.push_back(build_plan(w, backend->peak_flops_per_s(), backend->peak_bytes_per_s()));
  }
  backend->set_configs(configs);
  std::printf("workload %s, %zu configurations x %d rounds of %.1f s, interleaved and shuffled\n",
              configs.front().name.c_str(), configs.size(), a.design.rounds, a.design.window_s);
  std::fflush(stdout);
  bench::Result r = bench::run_design(*backend, a.design);
  print_result(stdout, r);
  if (!a.out.empty()) write_json_file(a.out, bench::to_json(r));
  return 0;
}

}  // namespace

void add_repro(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "repro", "Is chunking worth it here? Compare chunk counts of matmul-softmax-matmul or the LM head");
  static ReproArgs a;
  cmd->add_option("--workload", a.workload, "msm (default) or lmhead (forward and backward)");
  cmd->add_option("--shape", a.shape,
                  "msm: ROWS,D,COLS (default 65536,512,65536); lmhead: N,D,V (default 16384,896,151936)");
  cmd->add_option("--chunks", a.chunks, "Chunk counts to compare, the first is the baseline (default 1,2,4,8,16,32)");
  add_device_option(cmd, a.device);
  cmd->add_option("--rounds", a.design.rounds, "Rounds (default 8)");
  cmd->add_option("--window", a.design.window_s, "Seconds per measurement (default 2)");
  cmd->add_option("--cooldown", a.design.cooldown_c, "Idle before each measurement until this cool (C)");
  cmd->add_option("--seed", a.design.seed, "Seed of the run order (default 1)");
  cmd->add_option("--min-effect", a.min_effect_pct,
                  "A difference under this many percent is called 'within' it, not faster or slower (default 0.2)");
  cmd->add_option("-o,--output", a.out, "Write every measurement and the device as JSON");
  cmd->callback([] { exit_code() = run_repro(a); });
}

}  // namespace powershape::cli
