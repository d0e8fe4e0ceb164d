#pragma once
// How long each kernel of one iteration of a workload took: what `probe --record` writes to
// kernels.csv and `sim calibrate` fits the product and memory models to.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace powershape::workload {

struct KernelTime {
  std::string config;           // the workload it belongs to: "lmhead 16384x4096x128256 chunks=8"
  int index = 0;                // its place in the iteration
  std::string name;             // "logits", "cross_entropy", "dw", "scale_x", "softmax", ...
  int64_t m = 0, n = 0, k = 0;  // a matrix product's m x n x k; 0 for any other kernel
  double bytes = 0;         // bytes the kernel reads and writes (a product's operands and result)
  double ms = 0;            // median over the iterations timed
  double sm_clock_mhz = 0;  // the reported SM clock's mean while they ran
  // The SM clock the GPU counted while this kernel ran (the on-GPU clock probe beside it, or the
  // simulator's own clock); 0 where it was not measured.
  double real_mhz = 0;
};

// CSV with a header row: config,index,name,m,n,k,bytes,ms,sm_clock_mhz,real_mhz (files without
// the last column are read too).
void write_kernel_times(const std::string& path, const std::vector<KernelTime>& k);
// Throws std::runtime_error naming the file, line and what is wrong.
std::vector<KernelTime> read_kernel_times(const std::string& path);
std::vector<KernelTime> read_kernel_times(std::istream& in, const std::string& name);

}  // namespace powershape::workload
