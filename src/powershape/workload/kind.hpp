#pragma once
// What a workload kind is made of: a folder under kinds/ (kinds/README.md says how to add one),
// each kind a struct K of its own sizes with this trait, which the rest of the tree reaches through
// std::visit over Workload's variant (kinds/all.hpp) alone:
//
//   static constexpr const char* kName;      // its --workload name, the first word of its names
//   static constexpr const char* kShape;     // what --shape's three numbers are ("ROWS,D,COLS");
//                                            // "" for none; nullptr: no command-line workload
//   static constexpr bool kChunked;          // --chunks splits its rows (tune and repro take it)
//   static std::optional<K> from_args(const WorkloadArgs&, const Sizes& shape);  // the shape
//                                            // has kDefaultShape's count of sizes
//                                            // the kind the options describe (nullopt: not this
//                                            // kind's options, another kind of kName may take
//                                            them)
//   static std::optional<K> from_name(const NameParts&);  // the kind a name_of names, or nullopt
//   static std::vector<K> examples();        // small instances of every variant of the kind (the
//                                            // profile's kernel names and the tests walk them)
//   std::string name(int chunks) const;      // "msm 65536x512x65536 chunks=4"
//   void check(int chunks) const;            // throws invalid_input naming what cannot be planned
//   void steps(int chunks, const Rates&, const StepFn&) const;  // its kernels in launch order
//
// and, in its .cu file (the GPU build alone), its buffers and kernels:
//
//   std::unique_ptr<kernels::KindOnGpu> kernels::on_gpu(const K&, int chunks,
//   kernels::GpuContext&);
//
// No CUDA headers here.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "powershape/workload/phase.hpp"

namespace powershape::kernels {
class KindOnGpu;  // kernels/kind_on_gpu.hpp
struct GpuContext;
}  // namespace powershape::kernels

namespace powershape::workload {

// One kernel launch of a workload (or, for the LM head op, one call of the op, whose kernels are
// its own): what the GPU runs (code: which of its kind's kernels; the launch's sizes) and what it
// asks of the GPU (phases, one a kernel, in launch order; the simulator's plan is their sequence).
struct WorkloadStep {
  int code = 0;                 // the kind's own name of the kernel (its enum)
  int64_t m = 0, n = 0, k = 0;  // a product's C [m x n] = A [m x k] B [k x n]; a row kernel's m
                                // rows of n values
  int64_t row0 = 0;             // the chunk's first row
  int64_t batch = 1;  // like products or row kernels the step launches (attention's heads), each
                      // m x n x k; its phase is their sum
  double bytes = 0, seconds = 0;  // a stream's bytes; an idle spin's seconds
  bool accumulate = false;        // a product added into its result
  bool fp32_result = false;       // a product's result in fp32 (else bf16)
  bool joins = false;  // its phase joins the one before of its name in a plan (a burst of products)
  std::vector<Phase> phases;
};
using StepFn = std::function<void(const WorkloadStep&)>;

// A kind's sizes, as --shape gives them ("16384,896,151936") and names write them
// ("16384x896x...").
using Sizes = std::vector<int64_t>;

// A step of one kernel, `p` its phase, launched with those sizes.
WorkloadStep step_of(int code, Phase p, int64_t m = 0, int64_t n = 0, int64_t k = 0,
                     int64_t row0 = 0, int64_t batch = 1);

// A workload as the command line describes it (`sim`, `repro`, `probe` share these options;
// cli/workload_options.cpp declares them).
struct WorkloadArgs {
  std::string workload = "lmhead";  // a kind's kName, a PLAN.json, a kernel TIMELINE.csv, or
                                    // finetune:MODEL
  std::string shape;                // the kind's three sizes (its kShape); empty: its default
  std::string chunks = "1";         // a chunk count, or a list of them to compare
  bool forward_only = false;
  bool products_only = false;   // lmhead: the products alone, chunked, without the pass
  bool exp_in_product = false;  // lmhead: the exponent in the logits product (the op on sm_90)
  double ce_bytes_per_logit = 4;
  double period_ms = 50, duty = 0.5;
  std::string gap = "idle";
  std::string recorded_on;  // a kernel timeline's GPU (a profile); default the device it runs on
  Rates recorded_on_rates;  // that profile's unthrottled rates, which the caller looks up
};

// A name_of taken apart: "lmhead forward 4096x896x151936 chunks=8 dw=bf16" is kind "lmhead",
// words {"forward"}, dims {4096, 896, 151936}, chunks 8, options {"dw=bf16"}.
struct NameParts {
  std::string kind;
  std::vector<std::string> words, options;
  Sizes dims;
  int chunks = 1;
};

// The name of a chunked kind, as NameParts reads it back: "lmhead forward 4096x896x151936
// chunks=8" from ("lmhead forward", {4096, 896, 151936}, 8).
std::string sized_name(const std::string& words, const Sizes& sizes, int chunks);
// Whether a name is its kind and `count` sizes alone, no words or options ("msm 8x8x8 chunks=2").
bool sizes_alone(const NameParts& p, std::size_t count);

// Throws invalid_input(what) unless ok.
void require(bool ok, const std::string& what);

}  // namespace powershape::workload
