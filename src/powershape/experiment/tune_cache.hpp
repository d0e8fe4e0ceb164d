#pragma once
// What `tune` found, kept per GPU, driver, power limit, workload and objective in a small JSON
// file under the user's cache directory, so that a program can ask for the tuned chunk count
// (chunks="auto" in the Python package) without measuring again. A different power limit or
// driver is a different entry: the best count moves with them.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "powershape/experiment/tune.hpp"
#include "powershape/workload/workload.hpp"

namespace powershape::experiment {

// The workload part of a key: the workload's own name without its chunk count ("lmhead
// 16384x896x151936 dw=bf16", "lmhead forward ...", "msm R,D,C"); only chunked kinds are tuned.
std::string tune_workload_name(const workload::Workload& w);

// $POWERSHAPE_CACHE, else $XDG_CACHE_HOME/powershape/tune.json, else ~/.cache/powershape/tune.json.
std::string tune_cache_path();

// The power limit (W) in a backend's device_json(): a GPU's enforced one, a profile's; 0: unknown.
double device_power_limit_w(const nlohmann::json& device_json);

// The entry's key from a backend's device_json() (a GPU's "device", or a simulator's "profile"),
// the workload (tune_workload_name) and the objective ("time").
std::string tune_key(const nlohmann::json& device_json, const std::string& workload,
                     const std::string& objective);

// Bounds: the file is at most kTuneCacheMaxBytes (a larger one is not read), with at most
// kTuneCacheMaxEntries entries (the oldest stored go first).
inline constexpr std::uintmax_t kTuneCacheMaxBytes = 16u << 20;
inline constexpr std::size_t kTuneCacheMaxEntries = 1000;

// The chunk count stored under `key`, if any. A cache file that cannot be read is no entry.
std::optional<int> cached_chunks(const std::string& key);

// Stores `chunks` (with `detail`) under `key`. Concurrent tunes do not lose each other's entries:
// the read-modify-write holds a lock (flock on PATH.lock, waited for at most 30 s) and the file is
// replaced by rename. A cache that is not a JSON object, or is over the size bound, is not dropped:
// it is moved aside to PATH.broken-UTC and the returned string names that path (empty when
// nothing was set aside). Throws naming the path when it cannot be written.
std::string store_chunks(const std::string& key, int chunks, const nlohmann::json& detail);

// The race's choice among `plans` stored under the device, the workload and the objective
// ("time"): its key, its chunk count and where a broken cache was set aside (store_chunks').
struct CachedChoice {
  std::string key;
  int chunks = 0;
  std::string aside;
};
CachedChoice cache_choice(const nlohmann::json& device_json,
                          const std::vector<workload::Plan>& plans, const TuneResult& r,
                          const std::string& objective);

}  // namespace powershape::experiment
