#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>

namespace powershape::cli {

// Each adds its subcommand to the app; the callback sets the process's exit code through
// exit_code().
void add_devices(CLI::App& app);
void add_monitor(CLI::App& app);
void add_mark(CLI::App& app);
void add_sim(CLI::App& app);
void add_repro(CLI::App& app);
void add_probe(CLI::App& app);
void add_tune(CLI::App& app);
void add_compare(CLI::App& app);
void add_optimize(CLI::App& app);
void add_exporter(CLI::App& app);
void add_report(CLI::App& app);
void add_advise(CLI::App& app);
void add_swing(CLI::App& app);
void add_smooth(CLI::App& app);
void add_power_smoothing(CLI::App& app);
// `sim fleet`, under sim.
CLI::App* add_sim_fleet(CLI::App& sim);

int& exit_code();
// When main() began (CLOCK_MONOTONIC ns): what `mark` stamps its boundary with.
int64_t& started_ns();

}  // namespace powershape::cli
