#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "error_message.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/util/did_you_mean.hpp"
#include "powershape/util/printable.hpp"
#include "powershape/util/share_dir.hpp"
#include "powershape/util/stdout_data.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace {

// How many outputs of the parsed subcommands were given "-".
int outputs_to_stdout(const CLI::App& app) {
  int n = 0;
  for (const CLI::Option* o : app.get_options()) {
    if (powershape::cli::output_options().count(o) == 0) continue;
    for (const auto& r : o->results()) n += r == "-";
  }
  for (const CLI::App* sub : app.get_subcommands()) n += outputs_to_stdout(*sub);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: `mark` stamps its region boundary with the moment it was started.
  powershape::cli::started_ns() = powershape::telemetry::steady_now_ns();
  // A file-size limit (ulimit -f) makes a write fail (EFBIG) like a full disk, which every writer
  // reports, instead of killing powershape and, with it, the command it watches. A command started
  // by powershape gets the signal's default back (util::Child). Likewise a reader that goes
  // (`monitor -o - | head -1`) makes a write fail (EPIPE) instead of killing powershape: the
  // recording goes on in memory, the command runs on and its exit code comes back.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
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
  powershape::cli::add_optimize(app);
  powershape::cli::add_exporter(app);
  powershape::cli::add_report(app);
  powershape::cli::add_advise(app);
  powershape::cli::add_swing(app);
  powershape::cli::add_smooth(app);
  powershape::cli::add_power_smoothing(app);
  app.footer("powershape help SUBCOMMAND (or SUBCOMMAND --help) shows its options.\n");
  // Exit codes (docs/cli.md): 0 done, 2 a wrong input (the command line, or a file, shape or value
  // it names), 3 what this machine lacks, 1 a device or system failure; monitor, compare and
  // advise --apply pass on their command's own code. CLI11's own codes (104-109) become 2.
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  // `powershape help [SUBCOMMAND [NESTED]]`: what --help of that subcommand prints, as git has it.
  if (argc > 1 && std::string(argv[1]) == "help") {
    CLI::App* at = &app;
    for (int i = 2; i < argc; ++i) {
      std::vector<std::string> here;
      CLI::App* next = nullptr;
      for (auto* s : at->get_subcommands([](CLI::App*) { return true; })) {
        here.push_back(s->get_name());
        if (s->get_name() == argv[i]) next = s;
      }
      if (next == nullptr) {
        const std::string near = powershape::util::closest(argv[i], here);
        std::fprintf(stderr, "powershape help: no subcommand '%s'%s; %s\n",
                     powershape::util::printable(argv[i]).c_str(),
                     near.empty() ? "" : (" (did you mean '" + near + "'?)").c_str(),
                     here.empty() ? "it has none"
                                  : ("the subcommands: " + CLI::detail::join(here, ", ")).c_str());
        return 2;
      }
      at = next;
    }
    std::fputs(at->help().c_str(), stdout);
    return 0;
  }
  CLI::App* sub = nullptr;
  if (argc > 1 && argv[1][0] != '-') {
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const std::string near = powershape::util::closest(argv[1], names);
      std::fprintf(stderr, "powershape: unknown subcommand '%s'%s; the subcommands: %s, help\n",
                   powershape::util::printable(argv[1]).c_str(),
                   near.empty() ? "" : (" (did you mean '" + near + "'?)").c_str(),
                   CLI::detail::join(names, ", ").c_str());
      return 2;
    }
    sub = app.get_subcommand(argv[1]);
    // A nested subcommand (sim calibrate) owns the options after it.
    if (argc > 2 && argv[2][0] != '-') {
      for (auto* nested : sub->get_subcommands([](CLI::App*) { return true; }))
        if (nested->get_name() == argv[2]) sub = nested;
    }
  }
  std::string who = "powershape";
  for (const CLI::App* at = sub; at != nullptr && at != &app; at = at->get_parent())
    who.insert(std::string("powershape").size(), " " + at->get_name());
  // An output named "-" (-o -, --json -) is standard output; the tables then go to standard
  // error. Checked once the line is parsed, before any subcommand runs.
  app.parse_complete_callback([&app] {
    const int to_stdout = outputs_to_stdout(app);
    if (to_stdout > 1) throw CLI::ValidationError("only one output can be standard output ('-')");
    if (to_stdout == 1) powershape::util::send_table_to_stderr();
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string why = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && sub != nullptr) {
      // "The following argument(s) was/were not expected: 4 --chunk" (CLI11 lists them last
      // first): the option among them, else the first.
      std::istringstream extras(
          why.substr(why.rfind(": ") == std::string::npos ? 0 : why.rfind(": ") + 2));
      std::string word, w;
      while (extras >> w)
        if (word.empty() || (w[0] == '-' && word[0] != '-')) word = w;
      std::vector<std::string> options;
      for (const auto* o : sub->get_options()) {
        for (const auto& l : o->get_lnames()) options.push_back("--" + l);
        for (const auto& s1 : o->get_snames()) options.push_back("-" + s1);
      }
      const std::string near = powershape::util::closest(word, options);
      why = "unknown argument '" + powershape::util::printable(word) + "'" +
            (near.empty() ? "" : " (did you mean " + near + "?)");
    }
    std::fprintf(stderr, "%s: %s (--help shows the usage)\n", who.c_str(), why.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "powershape: %s\n", powershape::cli::message_of(app, e).c_str());
    return powershape::cli::exit_code_of(e);
  }
  return powershape::cli::exit_code();
}
