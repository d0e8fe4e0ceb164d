#include <cstdio>
#include <exception>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/share_dir.hpp"
#include "subcommands.hpp"

int main(int argc, char** argv) {
  // Before anything else: `mark` stamps its region boundary with the moment it was started.
  powershape::cli::started_ns() = powershape::telemetry::steady_now_ns();
  CLI::App app{
      "powershape: measure GPU power, clocks and throttling, and remove the time and energy "
      "they waste"};
  app.set_version_flag("--version", std::string("powershape ") + powershape::util::version());
  app.require_subcommand(1);
  powershape::cli::add_devices(app);
  powershape::cli::add_monitor(app);
  powershape::cli::add_mark(app);
  powershape::cli::add_sim(app);
  powershape::cli::add_repro(app);
  powershape::cli::add_probe(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "powershape: %s\n", e.what());
    return 1;
  }
  return powershape::cli::exit_code();
}
