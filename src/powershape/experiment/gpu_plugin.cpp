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

// The plugin, loaded once and kept for the life of the process: the backend's and the filler's
// code live in it. A failure is tried again at the next call.
void* plugin() {
  static void* lib = nullptr;
  if (lib != nullptr) return lib;
  std::string tried, error;
  for (const auto& path : candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
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
  return lib;
}

template <typename Fn>
Fn entry(const char* symbol) {
  auto fn = reinterpret_cast<Fn>(dlsym(plugin(), symbol));
  if (fn == nullptr) throw unsupported(std::string("the GPU backend plugin has no ") + symbol);
  return fn;
}

}  // namespace

std::unique_ptr<Backend> open_gpu_backend(const telemetry::SamplerOptions& o) {
  char why[512] = "";
  Backend* b = entry<OpenGpuBackendFn>(kOpenGpuBackendSymbol)(&o, why, sizeof why);
  if (b == nullptr) throw unsupported(why);
  return std::unique_ptr<Backend>(b);
}

std::unique_ptr<shape::Filler> open_gpu_filler(const std::string& uuid) {
  char why[512] = "";
  shape::Filler* f = entry<OpenGpuFillerFn>(kOpenGpuFillerSymbol)(uuid.c_str(), why, sizeof why);
  if (f == nullptr) throw unsupported(why);
  return std::unique_ptr<shape::Filler>(f);
}

}  // namespace powershape::experiment
