#include "agent/main.h"

#include <signal.h>

#include <cstdio>
#include <string>

#include "agent/agent.h"
#include "agent/config.h"
#include "agent/node_monitor.h"
#include "api/credentials.h"
#include "api/private_file.h"
#include "core/clock.h"
#include "core/daemon_args.h"
#include "core/log.h"

namespace corral::agent {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "corral agent: %s\n", message.c_str());
  return 1;
}

}  // namespace

int RunAgentCommand(int argc, char** argv) {
  auto args = ParseDaemonArgs(argc, argv);
  if (!args) return Fail(args.error().message + " (usage: corral agent --config FILE)");
  if (args->help) {
    std::printf(
        "usage: corral agent --config FILE\n"
        "  Runs a Corral node agent. Every key of FILE is documented in\n"
        "  deploy/agent.example.toml.\n");
    return 0;
  }
  auto config = LoadAgentConfig(args->config_path);
  if (!config) return Fail(config.error().message);
  SetLogName("agent " + config->name);

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (Status s = CheckAgentTransport(*config, args->config_path); !s)
    return Fail(s.error().message);
  if (!config->tls_key.empty()) {
    // A certificate key readable by others is refused before anything starts.
    if (Status s = api::CheckPrivateFile(config->tls_key, "[tls] key"); !s) {
      return Fail(s.error().message);
    }
  }
  auto keyring = api::Keyring::FromFile(config->jwt_key_file);
  if (!keyring) return Fail(keyring.error().message);
  auto gpus = MakeGpuBackend(*config, SystemClock::Get());
  if (!gpus) return Fail(gpus.error().message);

  Agent agent(*config, std::move(*gpus),
              api::Credentials(std::move(*keyring), {.cluster = config->cluster_name}),
              SystemClock::Get());
  if (Status s = agent.Start(); !s) return Fail(s.error().message);
  std::printf("corral agent: %s listening on %s\n", config->name.c_str(), agent.url().c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop, &sig);
  CORRAL_LOG(Info) << "stopping on signal " << sig;
  agent.Stop();
  return 0;
}

}  // namespace corral::agent
