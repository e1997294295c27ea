// Fuzzes the TOML configuration parsers of the controller (its sections of corral.toml) and the
// agent (agent.toml): any text must give a config or an error naming the file, never a crash,
// and a controller config that parses must keep the invariants its parser promises.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "agent/config.h"
#include "controller/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto controller = corral::controller::ParseControllerConfig(text, "corral.toml");
  if (controller.has_value()) {
    if (controller->node_timeout <= controller->heartbeat_interval) std::abort();
    if (controller->store_url.empty() || controller->jwt_key_file.empty()) std::abort();
    if (controller->max_submitted_jobs > 100000000) std::abort();
  } else if (controller.error().message.rfind("corral.toml", 0) != 0) {
    std::abort();  // every error names the file
  }
  auto agent = corral::agent::ParseAgentConfig(text, "agent.toml");
  if (!agent.has_value() && agent.error().message.find("agent.toml") == std::string::npos) {
    std::abort();
  }
  return 0;
}
