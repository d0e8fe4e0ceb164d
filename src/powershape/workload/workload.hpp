#pragma once
// What a workload is, in its own terms: one of the kinds (kinds/, each a folder; kind.hpp says
// what each provides) and its chunk count. Everything that runs a workload starts here: its steps
// (steps.hpp) list the kernels the GPU runs, and the simulator's plan is derived from them
// (builders.hpp). Adding a kind is its folder and its line in Workload's variant below.
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "powershape/workload/kinds/attention/attention.hpp"
#include "powershape/workload/kinds/lmhead/lmhead.hpp"
#include "powershape/workload/kinds/moe/moe.hpp"
#include "powershape/workload/kinds/msm/msm.hpp"
#include "powershape/workload/kinds/products/products.hpp"
#include "powershape/workload/kinds/square/square.hpp"

namespace powershape::workload {

// A plan read from a file or a recorded kernel timeline: only the simulator runs it.
struct Custom {};

struct Workload {
  using Kinds = std::variant<Custom, LmHead, LmHeadProducts, Msm, Attention, Moe, Square, Products>;
  Kinds kind;
  int chunks = 1;  // row chunks (LM head tokens, msm rows); the last chunk is ragged
};

namespace detail {
template <class K, class F>
void call_with_kind(F& f) {
  if constexpr (!std::is_same_v<K, Custom>) f(K{});
}
// A plain function template, not a templated lambda: clang 14 crashes instantiating the latter
// around a generic lambda that holds a requires-expression (describe's).
template <class F, class... K>
void for_each_of(F& f, std::variant<K...>*) {
  (call_with_kind<K>(f), ...);
}
}  // namespace detail

// Calls f(K{}) once for each kind K of the variant (Custom left out), in its order.
template <class F>
void for_each_kind(F&& f) {
  detail::for_each_of(f, static_cast<Workload::Kinds*>(nullptr));
}

// "lmhead 16384x896x151936 chunks=4" (forward and backward; "lmhead forward ..." the forward
// pass alone, "lmhead products ..." the products alone), as plans and tables name it.
std::string name_of(const Workload& w);
// The name without its chunk count: what a workload is, whatever it is chunked into ("lmhead
// forward 4096x896x151936 dw=bf16").
std::string kind_name_of(const Workload& w);
// The workload a name_of names ("KIND [WORDS] AxBxC chunks=N [OPTIONS]", each kind reading its
// own words and options); nullopt for any other name or one its kind cannot plan.
std::optional<Workload> workload_named(const std::string& name);
// The --workload names of the kinds, each once, in the variant's order; `chunked` alone: those
// --chunks splits (tune and repro take them).
std::vector<std::string> kind_names(bool chunked);
// The names joined: "lmhead, msm, attention".
std::string kind_list(bool chunked);
// What --shape means for each kind that takes one: "lmhead: N,D,V (default 16384,896,151936);
// msm: ROWS,D,COLS (default ...); ...".
std::string kind_shapes();

}  // namespace powershape::workload
