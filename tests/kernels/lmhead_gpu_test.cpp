// The CUDA LM head against the fp64 reference, on random data, every option, odd shapes.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "powershape/kernels/lmhead.hpp"
#include "powershape/reference/lmhead_ref.hpp"
#include "powershape/util/error.hpp"

namespace powershape::kernels {
namespace {

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

void check(cudaError_t e) { ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e); }

template <class T>
struct Buffer {
  explicit Buffer(std::size_t n) : count(n) {
    cudaMalloc(&p, n * sizeof(T) + 16);
    poison();
  }
  ~Buffer() { cudaFree(p); }
  void poison() { cudaMemset(p, 0xff, count * sizeof(T)); }  // NaN in bf16 and fp32
  void put(const std::vector<T>& h) {
    cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  std::vector<T> get() const {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
  T* p = nullptr;
  std::size_t count;
};

double rel_error(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return INFINITY;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

struct Case {
  int64_t n, d, v;
  int chunks;
  LmHeadOptions o;
  bool int64_targets = false;
  // > 0: tokens 0 and 1 get a logit of about `spike` at columns V - 5 (token 0's target) and
  // V - 3, far above the rest of their rows.
  float spike = 0;
  // > 0: token 0's logits rise along the row from about -`ramp` at the first column to about 0 at
  // the last (rising to 0, not to `ramp`: bf16 logits near 150 are only whole numbers).
  float ramp = 0;
  // W's random part, times 1 / sqrt(D): logits of about this spread (bf16 logits near 10 are
  // rounded by 1/32, which a softmax spread over few columns does not average out).
  float w_std = 3;
  bool bias = false;        // a random bias, and its gradient
  int64_t masked = 0;       // with bias: the first `masked` columns' bias is -inf (no target there)
  bool token_grad = false;  // random per-token gradient factors
};

void run_case(const Case& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0, 1);
  std::uniform_int_distribution<int64_t> pick(0, c.v - 1);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<__nv_bfloat16> x(static_cast<std::size_t>(c.n * c.d)),
      w(static_cast<std::size_t>(c.v * c.d));
  std::vector<double> xd(x.size()), wd(w.size());
  const float xs = 1.0f, wscale = 1.0f / std::sqrt(static_cast<float>(c.d));
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = __float2bfloat16(g(rng) * xs);
    xd[i] = __bfloat162float(x[i]);
  }
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = __float2bfloat16(g(rng) * wscale * c.w_std);
    wd[i] = __bfloat162float(w[i]);
  }
  std::vector<int64_t> t(static_cast<std::size_t>(c.n));
  for (auto& ti : t) ti = u(rng) < 0.2f ? c.o.ignore_index : pick(rng);
  if (c.n > 1) t[0] = pick(rng);  // at least one valid token
  for (int64_t r = 0; c.spike > 0 && r < std::min<int64_t>(c.n, 2); ++r) {
    const int64_t col = c.v - 5 + 2 * r;
    double norm2 = 0;
    for (int64_t k = 0; k < c.d; ++k) norm2 += xd[r * c.d + k] * xd[r * c.d + k];
    for (int64_t k = 0; k < c.d; ++k) {
      const auto i = static_cast<std::size_t>(col * c.d + k);
      w[i] = __float2bfloat16(static_cast<float>(xd[r * c.d + k] * c.spike / norm2));
      wd[i] = __bfloat162float(w[i]);
    }
    if (r == 0) t[0] = col;
  }
  if (c.ramp > 0) {
    double norm2 = 0;
    for (int64_t k = 0; k < c.d; ++k) norm2 += xd[k] * xd[k];
    for (int64_t col = 0; col < c.v; ++col) {
      for (int64_t k = 0; k < c.d; ++k) {
        const auto i = static_cast<std::size_t>(col * c.d + k);
        w[i] =
            __float2bfloat16(wd[i] + xd[k] * c.ramp * (static_cast<double>(col) / c.v - 1) / norm2);
        wd[i] = __bfloat162float(w[i]);
      }
    }
    // Token 0's target near the top of its row, where its bf16 logit is fine-grained; the other
    // rows' logits lie up to ~40 (bf16 steps of 1/4), so they are ignored.
    t[0] = c.v - 2;
    for (int64_t r = 1; r < c.n; ++r) t[static_cast<std::size_t>(r)] = c.o.ignore_index;
  }

  std::vector<__nv_bfloat16> bias;
  std::vector<float> token_grad;
  reference::LmHeadOptions ro;
  for (auto& ti : t) {
    if (ti != c.o.ignore_index && ti < c.masked) ti = c.masked + ti % (c.v - c.masked);
  }
  for (int64_t j = 0; c.bias && j < c.v; ++j) {
    bias.push_back(__float2bfloat16(j < c.masked ? -INFINITY : g(rng)));
    ro.bias.push_back(__bfloat162float(bias.back()));
  }
  for (int64_t i = 0; c.token_grad && i < c.n; ++i) {
    token_grad.push_back(g(rng));
    ro.token_grad.push_back(token_grad.back());
  }
  ro.ignore_index = c.o.ignore_index;
  ro.reduction = c.o.reduction == Reduction::kMean  ? reference::Reduction::kMean
                 : c.o.reduction == Reduction::kSum ? reference::Reduction::kSum
                                                    : reference::Reduction::kNone;
  ro.label_smoothing = c.o.label_smoothing;
  ro.z_loss = c.o.z_loss;
  ro.softcap = c.o.softcap;
  ro.grad_scale = c.o.grad_scale;
  auto ref = reference::lmhead_reference(xd, wd, t, c.n, c.d, c.v, ro);
  // Each with dW in bf16 (the default) and in fp32, and with the exponent in the logits product
  // (where the GPU takes it: sm_90) and in a pass of its own.
  for (int way = 0; way < 4; ++way) {
    const bool fp32 = way % 2 == 1, fuse = way < 2;
    SCOPED_TRACE(std::string("dW ") + (fp32 ? "fp32" : "bf16") +
                 (fuse ? ", exponent in the product" : ", exponent in the pass"));
    LmHeadOptions o = c.o;
    o.chunks = c.chunks;
    o.dw_fp32 = fp32;
    o.fuse_exp = fuse;
    if (fuse && !LmHead::exp_in_product(o)) continue;
    auto want = ref;

    Buffer<__nv_bfloat16> dx_b(x.size()), x_b(x.size()), w_b(w.size());
    Buffer<float> dw32(w.size()), loss(1), zloss(1), tok(static_cast<std::size_t>(c.n)),
        lse(static_cast<std::size_t>(c.n));
    Buffer<__nv_bfloat16> dw16(w.size());
    Buffer<int64_t> t64(t.size());
    Buffer<int32_t> t32(t.size());
    x_b.put(x);
    w_b.put(w);
    t64.put(t);
    t32.put(std::vector<int32_t>(t.begin(), t.end()));
    const std::size_t wsb = LmHead::workspace_bytes(c.n, c.d, c.v, o);
    Buffer<char> ws(wsb);
    Buffer<__nv_bfloat16> bias_b(bias.size());
    Buffer<float> dbias_b(bias.size()), token_grad_b(token_grad.size());
    bias_b.put(bias);
    token_grad_b.put(token_grad);
    LmHeadArgs a;
    if (c.bias) {
      a.bias = bias_b.p;
      a.dbias = dbias_b.p;
    }
    if (c.token_grad) a.token_grad = token_grad_b.p;
    a.x = x_b.p;
    a.w = w_b.p;
    a.targets = c.int64_targets ? static_cast<const void*>(t64.p) : static_cast<const void*>(t32.p);
    a.targets_int64 = c.int64_targets;
    a.n = c.n;
    a.d = c.d;
    a.v = c.v;
    a.loss = loss.p;
    a.z_loss = zloss.p;
    a.token_loss = tok.p;
    a.lse = lse.p;
    a.dx = dx_b.p;
    a.dw = o.dw_fp32 ? static_cast<void*>(dw32.p) : static_cast<void*>(dw16.p);
    a.workspace = ws.p;
    a.workspace_bytes = wsb;
    // Accumulating: dW and dbias start as the reference's own, so they must end at twice it.
    const double grads = o.accumulate ? 2 : 1;
    if (o.accumulate) {
      std::vector<float> w32(want.dw.begin(), want.dw.end());
      std::vector<__nv_bfloat16> w16(want.dw.size());
      for (std::size_t i = 0; i < w16.size(); ++i) w16[i] = __float2bfloat16(w32[i]);
      dw32.put(w32);
      dw16.put(w16);
      dbias_b.put(std::vector<float>(want.dbias.begin(), want.dbias.end()));
    }
    LmHead op;
    op.run(a, o, nullptr);
    check(cudaDeviceSynchronize());
    for (auto& g : want.dw) g *= grads;
    for (auto& g : want.dbias) g *= grads;

    const double got_loss = loss.get()[0];
    ASSERT_FALSE(std::isnan(got_loss));
    EXPECT_NEAR(got_loss, want.loss, 1e-3 * std::abs(want.loss) + 1e-4);
    EXPECT_NEAR(zloss.get()[0], want.z_loss, 1e-2 * std::abs(want.z_loss) + 1e-5);
    auto tl = tok.get();
    auto ls = lse.get();
    EXPECT_LT(rel_error(std::vector<double>(tl.begin(), tl.end()), want.token_loss), 3e-3);
    EXPECT_LT(rel_error(std::vector<double>(ls.begin(), ls.end()), want.lse), 1e-3);
    if (!o.backward) continue;
    auto dxh = dx_b.get();
    std::vector<double> dxd(dxh.size());
    for (std::size_t i = 0; i < dxh.size(); ++i) dxd[i] = __bfloat162float(dxh[i]);
    EXPECT_LT(rel_error(dxd, want.dx), 1e-2);
    std::vector<double> dwd(w.size());
    if (o.dw_fp32) {
      auto h = dw32.get();
      dwd.assign(h.begin(), h.end());
    } else {
      auto h = dw16.get();
      for (std::size_t i = 0; i < h.size(); ++i) dwd[i] = __bfloat162float(h[i]);
    }
    EXPECT_LT(rel_error(dwd, want.dw), 1e-2);
    if (c.bias) {
      auto h = dbias_b.get();
      EXPECT_LT(rel_error(std::vector<double>(h.begin(), h.end()), want.dbias), 1e-2);
    }
  }
}

}  // namespace

class LmHeadGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA GPU";
  }
};

TEST_F(LmHeadGpu, PlainMeanLossOneChunk) { run_case({64, 128, 1024, 1, {}}, 1); }
TEST_F(LmHeadGpu, RaggedChunksAndAVocabularyNotAMultipleOf8) { run_case({37, 64, 1003, 4, {}}, 2); }
TEST_F(LmHeadGpu, OneToken) { run_case({1, 64, 517, 1, {}}, 3); }
TEST_F(LmHeadGpu, Int64TargetsAndSum) {
  LmHeadOptions o;
  o.reduction = Reduction::kSum;
  o.grad_scale = 0.5f;
  run_case({50, 64, 800, 3, o, true}, 4);
}
TEST_F(LmHeadGpu, LabelSmoothingZLossAndSoftcap) {
  LmHeadOptions o;
  o.label_smoothing = 0.1f;
  o.z_loss = 1e-3f;
  o.softcap = 15;
  run_case({48, 128, 2048, 2, o}, 5);
}
TEST_F(LmHeadGpu, NoReduction) {
  LmHeadOptions o;
  o.reduction = Reduction::kNone;
  run_case({40, 64, 1000, 2, o}, 6);
}
TEST_F(LmHeadGpu, ForwardOnly) {
  LmHeadOptions o;
  o.backward = false;
  run_case({33, 64, 999, 5, o}, 7);
}
TEST_F(LmHeadGpu, ARealShapeSlice) { run_case({256, 896, 151936 / 16, 3, {}}, 8); }
TEST_F(LmHeadGpu, AVocabularyOf262147) { run_case({6, 64, 262147, 2, {}}, 9); }
TEST_F(LmHeadGpu, RowsOfTwoMillionLogits) { run_case({4, 16, (1 << 21) + 3, 1, {}}, 11); }
TEST_F(LmHeadGpu, WidthsOf2048And8192) {
  run_case({9, 2048, 1003, 2, {}}, 12);
  run_case({5, 8192, 32000, 1, {}}, 13);
}

// The one-read pass takes its offset from the first 16384 logits of a row; these rows' largest
// logit lies ~45 above that, so the pass raises it and rescales what it had written.
TEST_F(LmHeadGpu, ALogitFarAboveTheFirstOnes) {
  LmHeadOptions o;
  run_case({6, 64, 40003, 2, o, false, 60}, 14);
  o.softcap = 50;
  o.z_loss = 1e-3f;
  run_case({6, 64, 40003, 1, o, false, 60}, 15);
}

// Logits rising along a row by 150: later rounds of the one-read pass lie far above the first, in
// many threads at once, each raising its offset by a different amount.
TEST_F(LmHeadGpu, LogitsRisingAlongTheRow) {
  LmHeadOptions o;
  run_case({4, 64, 100003, 1, o, false, 0, 150, 1}, 16);
  o.softcap = 200;
  o.z_loss = 1e-4f;
  run_case({4, 64, 100003, 2, o, true, 0, 150, 1}, 17);
  // 1,025 tiles a row: the exponent-in-the-product path's finishing kernel rescales tiles past the
  // 768 it holds in registers too.
  run_case({4, 64, 262147, 1, {}, false, 0, 150, 1}, 25);
}

// A bias (added by the product's epilogue) and its gradient (column sums of dlogits, with the
// one-read pass's row factors and without them under label smoothing), over ragged chunks.
TEST_F(LmHeadGpu, ABiasAndItsGradient) {
  Case c{37, 64, 1003, 3, {}};
  c.bias = true;
  run_case(c, 18);
  c.o.label_smoothing = 0.1f;
  c.o.softcap = 20;
  c.o.reduction = Reduction::kSum;
  run_case(c, 19);
}

// A bias that masks the vocabulary's first 600 columns (-inf): whole 256-column tiles of the
// product with nothing but -inf, which must neither give a row an offset of -inf nor spoil the
// gradient (NaN), with and without the soft-cap (which caps a masked logit to -cap, as the
// reference does).
TEST_F(LmHeadGpu, ABiasThatMasksWholeTilesOfTheVocabulary) {
  Case c{64, 64, 2000, 1, {}};
  c.bias = true;
  c.masked = 600;
  run_case(c, 23);
  c.o.softcap = 20;
  c.chunks = 3;
  run_case(c, 24);
}

// Per-token incoming gradients (reduction none's backward): each token's gradient scaled by its
// own factor, in both passes, with a bias too.
TEST_F(LmHeadGpu, PerTokenGradients) {
  Case c{45, 64, 2000, 4, {}};
  c.o.reduction = Reduction::kNone;
  c.token_grad = true;
  run_case(c, 20);
  c.o.label_smoothing = 0.05f;
  c.bias = true;
  run_case(c, 21);
}

// The gradients scaled by a factor on the device: untouched (bit for bit) by 1, scaled by -0.5.
TEST_F(LmHeadGpu, ScaleGradientsReadsTheFactorOnTheDevice) {
  const int64_t n = 24, d = 16, v = 40;
  Buffer<__nv_bfloat16> dx(static_cast<std::size_t>(n * d));
  Buffer<float> dw(static_cast<std::size_t>(v * d)), dbias(static_cast<std::size_t>(v)), f(1);
  std::vector<__nv_bfloat16> dxh(dx.count);
  std::vector<float> dwh(dw.count), dbh(dbias.count);
  for (std::size_t i = 0; i < dxh.size(); ++i) dxh[i] = __float2bfloat16(0.25f * (i % 13) - 1);
  for (std::size_t i = 0; i < dwh.size(); ++i) dwh[i] = 0.1f * static_cast<float>(i);
  for (std::size_t i = 0; i < dbh.size(); ++i) dbh[i] = 3.f - static_cast<float>(i);
  dx.put(dxh);
  dw.put(dwh);
  dbias.put(dbh);
  LmHeadArgs a;
  a.n = n;
  a.d = d;
  a.v = v;
  a.dx = dx.p;
  a.dw = dw.p;
  a.dbias = dbias.p;
  LmHeadOptions o;
  o.dw_fp32 = true;
  f.put({1.f});
  LmHead::scale_gradients(a, o, f.p, nullptr);
  check(cudaDeviceSynchronize());
  EXPECT_EQ(std::memcmp(dx.get().data(), dxh.data(), dxh.size() * 2), 0);
  EXPECT_EQ(dw.get(), dwh);
  f.put({-0.5f});
  LmHead::scale_gradients(a, o, f.p, nullptr);
  check(cudaDeviceSynchronize());
  auto dx2 = dx.get();
  for (std::size_t i = 0; i < dx2.size(); ++i)
    EXPECT_EQ(__bfloat162float(dx2[i]), -0.5f * __bfloat162float(dxh[i]));
  auto dw2 = dw.get(), db2 = dbias.get();
  for (std::size_t i = 0; i < dw2.size(); ++i) EXPECT_EQ(dw2[i], -0.5f * dwh[i]);
  for (std::size_t i = 0; i < db2.size(); ++i) EXPECT_EQ(db2[i], -0.5f * dbh[i]);
  EXPECT_THROW(LmHead::scale_gradients(a, o, nullptr, nullptr), powershape::Error);
}

// Gradient accumulation: dW and dbias added into what their buffers hold, from the first chunk.
TEST_F(LmHeadGpu, AccumulatesIntoTheCallersGradients) {
  Case c{37, 64, 1003, 3, {}};
  c.o.accumulate = true;
  c.bias = true;
  run_case(c, 22);
  c.chunks = 1;
  run_case(c, 23);
}

TEST_F(LmHeadGpu, TheExponentIsInTheProductOnAnSm90GpuAlone) {
  int major = 0, minor = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  LmHeadOptions o;
  EXPECT_EQ(LmHead::exp_in_product(o), major == 9 && minor == 0);
  o.label_smoothing = 0.1f;  // the two-read pass writes the gradient itself
  EXPECT_FALSE(LmHead::exp_in_product(o));
  o.label_smoothing = 0;
  o.fuse_exp = false;
  EXPECT_FALSE(LmHead::exp_in_product(o));
}

TEST_F(LmHeadGpu, BadShapesAreNamed) {
  LmHead op;
  LmHeadArgs a;
  a.n = 4;
  a.d = 100;
  a.v = 10;
  try {
    op.run(a, {}, nullptr);
    FAIL();
  } catch (const powershape::Error& e) {
    EXPECT_NE(std::string(e.what()).find("D = 100 must be a multiple of 8"), std::string::npos);
  }
}

}  // namespace powershape::kernels
