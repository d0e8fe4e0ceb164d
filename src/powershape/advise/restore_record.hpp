#pragma once
// Restore records are what root acts on, so only root's (the effective user's) own files count:
// the state folder is made 0700 whatever the umask and refused when it is a symbolic link, someone
// else's or writable by others; a record is read through O_NOFOLLOW and checked on the opened
// file (a regular file of the effective user, one link, not writable by group or others, small,
// a JSON object naming its target); a record is created exclusively (O_EXCL, 0600), which is the
// hold itself. The holder is named by pid and start time, so a recycled pid is not the holder.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace powershape::advise {

struct Holder {
  long pid = 0;
  unsigned long long start_ticks = 0;  // /proc/PID/stat's starttime: since boot, in clock ticks
};
Holder this_process();
// True while the process that wrote the record runs (same pid, same start time).
bool still_running(const Holder& h);
nlohmann::json to_json(const Holder& h);
std::optional<Holder> holder_of(const nlohmann::json& record);

// Creates `dir` (0700) when absent; throws naming it when it is not a folder only the effective
// user can write.
void prepare_state_dir(const std::string& dir);

// The record at `path`; throws (invalid input) naming the path and what is wrong with it.
nlohmann::json read_record(const std::string& path);

// Writes the record only when no file is at `path` (false then), 0600.
bool create_record(const std::string& path, const nlohmann::json& record);

}  // namespace powershape::advise
