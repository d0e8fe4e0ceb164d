#include "powershape/workload/kinds/lmhead/lmhead.hpp"

#include <algorithm>
#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"
#include "powershape/workload/lmhead_steps.hpp"

namespace powershape::workload {
namespace {

// " dw=bf16" for a bf16 dW. A name without it is the op as recorded before the dW dtype existed
// (fp32), and without "exp=product" one before the exponent moved: recorded data keeps its
// meaning.
std::string dtype(double dw_bytes) { return dw_bytes == 2 ? " dw=bf16" : ""; }

// The options a name ends with: dw=bf16 and, for the op, exp=product and bias; false for any
// other.
bool read_options(const NameParts& p, bool op, double& dw_bytes, bool& exp, bool& bias) {
  dw_bytes = 4;
  exp = bias = false;
  for (const auto& o : p.options) {
    if (o == "dw=bf16") {
      dw_bytes = 2;
    } else if (o == "exp=product" && op) {
      exp = true;
    } else if (o == "bias" && op) {
      bias = true;
    } else {
      return false;
    }
  }
  return true;
}

void check_shape(int64_t n, int64_t d, int64_t v, int chunks) {
  require(n > 0 && d > 0 && v > 0, "lmhead: N, D and V must be positive");
  require(chunks >= 1 && chunks <= n, "lmhead: chunks must be between 1 and N");
}

}  // namespace

std::optional<LmHead> LmHead::from_args(const WorkloadArgs& a, const Sizes& s) {
  if (a.products_only) return std::nullopt;
  LmHead l{s[0], s[1], s[2], !a.forward_only, a.ce_bytes_per_logit};
  l.exp_in_product = a.exp_in_product;
  return l;
}

std::optional<LmHead> LmHead::from_name(const NameParts& p) {
  const bool forward = p.words == std::vector<std::string>{"forward"};
  if ((!p.words.empty() && !forward) || p.dims.size() != 3) return std::nullopt;
  LmHead l{p.dims[0], p.dims[1], p.dims[2], !forward};
  if (!read_options(p, true, l.dw_bytes, l.exp_in_product, l.bias)) return std::nullopt;
  return l;
}

std::vector<LmHead> LmHead::examples() {
  LmHead fused{64, 64, 256};
  fused.exp_in_product = true;
  LmHead biased{64, 64, 256};
  biased.bias = true;
  return {LmHead{64, 64, 256}, LmHead{64, 64, 256, false}, fused, biased};
}

std::string LmHead::name(int chunks) const {
  return sized_name(backward ? "lmhead" : "lmhead forward", {tokens, width, vocab}, chunks) +
         dtype(dw_bytes) + (exp_in_product ? " exp=product" : "") + (bias ? " bias" : "");
}

void LmHead::check(int chunks) const {
  check_shape(tokens, width, vocab, chunks);
  require(ce_bytes_per_logit > 0, "lmhead: bytes per logit must be positive");
}

void LmHead::steps(int chunks, const Rates&, const StepFn& f) const {
  WorkloadStep op;
  op.code = kOp;
  lmhead_steps(tokens, lmhead_options(*this, chunks), bias,
               [&](const LmHeadStep& x) { op.phases.push_back(phase_of(x, *this)); });
  f(op);
}

std::optional<LmHeadProducts> LmHeadProducts::from_args(const WorkloadArgs& a, const Sizes& s) {
  if (!a.products_only) return std::nullopt;
  if (a.forward_only)
    throw invalid_input("products-only",
                        "the backward products too; not with the forward pass alone");
  if (a.exp_in_product)
    throw invalid_input("exp-in-product", "the op's option; the products alone take no exponent");
  return LmHeadProducts{s[0], s[1], s[2]};
}

std::optional<LmHeadProducts> LmHeadProducts::from_name(const NameParts& p) {
  if (p.words != std::vector<std::string>{"products"} || p.dims.size() != 3) return std::nullopt;
  LmHeadProducts l{p.dims[0], p.dims[1], p.dims[2]};
  bool exp = false, bias = false;
  if (!read_options(p, false, l.dw_bytes, exp, bias)) return std::nullopt;
  return l;
}

std::vector<LmHeadProducts> LmHeadProducts::examples() {
  return {LmHeadProducts{64, 64, 256}, LmHeadProducts{64, 64, 256, 4}};
}

std::string LmHeadProducts::name(int chunks) const {
  return sized_name("lmhead products", {tokens, width, vocab}, chunks) + dtype(dw_bytes);
}

void LmHeadProducts::check(int chunks) const { check_shape(tokens, width, vocab, chunks); }

void LmHeadProducts::steps(int chunks, const Rates&, const StepFn& f) const {
  const double d = static_cast<double>(width), v = static_cast<double>(vocab);
  for_each_chunk(tokens, rows_per_chunk(tokens, chunks), [&](int64_t, int64_t row0, int64_t r) {
    const double rr = static_cast<double>(r);
    f(step_of(kLogits, product("logits", rr, v, d), r, vocab, width, row0));
    // dW accumulates in its dtype from the second chunk on, as the op's does.
    WorkloadStep dw =
        step_of(kDw, product("dw", v, d, rr, dw_bytes, row0 > 0), vocab, width, r, row0);
    dw.accumulate = row0 > 0;
    dw.fp32_result = dw_bytes == 4;
    f(dw);
    f(step_of(kDx, product("dx", rr, d, v), r, width, vocab, row0));
  });
}

LmHeadOptions lmhead_options(const LmHead& l, int chunks) {
  LmHeadOptions o;
  o.chunks = chunks;
  o.backward = l.backward;
  o.dw_fp32 = l.dw_bytes == 4;
  o.fuse_exp = l.exp_in_product;
  return o;
}

// The width below which the exponent, not the product, sets the pace of the logits product with
// the exponent in it (kernels/logits_exp.cu, sm_90 alone): its epilogue warps take a fixed time a
// logit, the product 2 D flops a logit, so the product reaches at most D / kExpEpilogueWidth of its
// rate. Fitted to the H200 (data/h200/logits_exp): at D = 896 the fused product took 1.23x
// cuBLASLt's logits product (7.99 against 6.50 ms), which runs at 896 / (896 + 32) of the rate
// here, so 896 / 1141; at D = 4096 it ran at the product's own rate (4096 / 1141 > 1).
constexpr double kExpEpilogueWidth = 1141;

Phase phase_of(const LmHeadStep& s, const LmHead& l) {
  const double rows = static_cast<double>(s.rows), d = static_cast<double>(l.width),
               v = static_cast<double>(l.vocab);
  switch (s.kind) {
    case LmHeadStep::kCountValid:
      return stream("count_valid", 4 * rows);
    case LmHeadStep::kLogits: {
      if (!l.exp_in_product) return product("logits", rows, v, d);
      // The exponents written backward (none forward), and each row's pair a 256-logit tile.
      Phase p = product("logits", rows, v, d, l.backward ? 2 : 0);
      p.bytes += 8 * rows * static_cast<double>(lmhead_exp_tiles(l.vocab));
      p.efficiency = std::min(p.efficiency, d / kExpEpilogueWidth);
      return p;
    }
    case LmHeadStep::kPass:
      if (l.exp_in_product)
        return stream("ce_finish",
                      8 * rows * static_cast<double>(lmhead_exp_tiles(l.vocab)) + 16 * rows);
      // The one-read pass reads each logit and, backward, writes its gradient in place (the
      // forward pass writes none): the read half of its bytes alone.
      return stream("cross_entropy", (l.backward ? 1 : 0.5) * l.ce_bytes_per_logit * rows * v);
    case LmHeadStep::kScaleX:
      return stream("scale_x", 4 * rows * d);
    case LmHeadStep::kDbias:
      return stream("dbias", 2 * rows * v);
    case LmHeadStep::kDw:
      return product("dw", v, d, rows, l.dw_bytes, s.chunk > 0);
    case LmHeadStep::kDx:
      return product("dx", rows, d, v);
    case LmHeadStep::kScaleDx:
      return stream("scale_dx", 4 * rows * d);
    case LmHeadStep::kReduce:
      return stream("reduce", 4 * rows);
  }
  throw std::logic_error("phase_of: an LM head step of no kind");
}

}  // namespace powershape::workload
