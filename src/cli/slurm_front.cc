#include "cli/slurm_front.h"

#include <cstdio>
#include <string>

#include "cli/internal/slurm_cli.h"

namespace corral::cli {
namespace {

struct SlurmCommand {
  std::string_view name;
  int (*run)(int, char**);
};

constexpr SlurmCommand kCommands[] = {
    {"sbatch", internal::RunSbatch},     {"srun", internal::RunSrun},
    {"salloc", internal::RunSalloc},     {"squeue", internal::RunSqueue},
    {"sinfo", internal::RunSinfo},       {"sacct", internal::RunSacct},
    {"scontrol", internal::RunScontrol}, {"scancel", internal::RunScancel},
    {"seff", internal::RunSeff},
    {"sreport", internal::RunSreport},   {"sshare", internal::RunSshare},
    {"sprio", internal::RunSprio},
    {"sdiag", internal::RunSdiag},     {"sstat", internal::RunSstat},
    {"sbcast", internal::RunSbcast},
    {"sacctmgr", internal::RunSacctmgr},
};

}  // namespace

bool IsSlurmCommand(std::string_view name) {
  for (const auto& c : kCommands) {
    if (c.name == name) return true;
  }
  return false;
}

int RunSlurmCommand(std::string_view name, int argc, char** argv) {
  for (const auto& c : kCommands) {
    if (c.name == name) return c.run(argc, argv);
  }
  std::fprintf(stderr, "corral: %.*s is not a Slurm command Corral provides\n",
               static_cast<int>(name.size()), name.data());
  return 2;
}

}  // namespace corral::cli
