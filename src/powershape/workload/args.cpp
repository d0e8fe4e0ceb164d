#include "powershape/workload/args.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/util/int_list.hpp"
#include "powershape/workload/finetune.hpp"
#include "powershape/workload/lmhead_options.hpp"
#include "powershape/workload/plan_json.hpp"
#include "powershape/workload/timeline.hpp"

namespace powershape::workload {
namespace {

// Bounds that keep a plan finite: its phases are 4 a chunk, its sizes well inside int64 products.
constexpr int64_t kMaxDim = 1'000'000'000;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

Sizes parse_sizes(const std::string& s, std::size_t count, const std::string& what) {
  static const char* const kCounts[] = {"no",   "one", "two",   "three", "four",
                                        "five", "six", "seven", "eight"};
  const std::string expected =
      "expected " + (count <= 8 ? std::string(kCounts[count]) : std::to_string(count)) +
      " comma-separated integers from 1 to 1000000000 (" + what + "), found '" + s + "'";
  Sizes out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < count; ++i) {
    auto comma = s.find(',', start);
    if ((i + 1 < count) != (comma != std::string::npos)) throw invalid_input("shape", expected);
    std::string item =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v <= 0 ||
        v > kMaxDim)
      throw invalid_input("shape", expected);
    out.push_back(v);
    start = comma + 1;
  }
  return out;
}

std::array<int64_t, 3> parse_shape(const std::string& s) {
  const Sizes v = parse_sizes(s, 3, "three sizes");
  return {v[0], v[1], v[2]};
}

std::vector<int> chunk_counts(const WorkloadArgs& a) {
  std::vector<int> out = util::parse_int_list(a.chunks, "chunks");
  for (int c : out) {
    if (c < 1) throw invalid_input("chunks", "chunk counts start at 1");
    if (c > kMaxChunks)
      throw invalid_input("chunks", "at most " + std::to_string(kMaxChunks) + " chunks, found " +
                                        std::to_string(c));
  }
  return out;
}

// The first kind named a.workload whose from_args takes the options (several kinds may share a
// name: lmhead's op and its products alone).
Workload describe(const WorkloadArgs& a, int chunks) {
  if (a.workload != LmHead::kName) {  // the LM head's own options, refused for any other kind
    if (a.products_only)
      throw invalid_input("products-only", "an lmhead option, not for '" + a.workload + "'");
    if (a.exp_in_product)
      throw invalid_input("exp-in-product", "an lmhead option, not for '" + a.workload + "'");
  }
  std::optional<Workload> out;
  for_each_kind([&](auto k) {
    using K = decltype(k);
    if (out || K::kShape == nullptr || a.workload != K::kName) return;
    Sizes shape;
    if constexpr (requires { K::kDefaultShape; })
      shape = a.shape.empty() ? Sizes(K::kDefaultShape.begin(), K::kDefaultShape.end())
                              : parse_sizes(a.shape, K::kDefaultShape.size(),
                                            std::string(K::kName) + ": " + K::kShape);
    if (auto found = K::from_args(a, shape)) out = Workload{*found, chunks};
  });
  if (out) return *out;
  if (ends_with(a.workload, ".json") || ends_with(a.workload, ".csv") ||
      a.workload.rfind("finetune:", 0) == 0)
    return {Custom{}, chunks};
  std::string kinds;
  for (const auto& k : kind_names(false)) kinds += k + ", ";
  throw invalid_input("workload", "expected " + kinds +
                                      "finetune:MODEL[:lora], a PLAN.json or a kernel "
                                      "TIMELINE.csv, found '" +
                                      a.workload + "'");
}

Plan build_plan(const WorkloadArgs& a, int chunks, const Rates& device) {
  const Workload w = describe(a, chunks);
  if (!std::holds_alternative<Custom>(w.kind)) return make_plan(w, device);
  if (ends_with(a.workload, ".json")) return read_plan(a.workload);
  if (a.workload.rfind("finetune:", 0) == 0) {
    Finetune f = parse_finetune(a.workload, a.shape);
    f.lm_head_chunks = chunks;
    return finetune_plan(f);
  }
  // A recorded kernel timeline: each kernel did in its recorded time what the recording GPU does
  // at its unthrottled rates.
  const Rates& r = a.recorded_on.empty() ? device : a.recorded_on_rates;
  return read_timeline(a.workload, r.flops_per_s, r.bytes_per_s);
}

std::vector<Plan> build_plans(const WorkloadArgs& a, const Rates& device) {
  std::vector<Plan> out;
  for (int c : chunk_counts(a)) out.push_back(build_plan(a, c, device));
  return out;
}

bool chunked_or_finetune(const WorkloadArgs& a) {
  if (a.workload.rfind("finetune:", 0) == 0) return true;
  const auto chunked = kind_names(true);
  if (std::find(chunked.begin(), chunked.end(), a.workload) == chunked.end())
    throw invalid_input("workload", "expected " + kind_list(true) +
                                        " or (on a simulated device) finetune:MODEL, found '" +
                                        a.workload + "'");
  return false;
}

}  // namespace powershape::workload
