#include <cstdlib>
#include <stdexcept>
#include <string>

#include "powershape/telemetry/control_fifo.hpp"
#include "powershape/telemetry/region.hpp"
#include "powershape/util/error.hpp"
#include "subcommands.hpp"

namespace powershape::cli {

void add_mark(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "mark", "Begin or end a named region of the recording of an enclosing 'powershape monitor'");
  static std::string verb, name;
  cmd->add_option("verb", verb, "begin or end")->required()->check(CLI::IsMember({"begin", "end"}));
  cmd->add_option("name", name, "Region name")->required();
  cmd->callback([] {
    const char* path = std::getenv(telemetry::kControlEnv);
    if (path == nullptr) {
      throw invalid_input(std::string(telemetry::kControlEnv) +
                          " is not set: run this under 'powershape monitor'");
    }
    if (auto why = telemetry::region_name_problem(name); !why.empty()) throw invalid_input(why);
    telemetry::send_mark(path, {verb == "begin", started_ns(), name});
    exit_code() = 0;
  });
}

}  // namespace powershape::cli
