#include "powershape/experiment/gpu_plugin.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace powershape::experiment {
namespace {

std::string error_of(const char* plugin, bool filler = false) {
  setenv("POWERSHAPE_GPU_BACKEND", plugin, 1);
  std::string what;
  try {
    if (filler) {
      open_gpu_filler("");
    } else {
      open_gpu_backend({});
    }
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  unsetenv("POWERSHAPE_GPU_BACKEND");
  return what;
}

}  // namespace

TEST(GpuPlugin, WithoutThePluginTheErrorSaysThisBuildHasNoGpuBackend) {
  const std::string e = error_of("/nonexistent/libpowershape_gpu_backend.so");
  EXPECT_NE(e.find("this build has no GPU backend"), std::string::npos) << e;
  EXPECT_NE(e.find("/nonexistent/libpowershape_gpu_backend.so"), std::string::npos) << e;
}

TEST(GpuPlugin, TheFillerComesFromThePluginToo) {
  const std::string e = error_of("/nonexistent/libpowershape_gpu_backend.so", true);
  EXPECT_NE(e.find("this build has no GPU backend"), std::string::npos) << e;
}

TEST(GpuPlugin, AFileThatIsNoLibraryIsNamed) {
  const std::string e = error_of(POWERSHAPE_TEST_DIR "/experiment/gpu_plugin_test.cpp");
  EXPECT_NE(e.find("cannot load the GPU backend"), std::string::npos) << e;
}

}  // namespace powershape::experiment
