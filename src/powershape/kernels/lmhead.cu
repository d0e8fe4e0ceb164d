#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/kernels/lmhead.hpp"
#include "powershape/kernels/logits_exp.cuh"
#include "powershape/kernels/scale.cuh"
#include "powershape/util/error.hpp"
#include "powershape/workload/lmhead_workspace.hpp"

namespace powershape::kernels {
namespace {

using Layout = workload::LmHeadLayout;

Layout layout(int64_t n, int64_t d, int64_t v, const LmHeadOptions& o) {
  return workload::lmhead_layout(n, d, v, o);
}

void validate(const LmHeadArgs& a, const LmHeadOptions& o) {
  auto bad = [](const std::string& what) { throw invalid_input("lmhead: " + what); };
  if (a.n < 1 || a.d < 1 || a.v < 1) bad("N, D and V must be positive");
  if (a.d % 8 != 0)
    bad("D = " + std::to_string(a.d) +
        " must be a multiple of 8 (16-byte bf16 rows for the tensor-core products)");
  if (a.x == nullptr || a.w == nullptr || a.targets == nullptr || a.loss == nullptr)
    bad("x, w, targets and loss are required");
  if (o.backward && (a.dx == nullptr || a.dw == nullptr)) bad("the backward pass needs dx and dw");
  if (a.bias != nullptr && reinterpret_cast<std::uintptr_t>(a.bias) % 16 != 0)
    bad("the bias must be 16-byte aligned");
  if (auto why = workload::lmhead_options_problem(o); !why.empty()) bad(why);
  if (a.workspace_bytes < LmHead::workspace_bytes(a.n, a.d, a.v, o)) {
    bad("workspace of " + std::to_string(a.workspace_bytes) + " bytes is too small: " +
        std::to_string(LmHead::workspace_bytes(a.n, a.d, a.v, o)) + " needed");
  }
}

}  // namespace

struct LmHead::Impl {
  Gemm gemm;
};

LmHead::LmHead() : impl_(std::make_unique<Impl>()) {}
LmHead::~LmHead() = default;

bool LmHead::exp_in_product(const LmHeadOptions& o) {
  return o.fuse_exp && lmhead_one_read(o) && logits_exp_available();
}

LmHead& LmHead::for_current_device() {
  thread_local std::map<int, std::unique_ptr<LmHead>> ops;
  int device = 0;
  PS_CUDA(cudaGetDevice(&device));
  auto& op = ops[device];
  if (!op) op = std::make_unique<LmHead>();
  return *op;
}

std::size_t LmHead::workspace_bytes(int64_t n, int64_t d, int64_t v, const LmHeadOptions& o) {
  return layout(n, d, v, o).total;
}

void LmHead::run(const LmHeadArgs& a, const LmHeadOptions& given, CUstream_st* stream,
                 const std::function<void(const LmHeadStep&)>& after_step) {
  validate(a, given);
  const LmHeadOptions o = lmhead_resolved(given, a.n, a.v);
  const Layout l = layout(a.n, a.d, a.v, o);
  auto* ws = static_cast<char*>(a.workspace);
  auto* logits = reinterpret_cast<__nv_bfloat16*>(ws + l.logits);
  auto* token_loss =
      a.token_loss != nullptr ? a.token_loss : reinterpret_cast<float*>(ws + l.token_loss);
  auto* token_zloss = reinterpret_cast<float*>(ws + l.token_zloss);
  auto* lse = a.lse != nullptr ? a.lse : reinterpret_cast<float*>(ws + l.lse);
  auto* row_scale = reinterpret_cast<float*>(ws + l.row_scale);
  auto* count = reinterpret_cast<int*>(ws + l.count);
  const bool one_read = lmhead_one_read(o);
  const auto* x = static_cast<const __nv_bfloat16*>(a.x);
  const auto* w = static_cast<const __nv_bfloat16*>(a.w);
  // The copy engine reads X and W in place: both must start on 16 bytes (their rows do).
  const bool fused = exp_in_product(o) && reinterpret_cast<std::uintptr_t>(a.x) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(a.w) % 16 == 0;
  const std::size_t tsize = a.targets_int64 ? 8 : 4;
  const bool mean = o.reduction == Reduction::kMean;
  const bool dbias = a.bias != nullptr && a.dbias != nullptr;
  // The pass's view of a chunk (the exponent-in-the-product path reads it too: targets, options).
  auto pass_of = [&](const LmHeadStep& s) {
    CrossEntropyParams p{};
    p.logits = logits;
    p.ld = l.ld;
    p.v = a.v;
    p.targets = static_cast<const char*>(a.targets) + s.row0 * tsize;
    p.targets_int64 = a.targets_int64;
    p.ignore_index = o.ignore_index;
    p.label_smoothing = o.label_smoothing;
    p.z_loss = o.z_loss;
    p.softcap = o.softcap;
    p.valid_count = count;
    p.grad_scale = o.grad_scale;
    p.token_grad = a.token_grad != nullptr ? a.token_grad + s.row0 : nullptr;
    p.mean = mean;
    p.write_grad = o.backward;
    p.token_loss = token_loss + s.row0;
    p.token_zloss = token_zloss + s.row0;
    p.lse = lse + s.row0;
    p.row_scale = row_scale;
    return p;
  };
  auto exp_of = [&](const LmHeadStep& s) {
    LogitsExpParams e{};
    e.x = x + s.row0 * a.d;
    e.w = w;
    e.bias = static_cast<const __nv_bfloat16*>(a.bias);
    e.rows = s.rows;
    e.d = a.d;
    e.v = a.v;
    e.ld = l.ld;
    e.softcap = o.softcap;
    e.write = o.backward;
    e.out = logits;
    e.scratch = ws + l.exp_scratch;
    return e;
  };
  lmhead_steps(a.n, o, dbias, [&](const LmHeadStep& s) {
    const __nv_bfloat16* xc = x + s.row0 * a.d;
    // dX_c; it holds X_c times each row's factor (one-read pass) until the dX product.
    auto dxc = [&] { return static_cast<__nv_bfloat16*>(a.dx) + s.row0 * a.d; };
    switch (s.kind) {
      case LmHeadStep::kCountValid:
        count_valid(a.targets, a.targets_int64, a.n, o.ignore_index, count, stream);
        break;
      case LmHeadStep::kLogits:
        if (fused) {
          logits_exp(exp_of(s), pass_of(s), stream);
          break;
        }
        // logits [rows x V] = X_c W^T: column-major, (V x rows) = W (as D x V, transposed) * X_c^T.
        // A bias adds to each of the V rows of that column-major result (cuBLASLt's epilogue).
        impl_->gemm.run(true, false, a.v, s.rows, a.d, w, a.d, xc, a.d, logits, l.ld, Out::kBf16, 1,
                        0, stream, a.bias);
        break;
      case LmHeadStep::kPass:
        if (fused) {
          logits_exp_finish(exp_of(s), pass_of(s), stream);
        } else if (one_read) {
          cross_entropy_scaled(pass_of(s), s.rows, stream);
        } else {
          cross_entropy(pass_of(s), s.rows, stream);
        }
        break;
      case LmHeadStep::kScaleX:
        scale_rows(xc, row_scale, s.rows, a.d, dxc(), stream);
        break;
      case LmHeadStep::kDbias:
        // The one-read pass leaves each row's factor apart; the two-read one writes dlogits.
        column_sums(logits, l.ld, s.rows, a.v, one_read ? row_scale : nullptr,
                    s.chunk != 0 || o.accumulate, a.dbias, stream);
        break;
      case LmHeadStep::kDw:
        // dW [V x D] (+)= dlogits^T X_c: column-major (D x V) = X_c^T (D x rows) * dlogits (rows x
        // V); added from the second chunk on, or from the first into the caller's gradient.
        impl_->gemm.run(false, true, a.d, a.v, s.rows, one_read ? dxc() : xc, a.d, logits, l.ld,
                        a.dw, a.d, o.dw_fp32 ? Out::kFp32 : Out::kBf16, 1,
                        s.chunk == 0 && !o.accumulate ? 0.f : 1.f, stream);
        break;
      case LmHeadStep::kDx:
        // dX_c [rows x D] = dlogits W: column-major (D x rows) = W^T (D x V) * dlogits^T (V x
        // rows).
        impl_->gemm.run(false, false, a.d, s.rows, a.v, w, a.d, logits, l.ld, dxc(), a.d,
                        Out::kBf16, 1, 0, stream);
        break;
      case LmHeadStep::kScaleDx:
        scale_rows(dxc(), row_scale, s.rows, a.d, dxc(), stream);
        break;
      case LmHeadStep::kReduce:
        reduce_sum(token_loss, a.n, count, mean, a.loss, stream);
        if (a.z_loss != nullptr) reduce_sum(token_zloss, a.n, count, mean, a.z_loss, stream);
        break;
    }
    if (after_step) after_step(s);
  });
}

void LmHead::scale_gradients(const LmHeadArgs& a, const LmHeadOptions& o, const float* factor,
                             CUstream_st* stream) {
  if (factor == nullptr) throw invalid_input("lmhead: the gradient's factor is null");
  if (a.dx != nullptr) scale_unless_one(a.dx, a.n * a.d, false, factor, stream);
  if (a.dw != nullptr) scale_unless_one(a.dw, a.v * a.d, o.dw_fp32, factor, stream);
  if (a.dbias != nullptr) scale_unless_one(a.dbias, a.v, true, factor, stream);
}

}  // namespace powershape::kernels
