// `corral token --role metrics [--ttl TIME] [--key-file PATH]`: prints a bearer token for a
// Prometheus to scrape the controller's and the agents' /metrics with (docs/metrics.md).
//
// Minting needs the cluster's key (CORRAL_KEY_FILE, --key-file, or the running `corral dev`
// cluster's): holding it is the permission. The token's role reads metrics and nothing else.
#pragma once

namespace corral::cli {

// argv[0] is "token". Returns the exit status: 0, 1 after an error, 2 for a usage error.
int RunTokenCommand(int argc, char** argv);

}  // namespace corral::cli
