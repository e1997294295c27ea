#include "core/daemon_args.h"

namespace corral {

Result<DaemonArgs> ParseDaemonArgs(int argc, char** argv) {
  DaemonArgs args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--config" || a == "-c") && i + 1 < argc) {
      args.config_path = argv[++i];
    } else if (a.rfind("--config=", 0) == 0) {
      args.config_path = a.substr(9);
    } else if (a == "-h" || a == "--help") {
      args.help = true;
    } else {
      return InvalidArgument("unknown argument \"" + a + "\"");
    }
  }
  if (!args.help && args.config_path.empty()) return InvalidArgument("--config is required");
  return args;
}

}  // namespace corral
