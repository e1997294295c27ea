// The option tables of squeue, sinfo, sacct, scontrol, scancel and `corral run`
// (cli/slurm/option_table.h: one table per command drives its scan, its handling and its
// --help), and the settings each fills. The tables are defined beside their commands
// (squeue.cc, ..., run.cc); their tests are in command_options_test.cc. Internal to cli.
//
// Not thread-safe where a handler resolves a user name (getpwuid_r is, the settings are not).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cli/slurm/option_table.h"
#include "cli/slurm/sacct.h"
#include "cli/slurm/scontrol.h"
#include "cli/slurm/sdiag.h"
#include "cli/slurm/sinfo.h"
#include "cli/slurm/squeue.h"
#include "core/step.h"

namespace corral::cli::internal {

// What every query command's table sets besides its own settings.
struct QueryArgs {
  bool help = false;     // --help, --usage: print the usage and exit
  bool version = false;  // -V, --version
  bool json = false;     // --json: Corral's JSON instead of Slurm's text
};

struct SqueueArgs : QueryArgs {
  slurm::SqueueOptions render;
  std::vector<std::string> users, partitions, accounts, state_names, names, qos, job_args, nodes;
  bool jobs_given = false;  // -j, with or without a list
  int iterate = 0;          // -i SECONDS
};
std::span<const slurm::CommandOption<SqueueArgs>> SqueueOptionTable();

struct SinfoArgs : QueryArgs {
  slurm::SinfoOptions render;
  std::vector<std::string> partitions, nodes, states;
  bool responding = false;  // -r
  bool dead = false;        // -d
};
std::span<const slurm::CommandOption<SinfoArgs>> SinfoOptionTable();

struct SacctArgs : QueryArgs {
  slurm::SacctOptions render;
  std::vector<std::string> users, accounts, job_args, names, partitions, state_names, nodes;
  std::string start_text, end_text;  // -S, -E
  bool all_users = false;            // -a
  bool help_format = false;          // -e: print the field names and exit
};
std::span<const slurm::CommandOption<SacctArgs>> SacctOptionTable();

struct ScontrolArgs : QueryArgs {
  slurm::ScontrolOptions render;
};
std::span<const slurm::CommandOption<ScontrolArgs>> ScontrolOptionTable();

struct ScancelArgs : QueryArgs {
  std::vector<std::string> accounts, names, partitions, qos, state_names, users, nodes;
  std::string signal;  // -s, as given
  bool quiet = false;
  bool verbose = false;
};
std::span<const slurm::CommandOption<ScancelArgs>> ScancelOptionTable();

// `sdiag`.
struct SdiagArgs : QueryArgs {
  slurm::SdiagOptions render;
};
std::span<const slurm::CommandOption<SdiagArgs>> SdiagOptionTable();

// `corral run`.
struct RunArgs {
  StepSpec spec;
  std::string job;  // --jobid
  std::string export_mode = "ALL";
  std::string controller;
  bool label = false;
  bool json = false;
  bool help = false;
};
std::span<const slurm::CommandOption<RunArgs>> RunOptionTable();

}  // namespace corral::cli::internal
