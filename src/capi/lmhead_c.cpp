// The LM-head half of the C API (include/powershape/powershape.h) over kernels::LmHead; in a build
// without CUDA each call fails with a reason.
#include <stdexcept>

#include "capi_error.hpp"
#include "powershape/experiment/tune_cache.hpp"
#include "powershape/powershape.h"
#include "powershape/telemetry/nvml_source.hpp"
#include "powershape/trace/json_codec.hpp"
#include "powershape/workload/lmhead_options.hpp"
#include "powershape/workload/lmhead_workspace.hpp"
#ifdef POWERSHAPE_CAPI_CUDA
#include "powershape/kernels/lmhead.hpp"
#endif

namespace {

namespace w = powershape::workload;

w::LmHeadOptions to_cpp(const ps_lmhead_options* o) {
  if (o == nullptr) throw powershape::invalid_input("lmhead: options are NULL");
  if (o->reduction < PS_REDUCTION_MEAN || o->reduction > PS_REDUCTION_NONE) {
    throw powershape::invalid_input("lmhead: reduction must be PS_REDUCTION_MEAN, _SUM or _NONE");
  }
  w::LmHeadOptions c;
  c.chunks = o->chunks;
  c.tokens_per_chunk = o->tokens_per_chunk;
  c.ignore_index = o->ignore_index;
  c.reduction = static_cast<w::Reduction>(o->reduction);
  c.label_smoothing = o->label_smoothing;
  c.z_loss = o->z_loss;
  c.softcap = o->softcap;
  c.grad_scale = o->grad_scale;
  c.backward = o->backward != 0;
  c.dw_fp32 = o->dw_fp32 != 0;
  c.accumulate = o->accumulate != 0;
  c.fuse_exp = o->fuse_exp != 0;
  if (auto why = w::lmhead_options_problem(c); !why.empty())
    throw powershape::invalid_input("lmhead: " + why);
  return c;
}

// The C struct of the op's options: its defaults are the C++ struct's, set in one place.
ps_lmhead_options to_c(const w::LmHeadOptions& c) {
  ps_lmhead_options o{};
  o.chunks = c.chunks;
  o.tokens_per_chunk = c.tokens_per_chunk;
  o.ignore_index = c.ignore_index;
  o.reduction = static_cast<int>(c.reduction);
  o.label_smoothing = c.label_smoothing;
  o.z_loss = c.z_loss;
  o.softcap = c.softcap;
  o.grad_scale = c.grad_scale;
  o.backward = c.backward ? 1 : 0;
  o.dw_fp32 = c.dw_fp32 ? 1 : 0;
  o.accumulate = c.accumulate ? 1 : 0;
  o.fuse_exp = c.fuse_exp ? 1 : 0;
  return o;
}

static_assert(static_cast<int>(w::Reduction::kMean) == PS_REDUCTION_MEAN &&
              static_cast<int>(w::Reduction::kSum) == PS_REDUCTION_SUM &&
              static_cast<int>(w::Reduction::kNone) == PS_REDUCTION_NONE);

#ifdef POWERSHAPE_CAPI_CUDA
namespace k = powershape::kernels;

k::LmHeadArgs to_cpp(const ps_lmhead_args* a) {
  if (a == nullptr) throw powershape::invalid_input("lmhead: args are NULL");
  k::LmHeadArgs c;
  c.x = a->x;
  c.w = a->w;
  c.targets = a->targets;
  c.targets_int64 = a->targets_int64 != 0;
  c.n = a->n;
  c.d = a->d;
  c.v = a->v;
  c.loss = a->loss;
  c.z_loss = a->z_loss;
  c.token_loss = a->token_loss;
  c.lse = a->lse;
  c.dx = a->dx;
  c.dw = a->dw;
  c.bias = a->bias;
  c.dbias = a->dbias;
  c.token_grad = a->token_grad;
  c.workspace = a->workspace;
  c.workspace_bytes = a->workspace_bytes;
  return c;
}
#else
[[noreturn]] void no_cuda() {
  throw powershape::unsupported(
      "lmhead: this libpowershape_c was built without CUDA (build with nvcc)");
}
#endif

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

int ps_lmhead_tuned_chunks(int64_t n, int64_t d, int64_t v, int forward_only, int exp_in_product,
                           const char* objective, int gpu) {
  return powershape::capi::guarded<int>(-1, [&]() -> int {
    namespace e = powershape::experiment;
    if (n < 1 || d < 1 || v < 1)
      throw powershape::invalid_input("lmhead: N, D and V must be positive");
    if (objective == nullptr)
      throw powershape::invalid_input("tuned chunks: the objective is NULL");
    powershape::telemetry::NvmlSource nvml({gpu});
    const nlohmann::json device = {{"device", powershape::trace::to_json(nvml.devices().at(0))}};
    powershape::workload::LmHead l{n, d, v, forward_only == 0};
    l.exp_in_product = exp_in_product != 0;
    const powershape::workload::Workload w{l, 1};
    const std::string key = e::tune_key(device, e::tune_workload_name(w), objective);
    return e::cached_chunks(key).value_or(0);
  });
}

}  // extern "C"
