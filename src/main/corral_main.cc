// The `corral` and `corrald` binaries, built from this file and the same libraries
// (DESIGN.md, "Processes"; docs/operations.md):
//   corral  submit | queue | dev | sim | ...   the client, linked at a fixed address (-no-pie)
//                                             because users start it once per command;
//                                             called through a link named sbatch, squeue, ...
//                                             it is the Slurm front end
//   corrald controller | agent                 the daemons, position-independent (ASLR of their
//                                             own code: the agent runs as root and parses what
//                                             the network sends)
// `corral controller|agent` execs the `corrald` beside it, so both spellings start a daemon.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "agent/main.h"
#include "cli/commands.h"
#include "cli/connection_holder.h"
#include "cli/slurm_front.h"
#include "controller/main.h"
#include "sim/sim_command.h"

namespace {

#ifdef CORRAL_DAEMON_BINARY
constexpr bool kDaemonBinary = true;
#else
constexpr bool kDaemonBinary = false;
#endif

// `corral controller|agent ...` in the client binary: replace this process with the daemon
// binary that sits beside it. Found through /proc/self/exe, never through PATH.
int ExecDaemonBinary(char** argv) {
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) {
    std::fprintf(stderr, "corral: cannot find this binary (/proc/self/exe): %s\n",
                 std::strerror(errno));
    return 1;
  }
  std::string self(buf.data(), static_cast<size_t>(n));
  std::string daemon = self.substr(0, self.rfind('/') + 1) + "corrald";
  argv[0] = daemon.data();
  execv(daemon.c_str(), argv);
  std::fprintf(stderr, "corral: the daemons run as %s, which cannot be started: %s\n",
               daemon.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string self = argv[0];
    self = self.substr(self.rfind('/') + 1);
    // Called through a link named sbatch, squeue, ...: the Slurm front end.
    if (corral::cli::IsSlurmCommand(self)) return corral::cli::RunSlurmCommand(self, argc, argv);
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
        std::strcmp(argv[1], "help") == 0) {
      corral::cli::PrintUsage();
      return argc < 2 ? 2 : 0;
    }
    std::string command = argv[1];
    if (command == "--version" || command == "version") {
      std::printf("corral 0.1.0\n");
      return 0;
    }
    if (command == "controller" || command == "agent") {
      if (!kDaemonBinary) return ExecDaemonBinary(argv);
      if (command == "controller") return corral::controller::RunControllerCommand(argc - 1, argv + 1);
      return corral::agent::RunAgentCommand(argc - 1, argv + 1);
    }
    if (kDaemonBinary) {
      std::fprintf(stderr, "corrald: runs the daemons only (controller, agent); use corral %s\n",
                   command.c_str());
      return 2;
    }
    if (command == "dev") return corral::cli::RunDevCommand(argc - 1, argv + 1);
    // Hidden: the per-user connection holder that client calls start (cli/connection_holder.h).
    if (command == "__connection-holder") {
      return corral::cli::RunConnectionHolderCommand(argc - 1, argv + 1);
    }
    if (command == "sim") return corral::sim::RunSimCommand(argc - 1, argv + 1);
    return corral::cli::RunClientCommand(argc - 1, argv + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: internal error: %s\n", e.what());
    return 70;
  }
}
