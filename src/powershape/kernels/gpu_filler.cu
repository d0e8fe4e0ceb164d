#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <thread>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/kernels/gpu_filler.hpp"
#include "powershape/kernels/synthetic.cuh"

namespace powershape::kernels {
namespace {

constexpr int kSize = 4096;  // a product of ~0.2 ms on an H100/H200: fine steps of a 2 ms period
constexpr auto kPeriod = std::chrono::microseconds(2000);

// NVML's form of a CUDA device's UUID: "GPU-" and the 16 bytes as 8-4-4-4-12 hex digits.
std::string uuid_of(const cudaUUID_t& u) {
  std::string s = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(u.bytes[i]));
    s += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

int device_of(const std::string& uuid) {
  int n = 0;
  PS_CUDA(cudaGetDeviceCount(&n));
  if (uuid.empty()) return 0;
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    PS_CUDA(cudaGetDeviceProperties(&p, d));
    if (uuid_of(p.uuid) == uuid) return d;
  }
  throw unsupported("no CUDA device has the UUID " + uuid +
                    " (hidden by CUDA_VISIBLE_DEVICES, or not an NVIDIA GPU)");
}

class GpuFiller final : public shape::Filler {
 public:
  explicit GpuFiller(const std::string& uuid) {
    std::promise<void> ready;
    auto started = ready.get_future();
    thread_ = std::thread([this, uuid, &ready] { run(uuid, ready); });
    try {
      started.get();  // rethrows what setting up threw
    } catch (...) {
      thread_.join();
      throw;
    }
  }
  ~GpuFiller() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  void set_intensity(double x) override {
    x = std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.0;
    {
      std::lock_guard lock(mu_);  // the filler's thread may be about to wait for it
      if (x == intensity_.load()) return;
      intensity_.store(x);
    }
    cv_.notify_all();
  }
  double period_s() const override { return std::chrono::duration<double>(kPeriod).count(); }
  double filled_s() const override { return filled_s_.load(); }
  std::string describe() const override { return describe_; }
  std::string failure() const override {
    std::lock_guard lock(mu_);
    return failure_;
  }

 private:
  // Sets up on the filler's own thread (its CUDA device current there), then fills until stopped.
  void run(const std::string& uuid, std::promise<void>& ready) {
    try {
      setup(uuid);
      ready.set_value();
    } catch (...) {
      release();
      ready.set_exception(std::current_exception());
      return;
    }
    try {
      fill();
    } catch (const std::exception& e) {
      std::lock_guard lock(mu_);
      failure_ = e.what();
    }
    release();
  }

  void setup(const std::string& uuid) {
    const int dev = device_of(uuid);
    PS_CUDA(cudaSetDevice(dev));
    int least = 0, greatest = 0;
    PS_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    PS_CUDA(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, least));
    PS_CUDA(cudaEventCreateWithFlags(&done_, cudaEventBlockingSync | cudaEventDisableTiming));
    cudaEvent_t a, b;
    PS_CUDA(cudaEventCreate(&a));
    PS_CUDA(cudaEventCreate(&b));
    timing_[0] = a;
    timing_[1] = b;
    const std::size_t bytes = std::size_t{kSize} * kSize * 2;
    for (auto*& m : mats_) PS_CUDA(cudaMalloc(&m, bytes));
    fill_random_bf16(static_cast<__nv_bfloat16*>(mats_[0]), int64_t{kSize} * kSize, 1, 1.0f,
                     stream_);
    fill_random_bf16(static_cast<__nv_bfloat16*>(mats_[1]), int64_t{kSize} * kSize, 2, 1.0f,
                     stream_);
    gemm_ = std::make_unique<Gemm>();
    for (int i = 0; i < 3; ++i) product();  // the first tunes the algorithm
    PS_CUDA(cudaEventRecord(a, stream_));
    constexpr int kTimed = 10;
    for (int i = 0; i < kTimed; ++i) product();
    PS_CUDA(cudaEventRecord(b, stream_));
    PS_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    PS_CUDA(cudaEventElapsedTime(&ms, a, b));
    product_s_ = ms * 1e-3 / kTimed;
    cudaDeviceProp p{};
    PS_CUDA(cudaGetDeviceProperties(&p, dev));
    char line[256];
    std::snprintf(line, sizeof line,
                  "products of %dx%dx%d bf16 on %s (CUDA device %d, %.3f ms each)", kSize, kSize,
                  kSize, p.name, dev, ms / kTimed);
    describe_ = line;
  }

  void product() {
    gemm_->run(false, false, kSize, kSize, kSize, mats_[0], kSize, mats_[1], kSize, mats_[2], kSize,
               Out::kBf16, 1.0f, 0.0f, stream_);
  }

  void fill() {
    double carry = 0;
    auto next = std::chrono::steady_clock::now();
    for (;;) {
      double x;
      {
        std::unique_lock lock(mu_);
        // Idle: wait for work; else for the next period.
        if (intensity_.load() <= 0) {
          cv_.wait(lock, [&] { return stop_ || intensity_.load() > 0; });
          next = std::chrono::steady_clock::now();  // a period starts now
          carry = 0;
        } else {
          cv_.wait_until(lock, next, [&] { return stop_; });
        }
        if (stop_) return;
        x = intensity_.load();
      }
      // The period ends one period after the last ended, or after now where products overran it.
      next = std::max(next, std::chrono::steady_clock::now() - kPeriod) + kPeriod;
      carry += x * std::chrono::duration<double>(kPeriod).count() / product_s_;
      const int k = static_cast<int>(carry);
      carry -= k;
      for (int i = 0; i < k; ++i) product();
      if (k > 0) {
        PS_CUDA(cudaEventRecord(done_, stream_));
        PS_CUDA(cudaEventSynchronize(done_));
        filled_s_.store(filled_s_.load() + k * product_s_);
      }
    }
  }

  void release() {
    if (stream_ != nullptr) cudaStreamSynchronize(stream_);
    gemm_.reset();
    for (auto*& m : mats_) {
      if (m != nullptr) cudaFree(m);
      m = nullptr;
    }
    for (auto& e : timing_)
      if (e != nullptr) cudaEventDestroy(e);
    if (done_ != nullptr) cudaEventDestroy(done_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    stream_ = nullptr;
    done_ = nullptr;
    timing_[0] = timing_[1] = nullptr;
  }

  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::string failure_, describe_;
  std::atomic<double> intensity_{0}, filled_s_{0};
  double product_s_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  cudaEvent_t timing_[2] = {nullptr, nullptr};
  void* mats_[3] = {nullptr, nullptr, nullptr};
  std::unique_ptr<Gemm> gemm_;
};

}  // namespace

std::unique_ptr<shape::Filler> open_gpu_filler(const std::string& uuid) {
  return std::make_unique<GpuFiller>(uuid);
}

}  // namespace powershape::kernels
