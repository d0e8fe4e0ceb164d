#pragma once
// Filler work: something that keeps a GPU busy, at a chosen intensity, so that its power stays up
// through the job's low phases (docs/grid.md). The GPU's (kernels/filler.cu) is reached through
// the GPU plugin (experiment/gpu_plugin.hpp).
#include <string>

namespace powershape::shape {

class Filler {
 public:
  virtual ~Filler() = default;
  // The share of each period the filler runs, in [0, 1]; 0 stops it. Takes effect within one
  // period.
  virtual void set_intensity(double x) = 0;
  // The filler's period, in seconds.
  virtual double period_s() const = 0;
  // Seconds of filler work run so far (each period's share, summed).
  virtual double filled_s() const = 0;
  virtual std::string describe() const = 0;
  // Why the filler stopped on its own (a device error), or empty while it runs.
  virtual std::string failure() const = 0;
};

}  // namespace powershape::shape
