#include "powershape/experiment/gpu_plugin.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "powershape/util/error.hpp"

namespace powershape::experiment {
namespace {

constexpr const char* kPluginName = "libpowershape_gpu_backend.so";

std::vector<std::string> candidates() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  if (const char* env = std::getenv("POWERSHAPE_GPU_BACKEND"); env != nullptr && *env != '\0') {
    out.emplace_back(env);
    return out;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path() / kPluginName).string());
    out.push_back(
        (exe.parent_path().parent_path() / POWERSHAPE_PLUGIN_RELDIR / kPluginName).string());
  }
  return out;
}

}  // namespace

std::unique_ptr<Backend> open_gpu_backend(const telemetry::SamplerOptions& o) {
  void* lib = nullptr;
  std::string tried, error;
  for (const auto& path : candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    // Kept loaded for the life of the process: the backend's code lives in it.
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) error = dlerror();
    break;
  }
  if (lib == nullptr) {
    throw unsupported(error.empty()
                          ? "this build has no GPU backend (no " + std::string(kPluginName) +
                                " at " + tried + "; it is built with nvcc)"
                          : "cannot load the GPU backend: " + error);
  }
  auto open = reinterpret_cast<OpenGpuBackendFn>(dlsym(lib, kOpenGpuBackendSymbol));
  if (open == nullptr)
    throw unsupported(std::string("the GPU backend plugin has no ") + kOpenGpuBackendSymbol);
  char why[512] = "";
  Backend* b = open(&o, why, sizeof why);
  if (b == nullptr) throw unsupported(why);
  return std::unique_ptr<Backend>(b);
}

}  // namespace powershape::experiment
