#include "powershape/workload/steps.hpp"

#include <algorithm>

#include "powershape/util/error.hpp"
#include "powershape/workload/finetune.hpp"

namespace powershape::workload {

void workload_steps(const Workload& w, const Rates& rates, const StepFn& f) {
  std::visit(
      [&](const auto& k) {
        if constexpr (std::is_same_v<std::decay_t<decltype(k)>, Custom>) {
          throw invalid_input("a custom plan has no kernels: only the simulator runs it");
        } else {
          k.steps(w.chunks, rates, f);
        }
      },
      w.kind);
}

KernelTime kernel_of(const Phase& p) {
  KernelTime t;
  t.name = p.name;
  t.m = p.m;
  t.n = p.n;
  t.k = p.k;
  t.bytes = p.bytes;
  return t;
}

namespace {

std::vector<std::string> derive_memory_kernel_names() {
  std::vector<std::string> names;
  const auto add = [&](const Phase& p) {
    if (p.kind == PhaseKind::kMemory &&
        std::find(names.begin(), names.end(), p.name) == names.end())
      names.push_back(p.name);
  };
  const Rates any{1e15, 1e12};
  for_each_kind([&](auto kind) {
    for (const auto& k : decltype(kind)::examples())
      for (int chunks : {1, 2})
        k.steps(chunks, any, [&](const WorkloadStep& s) {
          for (const auto& p : s.phases) add(p);
        });
  });
  for (const auto& f : {Finetune{known_transformers().front()},
                        Finetune{known_transformers().front(), 2048, 512, 16}})
    for (const auto& p : finetune_plan(f).phases) add(p);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

const std::vector<std::string>& memory_kernel_names() {
  static const std::vector<std::string> names = derive_memory_kernel_names();  // once a process
  return names;
}

}  // namespace powershape::workload
