// The LM head's C ABI (include/powershape/powershape.h) over kernels::LmHead: the op alone, with
// nothing of NVML or the tune cache (libpowershape_op.a holds it so); in a build without CUDA each
// call that needs the GPU fails with a reason.
#include <stdexcept>
#include <type_traits>

#include "capi_error.hpp"
#include "powershape/powershape.h"
#include "powershape/workload/lmhead_options.hpp"
#include "powershape/workload/lmhead_workspace.hpp"
#ifdef POWERSHAPE_CAPI_CUDA
#include "powershape/kernels/lmhead.hpp"
#endif

namespace {

namespace w = powershape::workload;

// One field from C to C++ or back: a flag as bool, an enum by its value, the rest as it is.
template <class To, class From>
To field(From v) {
  if constexpr (std::is_same_v<To, bool>)
    return v != 0;
  else
    return static_cast<To>(v);
}

w::LmHeadOptions to_cpp(const ps_lmhead_options* o) {
  if (o == nullptr) throw powershape::invalid_input("lmhead: options are NULL");
  if (o->reduction < PS_REDUCTION_MEAN || o->reduction > PS_REDUCTION_NONE) {
    throw powershape::invalid_input("lmhead: reduction must be PS_REDUCTION_MEAN, _SUM or _NONE");
  }
  w::LmHeadOptions c;
#define PS_FROM_C(type, name, kind) c.name = field<decltype(c.name)>(o->name);
  PS_LMHEAD_OPTIONS_FIELDS(PS_FROM_C)
  if (auto why = w::lmhead_options_problem(c); !why.empty())
    throw powershape::invalid_input("lmhead: " + why);
  return c;
}

// The C struct of the op's options: its defaults are the C++ struct's, set in one place.
ps_lmhead_options to_c(const w::LmHeadOptions& c) {
  ps_lmhead_options o{};
#define PS_TO_C(type, name, kind) o.name = field<type>(c.name);
  PS_LMHEAD_OPTIONS_FIELDS(PS_TO_C)
#undef PS_TO_C
  return o;
}

static_assert(static_cast<int>(w::Reduction::kMean) == PS_REDUCTION_MEAN &&
              static_cast<int>(w::Reduction::kSum) == PS_REDUCTION_SUM &&
              static_cast<int>(w::Reduction::kNone) == PS_REDUCTION_NONE);

#ifdef POWERSHAPE_CAPI_CUDA
namespace k = powershape::kernels;

k::LmHeadArgs to_cpp(const ps_lmhead_args* a) {
  if (a == nullptr) throw powershape::invalid_input("lmhead: args are NULL");
  const ps_lmhead_args* o = a;
  k::LmHeadArgs c;
  PS_LMHEAD_ARGS_FIELDS(PS_FROM_C)
  return c;
}
#else
[[noreturn]] void no_cuda() {
  throw powershape::unsupported(
      "lmhead: this libpowershape_c was built without CUDA (build with nvcc)");
}
#endif
#undef PS_FROM_C

}  // namespace

extern "C" {

void ps_lmhead_options_default(ps_lmhead_options* o) {
  if (o != nullptr) *o = to_c(w::LmHeadOptions{});
}

int ps_lmhead_options_check(const ps_lmhead_options* o) {
  return powershape::capi::guarded<int>(-1, [&] {
    to_cpp(o);
    return 0;
  });
}

int ps_lmhead_will_fuse(const ps_lmhead_options* o) {
  return powershape::capi::guarded<int>(-1, [&]() -> int {
#ifdef POWERSHAPE_CAPI_CUDA
    return k::LmHead::exp_in_product(to_cpp(o)) ? 1 : 0;
#else
    to_cpp(o);
    no_cuda();
#endif
  });
}

size_t ps_lmhead_workspace_bytes(int64_t n, int64_t d, int64_t v, const ps_lmhead_options* o) {
  // Needs no GPU: the layout is the workload's (checked arithmetic), which the op uses too.
  return powershape::capi::guarded<size_t>(
      0, [&] { return powershape::workload::lmhead_layout(n, d, v, to_cpp(o)).total; });
}

int ps_lmhead_run(const ps_lmhead_args* a, const ps_lmhead_options* o, void* stream) {
  return powershape::capi::guarded<int>(-1, [&]() -> int {
#ifdef POWERSHAPE_CAPI_CUDA
    k::LmHead::for_current_device().run(to_cpp(a), to_cpp(o), static_cast<CUstream_st*>(stream));
    return 0;
#else
    (void)a, (void)o, (void)stream;
    no_cuda();
#endif
  });
}

int ps_lmhead_scale_gradients(const ps_lmhead_args* a, const ps_lmhead_options* o,
                              const float* factor, void* stream) {
  return powershape::capi::guarded<int>(-1, [&]() -> int {
#ifdef POWERSHAPE_CAPI_CUDA
    k::LmHead::scale_gradients(to_cpp(a), to_cpp(o), factor, static_cast<CUstream_st*>(stream));
    return 0;
#else
    (void)a, (void)o, (void)factor, (void)stream;
    no_cuda();
#endif
  });
}

}  // extern "C"
