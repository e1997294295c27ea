// `corral dev`: a controller and N agents with simulated GPUs on loopback, in one command.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>

#include "api/auth.h"
#include "api/http.h"
#include "api/json_codec.h"
#include "cli/client.h"
#include "cli/cluster_pki.h"
#include "cli/commands.h"
#include "core/clock.h"

extern char** environ;

namespace corral::cli {
namespace {

namespace fs = std::filesystem;

struct DevOptions {
  uint32_t nodes = 4;
  uint32_t gpus_per_node = 8;
  std::string gpu_model = "h100";
  uint64_t gpu_memory_mb = 81920;
  uint32_t cpus_per_node = 64;
  uint64_t mem_per_node_mb = 512 * 1024;
  std::string state_dir;
  uint16_t port = 6900;
  std::string config;  // a corral.toml whose scheduling sections the controller uses
  // MUNGE credentials accepted too ("" = the default munged socket when it exists).
  std::string munge_socket;
  // Plain HTTP on loopback instead of TLS (to measure what TLS costs; clients then need
  // CORRAL_ALLOW_PLAIN_HTTP=1).
  bool plain_http = false;
};

// The cluster name of dev clusters (the iss of their tokens).
constexpr char kDevCluster[] = "dev";
// munged's default socket.
constexpr char kDefaultMungeSocket[] = "/run/munge/munge.socket.2";

struct Child {
  std::string name;
  pid_t pid = -1;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "corral dev: %s\n", message.c_str());
  return 1;
}

Result<pid_t> Spawn(const std::vector<std::string>& args, const std::string& log_path) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // Children get their own process group so that a Ctrl-C in the terminal reaches only
  // `corral dev`, which then stops them in order.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/proc/self/exe", &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Internal(std::string("cannot start ") + args[1] + ": " + std::strerror(rc));
  return pid;
}

bool Exited(pid_t pid, int* status) { return waitpid(pid, status, WNOHANG) == pid; }

void StopAll(std::vector<Child>& children) {
  // Agents first (they kill their jobs), then the controller.
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    if (it->pid > 0) kill(it->pid, SIGTERM);
  }
  auto deadline = SystemClock::Get().MonotonicNow() + std::chrono::seconds(15);
  for (auto& c : children) {
    if (c.pid <= 0) continue;
    int status = 0;
    while (!Exited(c.pid, &status)) {
      if (SystemClock::Get().MonotonicNow() > deadline) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    c.pid = -1;
  }
}

Result<uint32_t> ParseCount(const std::string& flag, const std::string& v, uint32_t max) {
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 1 || n > static_cast<long>(max)) {
    return InvalidArgument(flag + ": \"" + v + "\" must be a number from 1 to " +
                           std::to_string(max));
  }
  return static_cast<uint32_t>(n);
}

// "node01", "node02", ...
std::string DevNodeName(uint32_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "node%02u", i);
  return name;
}

void DevUsage() {
  std::printf(
      "usage: corral dev [--nodes N] [--gpus-per-node G] [--gpu-model NAME] [--cpus-per-node C]\n"
      "                  [--mem-per-node MB] [--state-dir DIR] [--port P] [--config corral.toml]\n"
      "                  [--munge-socket PATH] [--plain-http]\n"
      "  Starts a controller and N agents with simulated GPUs on 127.0.0.1 (default 4 nodes x 8\n"
      "  h100 GPUs, state in $HOME/.corral/dev, port 6900) and runs until Ctrl-C or SIGTERM.\n"
      "  --config uses the scheduling sections ([[partition]], [scheduler], ...) of that file.\n"
      "  Every connection is TLS: the cluster makes its own CA, certificates and keys in\n"
      "  STATE_DIR/pki (docs/security.md). MUNGE credentials are accepted too when munged runs\n"
      "  (its default socket, or --munge-socket), so other local users can share the cluster.\n"
      "  --plain-http serves plain HTTP on loopback instead (to measure what TLS costs, as\n"
      "  bench/e2e_throughput.sh does); commands then need CORRAL_ALLOW_PLAIN_HTTP=1.\n");
}

}  // namespace

int RunDevCommand(int argc, char** argv) {
  DevOptions o;
  const char* home = std::getenv("HOME");
  o.state_dir = std::string(home != nullptr ? home : "/tmp") + "/.corral/dev";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string v;
    auto eq = a.find('=');
    if (eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (a != "--help" && a != "-h" && a != "--plain-http") {
      if (i + 1 >= argc) return Fail(a + " needs a value");
      v = argv[++i];
    }
    Result<uint32_t> n = 0u;
    if (a == "--help" || a == "-h") {
      DevUsage();
      return 0;
    } else if (a == "--nodes") {
      if (!(n = ParseCount(a, v, 512))) return Fail(n.error().message);
      o.nodes = *n;
    } else if (a == "--gpus-per-node") {
      if (v == "0") {
        o.gpus_per_node = 0;
      } else {
        if (!(n = ParseCount(a, v, 64))) return Fail(n.error().message);
        o.gpus_per_node = *n;
      }
    } else if (a == "--gpu-model") {
      o.gpu_model = v;
    } else if (a == "--cpus-per-node") {
      if (!(n = ParseCount(a, v, 100000))) return Fail(n.error().message);
      o.cpus_per_node = *n;
    } else if (a == "--mem-per-node") {
      if (!(n = ParseCount(a, v, 1u << 30))) return Fail(n.error().message);
      o.mem_per_node_mb = *n;
    } else if (a == "--state-dir") {
      o.state_dir = v;
    } else if (a == "--port") {
      if (v == "0") {
        o.port = 0;
      } else {
        if (!(n = ParseCount(a, v, 65535))) return Fail(n.error().message);
        o.port = static_cast<uint16_t>(*n);
      }
    } else if (a == "--config") {
      o.config = v;
    } else if (a == "--munge-socket") {
      o.munge_socket = v;
    } else if (a == "--plain-http") {
      o.plain_http = true;
    } else {
      DevUsage();
      return Fail("unknown option " + a);
    }
  }
  std::error_code ec;
  fs::create_directories(o.state_dir + "/logs", ec);
  if (ec) return Fail("state dir \"" + o.state_dir + "\": " + ec.message());
  o.state_dir = fs::canonical(o.state_dir).string();
  // The cluster's own CA, certificates and keys (kept across restarts).
  const ClusterPki pki{o.state_dir + "/pki"};
  const Timestamp now = SystemClock::Get().Now();
  const SubjectNames loopback{.dns = {"localhost"}, .ips = {"127.0.0.1"}};
  if (Status s = InitClusterPki(pki, kDevCluster, now); !s) return Fail(s.error().message);
  if (Status s = IssueControllerFiles(pki, loopback, now, false); !s) {
    return Fail(s.error().message);
  }
  // Every node's certificate and key before the controller reads its keyring.
  for (uint32_t i = 1; i <= o.nodes; ++i) {
    if (Status s = IssueNodeFiles(pki, DevNodeName(i), loopback, now, false); !s) {
      return Fail(s.error().message);
    }
  }
  auto keyring = api::Keyring::FromFile(pki.keyring());
  if (!keyring) return Fail(keyring.error().message);
  std::string munge_socket = o.munge_socket;
  if (munge_socket.empty() && access(kDefaultMungeSocket, F_OK) == 0) {
    munge_socket = kDefaultMungeSocket;
  }

  // Controller config: the scheduling sections of --config, if any, and our own sections.
  std::string scheduling;
  if (!o.config.empty()) {
    std::ifstream in(o.config);
    if (!in) return Fail("cannot read --config " + o.config);
    std::string line;
    bool skip = false;
    while (std::getline(in, line)) {
      // Drop the controller's own sections from the given file; we write ours below.
      if (line.rfind("[controller]", 0) == 0 || line.rfind("[store]", 0) == 0 ||
          line.rfind("[auth]", 0) == 0 || line.rfind("[tls]", 0) == 0 ||
          line.rfind("[metrics]", 0) == 0) {
        skip = true;
        continue;
      }
      if (!line.empty() && line[0] == '[') skip = false;
      if (!skip) scheduling += line + "\n";
    }
  }
  // Our sections first: a TOML table ends where the next begins.
  std::string controller_toml = o.state_dir + "/corral.toml";
  {
    std::ofstream out(controller_toml, std::ios::trunc);
    out << "# Written by `corral dev`; edit a copy and pass it with --config to change "
           "scheduling.\n"
        << "[controller]\n"
        << "listen = \"127.0.0.1:" << o.port << "\"\n"
        << "state_dir = \"" << o.state_dir << "\"\n"
        << "heartbeat_interval_s = 1\n"
        << "node_timeout_s = 5\n\n"
        << "cluster_name = \"" << kDevCluster << "\"\n\n"
        << "[auth]\n"
        << "keyring = \"" << pki.keyring() << "\"\n"
        << "munge = " << (munge_socket.empty() ? "false" : "true") << "\n"
        << "munge_socket = \"" << munge_socket << "\"\n\n"
        << "[tls]\n";
    if (o.plain_http) {
      out << "allow_plain_loopback = true\n\n";
    } else {
      out << "certificate = \"" << pki.controller_certificate() << "\"\n"
          << "key = \"" << pki.controller_key() << "\"\n"
          << "ca = \"" << pki.ca_certificate() << "\"\n\n";
    }
    out << "[metrics]\n"
        << "token_file = \"" << pki.metrics_token() << "\"\n\n"
        << scheduling;
  }
  std::vector<Child> children;
  std::string log_dir = o.state_dir + "/logs";
  std::string controller_log = log_dir + "/controller.log";
  // Find the actual port when 0 was asked for: the controller prints it, but simpler is to
  // require a fixed port for the agents' config.
  if (o.port == 0) return Fail("--port 0 is not supported; give a free port");

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto pid = Spawn({"corral", "controller", "--config", controller_toml}, controller_log);
  if (!pid) return Fail(pid.error().message);
  children.push_back({"controller", *pid});
  std::string url =
      (o.plain_http ? "http://127.0.0.1:" : "https://127.0.0.1:") + std::to_string(o.port);

  // Wait until the controller answers.
  auto http = api::HttpClient::Create(url, {.connect_timeout = std::chrono::milliseconds(500),
                                            .request_timeout = std::chrono::milliseconds(2000),
                                            .ca_file = pki.ca_certificate()});
  if (!http) {
    StopAll(children);
    return Fail(http.error().message);
  }
  auto deadline = SystemClock::Get().MonotonicNow() + std::chrono::seconds(20);
  while (true) {
    auto r = (*http)->Send("GET", "/api/v1/health", "", {}, true);
    if (r && r->status == 200) break;
    int status = 0;
    if (Exited(children[0].pid, &status) || SystemClock::Get().MonotonicNow() > deadline) {
      children[0].pid = -1;
      StopAll(children);
      return Fail("the controller did not start; see " + controller_log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  for (uint32_t i = 1; i <= o.nodes; ++i) {
    const std::string name = DevNodeName(i);
    std::string dir = o.state_dir + "/agents/" + name;
    fs::create_directories(dir, ec);

    std::string toml = dir + "/agent.toml";
    {
      std::ofstream out(toml, std::ios::trunc);
      out << "[agent]\n"
          << "name = \"" << name << "\"\n"
          << "controller = \"" << url << "\"\n"
          << "listen = \"127.0.0.1:0\"\n"
          << "state_dir = \"" << dir << "\"\n"
          << "cpus = " << o.cpus_per_node << "\n"
          << "memory_mb = " << o.mem_per_node_mb << "\n"
          << "kill_grace_s = 5\n\n"
          << "[gpu]\n"
          << "backend = \"simulated\"\n"
          << "count = " << o.gpus_per_node << "\n"
          << "model = \"" << o.gpu_model << "\"\n"
          << "memory_mb = " << o.gpu_memory_mb << "\n\n"
          << "[auth]\n"
          << "keyring = \"" << pki.node_keyring(name) << "\"\n"
          << "cluster_name = \"" << kDevCluster << "\"\n\n"
          << "[tls]\n";
      if (o.plain_http) {
        out << "allow_plain_loopback = true\n\n";
      } else {
        out << "certificate = \"" << pki.node_certificate(name) << "\"\n"
            << "key = \"" << pki.node_key(name) << "\"\n"
            << "ca = \"" << pki.ca_certificate() << "\"\n\n";
      }
      out << "[metrics]\n"
          << "token_file = \"" << pki.metrics_token()
          << "\"\n\n"
          // Jobs run as the user who started the dev cluster; root's jobs only when that is root.
          << "[launch]\n"
          << "allow_root_jobs = " << (geteuid() == 0 ? "true" : "false") << "\n";
    }
    auto apid = Spawn({"corral", "agent", "--config", toml}, log_dir + "/" + name + ".log");
    if (!apid) {
      StopAll(children);
      return Fail(apid.error().message);
    }
    children.push_back({name, *apid});
  }

  // Wait until every node has registered.
  DevCluster dev{.url = url,
                 .key_file = pki.keyring(),
                 .state_dir = o.state_dir,
                 .pid = static_cast<int>(getpid()),
                 .ca_file = pki.ca_certificate(),
                 .cluster = kDevCluster};
  api::Credentials credentials(*keyring, {.cluster = kDevCluster});
  auto token = credentials.MintUserToken(api::CurrentProcessIdentity(), SystemClock::Get().Now(),
                                         Seconds(600));
  if (!token) {
    StopAll(children);
    return Fail(token.error().message);
  }
  std::string auth = "Bearer " + *token;
  deadline = SystemClock::Get().MonotonicNow() + std::chrono::seconds(30);
  while (true) {
    auto r = (*http)->Send("GET", "/api/v1/nodes", "", {{"authorization", auth}}, true);
    size_t up = 0;
    if (r && r->status == 200) {
      if (auto nodes = api::DecodeNodeInfoList(r->body)) {
        for (const auto& n : *nodes) up += n.node.registered && n.node.responding ? 1 : 0;
      }
    }
    if (up >= o.nodes) break;
    if (SystemClock::Get().MonotonicNow() > deadline) {
      StopAll(children);
      return Fail("only " + std::to_string(up) + " of " + std::to_string(o.nodes) +
                  " agents registered; see the logs in " + log_dir);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string discovery = DevDiscoveryPath();
  if (Status s = WriteDevCluster(discovery, dev); !s)
    std::fprintf(stderr, "corral dev: %s\n", s.error().message.c_str());

  std::printf("Corral dev cluster: %u nodes x %u simulated %s GPUs\n", o.nodes, o.gpus_per_node,
              o.gpu_model.c_str());
  std::printf("  controller: %s\n  state dir:  %s\n  logs:       %s\n  CA:         %s\n",
              url.c_str(), o.state_dir.c_str(), log_dir.c_str(), pki.ca_certificate().c_str());
  if (!munge_socket.empty()) std::printf("  MUNGE:      %s\n", munge_socket.c_str());
  std::printf(
      "Try:  corral submit --gpus 2 --wrap 'nvidia-smi || echo $CUDA_VISIBLE_DEVICES'\n"
      "      corral queue    corral nodes    corral show JOB\n"
      "Press Ctrl-C to stop.\n");
  std::fflush(stdout);

  // Run until asked to stop; report children that die on their own.
  while (true) {
    timespec tick{0, 200'000'000};
    int sig = sigtimedwait(&stop, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) break;
    for (auto& c : children) {
      int status = 0;
      if (c.pid > 0 && Exited(c.pid, &status)) {
        std::fprintf(stderr, "corral dev: %s exited (%s %d); see %s/%s.log\n", c.name.c_str(),
                     WIFSIGNALED(status) ? "signal" : "status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), log_dir.c_str(),
                     c.name.c_str());
        c.pid = -1;
      }
    }
  }
  std::printf("\nStopping the dev cluster...\n");
  StopAll(children);
  std::remove(discovery.c_str());
  std::printf("Stopped. State kept in %s\n", o.state_dir.c_str());
  return 0;
}

}  // namespace corral::cli
