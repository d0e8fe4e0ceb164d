#include "powershape/workload/steps.hpp"

#include <algorithm>

#include "powershape/workload/finetune.hpp"

namespace powershape::workload {

const char* op_name(Op op) {
  switch (op) {
    case Op::kProduct:
      return "product";
    case Op::kBurst:
      return "burst";
    case Op::kStream:
    case Op::kSpin:
      return "gap";
    case Op::kQk:
      return "qk";
    case Op::kSoftmax:
      return "softmax";
    case Op::kPv:
      return "pv";
    case Op::kLogits:
      return "logits";
    case Op::kDw:
      return "dw";
    case Op::kDx:
      return "dx";
    case Op::kLmHead:
      return "lmhead";
  }
  return "?";
}

LmHeadOptions lmhead_options(const LmHead& l, int chunks) {
  LmHeadOptions o;
  o.chunks = chunks;
  o.backward = l.backward;
  o.dw_fp32 = l.dw_bytes == 4;
  o.fuse_exp = l.exp_in_product;
  return o;
}

Phase phase_of(const WorkloadStep& s) {
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n),
               k = static_cast<double>(s.k);
  const char* name = op_name(s.op);
  switch (s.op) {
    case Op::kProduct: {
      Phase p = product(name, m, n, k);
      p.efficiency = 1;  // the size profiles are fitted to
      return p;
    }
    case Op::kBurst: {  // its shape left out: a burst is several products, one phase in a plan
      Phase p;
      p.name = name;
      p.flops = 2 * m * n * k;
      p.bytes = product_bytes(m, n, k, 2, false);
      return p;
    }
    case Op::kStream:
      return stream(name, s.bytes);
    case Op::kSpin: {
      Phase p;
      p.name = name;
      p.kind = PhaseKind::kIdle;
      p.seconds = s.seconds;
      return p;
    }
    case Op::kSoftmax: {
      // The project's softmax (kernels/synthetic.cu): a block a row, three passes (max, sum,
      // write): bf16 read and written once, read twice more.
      Phase p = stream(name, 2 * 2 * m * n);
      p.reread_bytes = p.bytes;
      p.row_bytes = 2 * n;
      return p;
    }
    case Op::kQk:
    case Op::kPv:
    case Op::kLogits:
    case Op::kDx:
    case Op::kDw:
      return product(name, m, n, k, s.result_bytes, s.accumulate);
    case Op::kLmHead:
      break;
  }
  throw std::logic_error("phase_of: the LM head op's phases are its own steps'");
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
  for (int op = 0; op <= static_cast<int>(Op::kLmHead); ++op)
    if (static_cast<Op>(op) != Op::kLmHead) add(phase_of(WorkloadStep{static_cast<Op>(op)}));
  for (bool exp : {false, true}) {
    LmHead l{64, 64, 256};
    l.exp_in_product = exp;
    for (int k = 0; k <= static_cast<int>(LmHeadStep::kReduce); ++k)
      add(phase_of(LmHeadStep{static_cast<LmHeadStep::Kind>(k), 0, 0, 1}, l));
  }
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
