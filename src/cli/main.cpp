#include <csignal>
#include <cstdio>
#include <exception>
#include <string>

#include "error_message.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/util/printable.hpp"
#include "powershape/util/share_dir.hpp"
#include "subcommands.hpp"

int main(int argc, char** argv) {
  // Before anything else: `mark` stamps its region boundary with the moment it was started.
  powershape::cli::started_ns() = powershape::telemetry::steady_now_ns();
  // A file-size limit (ulimit -f) makes a write fail (EFBIG) like a full disk, which every writer
  // reports, instead of killing powershape and, with it, the command it watches. A command started
  // by powershape gets the signal's default back (util::Child).
  std::signal(SIGXFSZ, SIG_IGN);
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
  powershape::cli::add_tune(app);
  powershape::cli::add_compare(app);
  powershape::cli::add_exporter(app);
  powershape::cli::add_report(app);
  powershape::cli::add_advise(app);
  // CLI11 answers a word that is no subcommand with "A subcommand is required": name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known |= sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "powershape: unknown subcommand '%s' (%s)\n",
                   powershape::util::printable(argv[1]).c_str(), names.c_str());
      return 109;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "powershape: %s\n", powershape::cli::message_of(app, e).c_str());
    return 1;
  }
  return powershape::cli::exit_code();
}
