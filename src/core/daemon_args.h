// The command line of a daemon (`corral controller`, `corral agent`): `--config FILE` (also
// `-c FILE`, `--config=FILE`) and `-h`/`--help`, nothing else.
//
// Thread-safe: a pure function.
#pragma once

#include <string>

#include "core/result.h"

namespace corral {

struct DaemonArgs {
  std::string config_path;
  bool help = false;
};

// Returns kInvalidArgument naming an unknown argument, or "--config is required" when neither
// a config nor help was asked for.
Result<DaemonArgs> ParseDaemonArgs(int argc, char** argv);

}  // namespace corral
