#pragma once
// The library's one error type. Every failure it reports is an Error with a kind, so that a caller
// (the CLI, the C API, Python) can tell a user's mistake from what the machine lacks or a device
// that failed. Messages name the thing that is wrong (a value, a file and line, a field), never a
// command-line flag: the CLI adds its flag where it passes a value on.
#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace powershape {

enum class ErrorKind {
  kInvalidInput = 1,  // an argument, file, shape or option that is wrong: the caller can fix it
  kUnsupported = 2,   // what this machine, driver or device does not have or cannot do
  kDevice = 3,        // a device, driver or system call that failed
};

// What would mend a failure, where the library has a call for it: the CLI names its command.
enum class Remedy {
  kNone,
  kRestore,        // putting back the setting a run that did not finish left
  kForcedRestore,  // the same, dropping what cannot be put back
};

// An error may name its subject, the option or field whose value is wrong ("shape", "chunks"): its
// message is then "subject: detail", and the CLI, which knows the flag that carried the value,
// prints "--subject: detail" instead.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Error(ErrorKind kind, const std::string& subject, const std::string& detail)
      : std::runtime_error(subject + ": " + detail),
        kind_(kind),
        subject_(subject),
        detail_(detail) {}
  ErrorKind kind() const noexcept { return kind_; }
  const std::string& subject() const noexcept { return subject_; }
  const std::string& detail() const noexcept { return detail_; }
  Remedy remedy() const noexcept { return remedy_; }
  // The same error, with what would mend it: throw invalid_input(...).with(Remedy::kRestore).
  Error with(Remedy r) && {
    remedy_ = r;
    return std::move(*this);
  }

 private:
  ErrorKind kind_;
  std::string subject_, detail_;
  Remedy remedy_ = Remedy::kNone;
};

inline Error invalid_input(const std::string& what) { return {ErrorKind::kInvalidInput, what}; }
inline Error invalid_input(const std::string& subject, const std::string& detail) {
  return {ErrorKind::kInvalidInput, subject, detail};
}
inline Error unsupported(const std::string& what) { return {ErrorKind::kUnsupported, what}; }
inline Error device_error(const std::string& what) { return {ErrorKind::kDevice, what}; }

// A write of `what` (a path, "standard output") that failed with errno `err`: the path's fault (no
// such folder, no permission, a read-only file system, a folder or a link in the way) is the
// caller's input; anything else (a full disk, an I/O error, a reader that went) the system's.
inline Error write_failed(const std::string& what, int err) {
  const bool path = err == ENOENT || err == ENOTDIR || err == EACCES || err == EPERM ||
                    err == EROFS || err == EISDIR || err == ELOOP || err == ENAMETOOLONG ||
                    err == EEXIST;
  return {path ? ErrorKind::kInvalidInput : ErrorKind::kDevice,
          "cannot write " + what + ": " + std::strerror(err)};
}

// The kind of any exception: an Error's own; the standard library's argument and range errors
// (std::stoi on a bad string, a value out of a container's range) are invalid input; anything else
// is a device or system failure.
inline ErrorKind kind_of(const std::exception& e) {
  if (const auto* p = dynamic_cast<const Error*>(&e)) return p->kind();
  if (dynamic_cast<const std::invalid_argument*>(&e) ||
      dynamic_cast<const std::out_of_range*>(&e) || dynamic_cast<const std::length_error*>(&e) ||
      dynamic_cast<const std::domain_error*>(&e))
    return ErrorKind::kInvalidInput;
  return ErrorKind::kDevice;
}

// The same error, its message prefixed (a file's name, or the CLI's flag): its kind and remedy
// kept.
[[noreturn]] inline void rethrow_with(const std::string& prefix, const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  throw Error(kind_of(e), prefix + e.what()).with(error ? error->remedy() : Remedy::kNone);
}

}  // namespace powershape
