// The `corral` binary: one executable, several roles (DESIGN.md, "Processes").
//   corral controller | agent | dev | submit | queue | ...
// Called through a link named sbatch, squeue, ... it is the Slurm front end.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "agent/main.h"
#include "cli/commands.h"
#include "cli/slurm_front.h"
#include "controller/main.h"
#include "sim/sim_command.h"

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
    if (command == "controller") return corral::controller::RunControllerCommand(argc - 1, argv + 1);
    if (command == "agent") return corral::agent::RunAgentCommand(argc - 1, argv + 1);
    if (command == "dev") return corral::cli::RunDevCommand(argc - 1, argv + 1);
    if (command == "sim") return corral::sim::RunSimCommand(argc - 1, argv + 1);
    return corral::cli::RunClientCommand(argc - 1, argv + 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: internal error: %s\n", e.what());
    return 70;
  }
}
