#include "error_message.hpp"

#include <cstdio>

#include "powershape/util/error.hpp"

namespace powershape::cli {
namespace {

// Whether the subcommand that ran (`sim calibrate`: calibrate, within sim) has this flag.
bool ran_with(const CLI::App& app, const std::string& flag) {
  for (const CLI::App* sub : app.get_subcommands()) {
    if (sub->get_option_no_throw(flag) != nullptr || ran_with(*sub, flag)) return true;
  }
  return false;
}

}  // namespace

std::string message_of(const CLI::App& app, const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  // No driver, where the subcommand could read something else: what it could read.
  if (error != nullptr && error->kind() == ErrorKind::kUnsupported &&
      std::string_view(e.what()).starts_with("no NVIDIA driver") && ran_with(app, "--source"))
    return std::string(e.what()) +
           "; --source fake:h200/gemm_sustained replays an H200's recording "
           "(--source sim:h200 simulates one)";
  // What mends it, as this command line asks for it (advise's and power-smoothing's --restore).
  // Elsewhere (optimize --apply) advise's: it puts back any setting a run left.
  if (error != nullptr && error->remedy() != Remedy::kNone) {
    std::string restorer = "advise";
    for (const CLI::App* sub : app.get_subcommands())
      if (sub->get_option_no_throw("--restore") != nullptr) restorer = sub->get_name();
    return std::string(e.what()) + " (powershape " + restorer + " --restore" +
           (error->remedy() == Remedy::kForcedRestore ? " --force)" : ")");
  }
  if (error == nullptr || error->subject().empty()) return e.what();
  const std::string flag = "--" + error->subject();
  return ran_with(app, flag) ? flag + ": " + error->detail() : e.what();
}

int exit_code_of(const std::exception& e) {
  switch (kind_of(e)) {
    case ErrorKind::kInvalidInput:
      return 2;
    case ErrorKind::kUnsupported:
      return 3;
    case ErrorKind::kDevice:
      break;
  }
  return 1;
}

void say_output(const std::string& output, const std::string& what) {
  std::fprintf(stderr, "powershape: %s%s\n", output.empty() ? "" : ("--" + output + ": ").c_str(),
               what.c_str());
}

}  // namespace powershape::cli
