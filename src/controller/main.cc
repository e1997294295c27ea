#include "controller/main.h"

#include <fcntl.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/auth.h"
#include "api/private_file.h"
#include "controller/config.h"
#include "controller/job_credentials.h"
#include "controller/service.h"
#include "core/clock.h"
#include "core/daemon_args.h"
#include "core/log.h"
#include "sched/config.h"
#include "sched/policy_factory.h"
#include "store/store.h"

namespace corral::controller {
namespace {

void Usage() {
  std::fprintf(stderr,
               "usage: corral controller --config FILE\n"
               "  Runs the Corral controller. Every key of FILE is documented in\n"
               "  deploy/corral.example.toml.\n");
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "corral controller: %s\n", message.c_str());
  return 1;
}

// Executes this process's binary again with its arguments (/proc/self/cmdline), its stop
// signals unblocked as at a first start. Returns only on failure.
void RestartAsStandby() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t at = 0; at < all.size();) {
    size_t end = all.find('\0', at);
    if (end == std::string::npos) end = all.size();
    args.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  if (args.empty()) return;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  CORRAL_LOG(Warn) << "restarting as a standby";
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
  execv("/proc/self/exe", argv.data());
}

}  // namespace

int RunControllerCommand(int argc, char** argv) {
  auto args = ParseDaemonArgs(argc, argv);
  if (!args || args->help) {
    Usage();
    return args ? 0 : Fail(args.error().message);
  }
  const std::string& config_path = args->config_path;
  SetLogName("controller");
  auto config = LoadControllerConfig(config_path);
  if (!config) return Fail(config.error().message);
  if (Status s = CheckTransportSecurity(*config, config_path); !s) return Fail(s.error().message);
  if (!config->tls_key.empty()) {
    // A certificate key readable by others is refused before anything starts.
    if (Status s = api::CheckPrivateFile(config->tls_key, "[tls] key"); !s) {
      return Fail(s.error().message);
    }
  }
  auto sched_config = sched::ParseSchedulerConfig(config->toml_text, config_path);
  if (!sched_config) return Fail(sched_config.error().message);

  std::error_code ec;
  std::filesystem::create_directories(config->state_dir, ec);
  if (ec) return Fail("state_dir \"" + config->state_dir + "\": " + ec.message());

  // One controller per state directory: two writing one SQLite store would corrupt the state.
  // The lock lives as long as the process (the descriptor is never closed).
  std::string lock_path = config->state_dir + "/controller.lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return Fail("cannot open " + lock_path + ": " + std::strerror(errno));
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    return Fail("another controller is running with state_dir " + config->state_dir + " (" +
                lock_path + " is locked)");
  }

  // Block the stop signals in every thread; the main thread waits for them with sigwait.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGUSR2);  // the service stepped down (below)
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto store = store::OpenStore(config->store_url);
  if (!store) return Fail(store.error().message);

  auto keyring = api::Keyring::FromFile(config->jwt_key_file);
  if (!keyring && keyring.error().code == ErrorCode::kNotFound) {
    keyring = api::Keyring::CreateFile(config->jwt_key_file, "cluster-1");
    if (keyring) CORRAL_LOG(Info) << "created a new keyring in " << config->jwt_key_file;
  }
  if (!keyring) return Fail(keyring.error().message);
  auto credentials = std::make_shared<const api::Credentials>(
      std::move(*keyring),
      api::TokenPolicy{.cluster = config->cluster_name,
                       .max_lifetime = config->max_token_lifetime,
                       .max_job_lifetime = config->max_job_credential_lifetime});
  // A job's credential outlives its time limit by the agents' kill grace and some slack.
  auto jobs = std::make_shared<JobCredentials>(credentials, Minutes(5));
  std::string munge_socket;
  if (config->munge) {
    munge_socket =
        config->munge_socket.empty() ? "/run/munge/munge.socket.2" : config->munge_socket;
  }
  ServiceSecurity security{
      .authenticator = api::MakeControllerAuthenticator(
          {.credentials = *credentials,
           .roles = api::RoleResolver({.admin_users = config->admin_users,
                                       .admin_groups = config->admin_groups,
                                       .operator_users = config->operator_users,
                                       .operator_groups = config->operator_groups}),
           .munge_socket = munge_socket,
           .job_alive = JobCredentials::Liveness(jobs)}),
      .jobs = jobs,
      .agent_client = {.ca_file = config->tls_ca,
                       .certificate_file = config->tls_certificate,
                       .key_file = config->tls_key}};

  auto policy = sched::MakePolicy(sched_config->policy, *sched_config);
  if (!policy)
    return Fail(std::string(config_path) + ": [scheduler] policy: " + policy.error().message);
  CORRAL_LOG(Info) << "scheduling policy \"" << sched_config->policy << "\" with "
                   << sched_config->partitions.size() << " partitions, "
                   << sched_config->accounts.size() << " accounts, " << sched_config->qos.size()
                   << " QOS";
  ControllerService service(*config, *sched_config, std::move(*policy), std::move(*store),
                            std::move(security), SystemClock::Get());
  // A leader that steps down (issue 11) holds stale state: it starts again from the store,
  // as a standby, by executing itself anew (same pid, arguments and configuration).
  std::atomic<bool> stepped_down{false};
  service.OnStepDown([&stepped_down] {
    stepped_down = true;
    kill(getpid(), SIGUSR2);
  });
  if (Status s = service.Start(); !s) return Fail(s.error().message);
  std::printf("corral controller: listening on %s (%s)\n", service.url().c_str(),
              service.leading() ? "leader" : "standby");
  std::fflush(stdout);

  int sig = 0;
  do {
    sigwait(&stop, &sig);
  } while (sig == SIGUSR2 && !stepped_down);
  if (sig == SIGUSR2) {
    service.Stop();
    RestartAsStandby();  // returns only when exec fails
    return Fail("stepped down, and cannot execute itself again: " + std::string(strerror(errno)));
  }
  CORRAL_LOG(Info) << "stopping on signal " << sig;
  service.Stop();
  return 0;
}

}  // namespace corral::controller
