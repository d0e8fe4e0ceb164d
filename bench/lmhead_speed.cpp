// LM head + cross-entropy, forward and backward, on the GPU: for each shape and chunk count the
// sustained ms per iteration, TFLOP/s counting 6NDV, energy per iteration from NVML, the extra
// device memory (measured: workspace, product plans), and the ratio to a ceiling measured in the
// same run: the same three cuBLASLt products alone, unchunked, dW in the op's dtype. "Sustained"
// is the experiment engine's: after a warm-up that lasts until the power controller has settled,
// interleaved shuffled rounds, medians with bootstrap intervals. --dw: the dtype dW accumulates in.
// --products: also the three products alone at each chunk count above 1 (rows "pC"), which splits
// a chunk count's cost into what chunking the products costs and what the pass and scaling add.
// --exp: where the softmax's exponent is taken: in a pass of its own (rows C), in the logits
// product (rows eC; the op's default on an sm_90 GPU), or both in the same run (the default where
// the GPU can, else the pass alone).
//   lmhead_speed [--shapes N,D,V;N,D,V...] [--chunks 1,2,...] [--dw bf16|fp32] [--products]
//                [--exp pass|product|both] [--window S] [--rounds R] [--json F]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "powershape/experiment/engine.hpp"
#include "powershape/experiment/gpu_backend.hpp"
#include "powershape/kernels/lmhead.hpp"
#include "powershape/util/int_list.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/workload/args.hpp"

using namespace powershape;

namespace {

// The chunks-that-cost-nothing issue's targets: the ratio to the ceiling a chunk count must reach
// at a shape, 0 where it set none.
double target_for(const workload::LmHead& s, int chunks) {
  const auto is = [&](int64_t n, int64_t d, int64_t v) {
    return s.tokens == n && s.width == d && s.vocab == v;
  };
  if (is(16384, 896, 151936) && (chunks == 1 || chunks == 8)) return 0.95;
  if (is(16384, 4096, 128256) && chunks == 8) return 0.98;
  if (is(4096, 4096, 128256) && chunks == 2) return 0.97;
  if (is(4096, 4096, 128256) && chunks == 8) return 0.90;
  return 0;
}

nlohmann::json run_shape(experiment::Backend& gpu, const workload::LmHead& shape,
                         const std::vector<int>& chunks, bool products,
                         const std::vector<bool>& exps, const experiment::Design& design) {
  std::vector<workload::Plan> configs;
  std::vector<bool> is_products{true};
  const workload::LmHeadProducts ceiling{shape.tokens, shape.width, shape.vocab, shape.dw_bytes};
  configs.push_back(workload::make_plan({ceiling, 1}, {}));
  for (int c : chunks) {
    if (c > shape.tokens) continue;
    for (bool e : exps) {
      workload::LmHead op = shape;
      op.exp_in_product = e;
      configs.push_back(workload::lmhead_plan(op, c));
      is_products.push_back(false);
    }
    if (products && c > 1) {
      configs.push_back(workload::make_plan({ceiling, c}, {}));
      is_products.push_back(true);
    }
  }
  gpu.set_configs(configs);
  const experiment::Result r = experiment::run_design(gpu, design);
  std::printf("(warm-up %.1f s, %s)\n", r.warmup_s,
              r.settled ? "settled" : "not settled: figures may still drift");
  const double flops = 6.0 * static_cast<double>(shape.tokens) * static_cast<double>(shape.width) *
                       static_cast<double>(shape.vocab);
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < r.configs.size(); ++i) {
    const auto& c = r.configs[i];
    const int ch = i == 0 ? 0 : configs[i].workload.chunks;
    const auto* op = std::get_if<workload::LmHead>(&configs[i].workload.kind);
    const bool in_product = op != nullptr && op->exp_in_product;
    const std::string label = i == 0 ? "ceil"
                                     : (is_products[i] ? "p"
                                        : in_product   ? "e"
                                                       : "") +
                                           std::to_string(ch);
    // The ceiling's time over ours: 1 is as fast as the products alone.
    const double of = 1 / c.time_ratio.mid, of_lo = 1 / c.time_ratio.hi,
                 of_hi = 1 / c.time_ratio.lo;
    char target[32] = "";
    const double wanted = is_products[i] ? 0 : target_for(shape, ch);
    if (wanted > 0)
      std::snprintf(target, sizeof target, "%s %.2f", of >= wanted ? "meets" : "MISSES", wanted);
    std::printf("%-22s %7s %11.2f %8.1f %9.2f %7.0f %6.0f %6.0f%% %9.2f %7.3f [%.3f, %.3f] %s\n",
                i == 0 ? (std::to_string(shape.tokens) + "x" + std::to_string(shape.width) + "x" +
                          std::to_string(shape.vocab))
                             .c_str()
                       : "",
                label.c_str(), c.ms_per_iteration, flops / c.ms_per_iteration * 1e-9,
                c.j_per_iteration, c.avg_power_w, c.sm_clock_mhz, c.power_capped * 100, c.extra_gib,
                of, of_lo, of_hi, target);
    std::fflush(stdout);
    rows.push_back({{"chunks", ch},
                    {"ceiling", i == 0},
                    {"products_only", is_products[i]},
                    {"exp_in_product", in_product},
                    {"dw", shape.dw_bytes == 4 ? "fp32" : "bf16"},
                    {"ms", c.ms_per_iteration},
                    {"tflops", flops / c.ms_per_iteration * 1e-9},
                    {"j_per_iteration", c.j_per_iteration},
                    {"avg_power_w", c.avg_power_w},
                    {"sm_clock_mhz", c.sm_clock_mhz},
                    {"power_capped", c.power_capped},
                    {"extra_gib", c.extra_gib},
                    {"of_ceiling", {{"lo", of_lo}, {"ratio", of}, {"hi", of_hi}}}});
  }
  return {{"shape", {shape.tokens, shape.width, shape.vocab}},
          {"rows", rows},
          {"result", experiment::to_json(r)}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"LM head + cross-entropy against the three products alone, sustained, on GPU 0"};
  std::string shapes = "4096,4096,128256;16384,896,151936;16384,4096,128256;131072,896,151936";
  std::string chunks = "1,2,4,8,16,32,64";
  std::string json_path, dw = "bf16", exp = "both";
  bool products = false;
  experiment::Design design;
  design.rounds = 3;
  design.window_s = 3;
  design.warmup_max_s = 20;  // the GPU stays hot from one shape to the next
  app.add_option("--shapes", shapes, "N,D,V;N,D,V... (default the four measured shapes)");
  app.add_option("--chunks", chunks, "Chunk counts (default 1,2,4,8,16,32,64)");
  app.add_option("--dw", dw, "The dtype dW accumulates in: bf16 (default) or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}));
  app.add_option("--exp", exp,
                 "Where the exponent is taken: pass, product (sm_90 only) or both (default; the "
                 "pass alone where the GPU cannot)")
      ->check(CLI::IsMember({"pass", "product", "both"}));
  app.add_flag("--products", products,
               "Also the three products alone at each chunk count above 1 (rows pC)");
  app.add_option("--window", design.window_s, "Seconds per measurement (default 3)");
  app.add_option("--rounds", design.rounds, "Interleaved rounds (default 3)");
  app.add_option("--warmup", design.warmup_max_s,
                 "At most this many seconds of warm-up a shape (default 20)");
  app.add_option("--json", json_path, "Write every row and the engine's measurements as JSON");
  CLI11_PARSE(app, argc, argv);
  try {
    const std::vector<int> counts = util::parse_int_list(chunks, "--chunks");
    std::vector<workload::LmHead> parsed;
    std::stringstream ss(shapes);
    for (std::string item; std::getline(ss, item, ';');) {
      const auto s = workload::parse_shape(item);
      parsed.push_back({s[0], s[1], s[2]});
      parsed.back().dw_bytes = dw == "fp32" ? 4 : 2;
    }
    experiment::GpuBackend gpu(experiment::measurement_sampler_options());
    const bool can = kernels::LmHead::exp_in_product(workload::LmHeadOptions{});
    if (exp == "product" && !can)
      throw std::invalid_argument(
          "--exp product: this GPU cannot take the exponent in the product "
          "(an sm_90 GPU and a build for sm_90a only)");
    std::vector<bool> exps;
    if (exp != "product") exps.push_back(false);
    if (exp != "pass" && can) exps.push_back(true);
    std::printf("%s\n%-22s %7s %11s %8s %9s %7s %6s %7s %9s %7s %s\n", gpu.describe().c_str(),
                "N x D x V", "chunks", "sustain ms", "TFLOP/s", "J/iter", "W", "MHz", "capped",
                "extra GiB", "/ceil", "[95% CI]  target");
    nlohmann::json out = {{"device", gpu.device_json()}, {"shapes", nlohmann::json::array()}};
    for (const auto& shape : parsed)
      out["shapes"].push_back(run_shape(gpu, shape, counts, products, exps, design));
    if (!json_path.empty()) util::write_json_file(json_path, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lmhead_speed: %s\n", e.what());
    return 1;
  }
  return 0;
}
