#pragma once
// Signals that end a run (Ctrl-C, SIGTERM, a hang-up), caught so that what was set is put back
// and what was recorded is kept, and passed on to the program being run.
#include <sys/types.h>

namespace powershape::util {

// Installs SIGINT/SIGTERM/SIGHUP handlers that forward the signal to `pid` (-pid: its process
// group; 0: nowhere) and record it. SIGHUP is left alone where it is ignored (nohup).
void forward_signals_to(pid_t pid);
// The last forwarded or received signal, 0 if none.
int received_signal();

}  // namespace powershape::util
