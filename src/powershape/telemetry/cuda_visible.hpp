#pragma once
// CUDA_VISIBLE_DEVICES, read as CUDA reads it, so that powershape watches the GPUs a job sees
// (CodeCarbon#567): a comma list of indices or UUIDs (GPU-..., or a unique prefix of one), taken up
// to the first entry that names no GPU. Indices are NVML's, which number GPUs in PCI bus order:
// CUDA numbers them so too with CUDA_DEVICE_ORDER=PCI_BUS_ID (by default it puts the fastest
// first, which on a node of one kind of GPU is the same order).
#include <optional>
#include <string>
#include <vector>

namespace powershape::telemetry {

// The NVML indices `value` names among GPUs with these UUIDs (NVML's order); nullopt when `value`
// is null (the variable unset). Throws invalid_input when it names none of them.
std::optional<std::vector<int>> cuda_visible(const char* value,
                                             const std::vector<std::string>& uuids);

}  // namespace powershape::telemetry
