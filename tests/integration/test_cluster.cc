#include "tests/integration/test_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "api/http_status.h"
#include "api/json_codec.h"
#include "cli/cluster_pki.h"
#include "core/check.h"
#include "core/clock.h"
#include "tests/integration/test_util.h"

extern char** environ;

namespace corral::testing {

uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

namespace fs = std::filesystem;

std::string Tail(const std::string& text, size_t n = 3000) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

// `text` with every "{node}" replaced by `node`.
std::string PerNode(std::string text, const std::string& node) {
  for (size_t at = text.find("{node}"); at != std::string::npos;
       at = text.find("{node}", at + node.size())) {
    text.replace(at, 6, node);
  }
  return text;
}

void Reap(pid_t pid) {
  if (pid <= 0) return;
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TestCluster::TestCluster(ClusterOptions options) : options_(std::move(options)) {
  char tmpl[] = "/tmp/corral-test-XXXXXX";
  dir_ = mkdtemp(tmpl);
  work_dir_ = dir_ + "/work";
  fs::create_directories(work_dir_);
  bin_dir_ = dir_ + "/bin";
  fs::create_directories(bin_dir_);
  for (const char* name : {"corral", "sbatch", "srun", "salloc", "squeue", "sinfo", "sacct",
                           "scontrol", "scancel", "seff", "sacctmgr"}) {
    std::error_code ec;
    fs::create_symlink(CORRAL_BINARY, bin_dir_ + "/" + name, ec);
  }
  fs::create_directories(dir_ + "/logs");
  // The cluster's CA, certificates and keys, as `corral dev` makes them.
  const cli::ClusterPki pki{dir_ + "/pki"};
  const Timestamp now = SystemClock::Get().Now();
  const cli::SubjectNames loopback{.dns = {"localhost"}, .ips = {"127.0.0.1"}};
  Status made = cli::InitClusterPki(pki, kCluster, now);
  if (made) made = cli::IssueControllerFiles(pki, loopback, now, false);
  for (uint32_t i = 1; made && i <= options_.nodes; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "node%02u", i);
    made = cli::IssueNodeFiles(pki, name, loopback, now, false);
  }
  CORRAL_CHECK(made) << made.error().message;
  key_file_ = pki.keyring();
  auto keyring = api::Keyring::FromFile(key_file_);
  CORRAL_CHECK(keyring.has_value()) << keyring.error().message;
  credentials_ = std::make_unique<api::Credentials>(std::move(*keyring),
                                                    api::TokenPolicy{.cluster = kCluster});
  port_ = FreePort();
  url_ = "https://127.0.0.1:" + std::to_string(port_);
  http_ = std::move(*api::HttpClient::Create(url_, client_options()));
  for (uint32_t i = 2; i <= options_.controllers; ++i) extra_ports_[i] = FreePort();
  // Several controllers (issue 11): one store, the [ha] list, each its own port and state.
  auto ha_toml = [&](uint32_t i) -> std::string {
    if (options_.controllers < 2) return "";
    std::string list;
    for (uint32_t j = 1; j <= options_.controllers; ++j) {
      list += std::string(j == 1 ? "" : ", ") + "\"" + controller_url_at(j) + "\"";
    }
    return "[store]\nurl = \"" + options_.store_url + "\"\n[ha]\ncontrollers = [" + list +
           "]\nurl = \"" + controller_url_at(i) + "\"\nlease_s = " +
           std::to_string(options_.ha_lease_s) + "\n";
  };
  std::ofstream(dir_ + "/corral.toml")
      << "[controller]\n"
      << "cluster_name = \"" << kCluster << "\"\n"
      << "listen = \"127.0.0.1:" << port_ << "\"\n"
      << "state_dir = \"" << dir_ << "/controller\"\n"
      << "heartbeat_interval_s = " << options_.heartbeat_interval_s << "\n"
      << "node_timeout_s = " << options_.node_timeout_s << "\n"
      << "[auth]\n"
      << "keyring = \"" << key_file_ << "\"\n"
      << "munge = " << (options_.munge_socket.empty() ? "false" : "true") << "\n"
      << "munge_socket = \"" << options_.munge_socket << "\"\n"
      << "[tls]\n"
      << "certificate = \"" << pki.controller_certificate() << "\"\n"
      << "key = \"" << pki.controller_key() << "\"\n"
      << "ca = \"" << pki.ca_certificate() << "\"\n"
      << "[metrics]\n"
      << "token_file = \"" << pki.metrics_token() << "\"\n"
      << options_.extra_controller_toml << "\n"
      << ha_toml(1);
  for (uint32_t i = 2; i <= options_.controllers; ++i) {
    // The same file but for its port, state_dir and [ha] url.
    std::ifstream first(dir_ + "/corral.toml");
    std::string text((std::istreambuf_iterator<char>(first)), std::istreambuf_iterator<char>());
    text = text.substr(0, text.rfind("[store]"));  // drop controller 1's [store] and [ha]
    auto swap = [&](const std::string& from, const std::string& to) {
      if (size_t at = text.find(from); at != std::string::npos) text.replace(at, from.size(), to);
    };
    swap("listen = \"127.0.0.1:" + std::to_string(port_) + "\"",
         "listen = \"127.0.0.1:" + std::to_string(extra_ports_[i]) + "\"");
    swap("state_dir = \"" + dir_ + "/controller\"",
         "state_dir = \"" + dir_ + "/controller" + std::to_string(i) + "\"");
    std::ofstream(dir_ + "/corral" + std::to_string(i) + ".toml") << text << ha_toml(i);
  }
  for (uint32_t i = 1; i <= options_.nodes; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "node%02u", i);
    std::string adir = dir_ + "/agents/" + name;
    fs::create_directories(adir);
    std::ofstream(adir + "/agent.toml")
        << "[agent]\n"
        << "name = \"" << name << "\"\n"
        << "controller = \"" << controller_list() << "\"\n"
        << "listen = \"127.0.0.1:0\"\n"
        << "state_dir = \"" << adir << "\"\n"
        << "cpus = " << options_.cpus_per_node << "\n"
        << "memory_mb = 65536\n"
        << "kill_grace_s = " << options_.kill_grace_s << "\n"
        << "[gpu]\n"
        << "count = " << options_.gpus_per_node << "\n"
        << "model = \"h100\"\n"
        << PerNode(options_.extra_agent_gpu_toml, name) << "\n"
        << "[auth]\n"
        << "keyring = \"" << pki.node_keyring(name) << "\"\n"
        << "cluster_name = \"" << kCluster << "\"\n"
        << "[tls]\n"
        << "certificate = \"" << pki.node_certificate(name) << "\"\n"
        << "key = \"" << pki.node_key(name) << "\"\n"
        << "ca = \"" << pki.ca_certificate() << "\"\n"
        << "[metrics]\n"
        << "token_file = \"" << pki.metrics_token() << "\"\n"
        << PerNode(options_.extra_agent_metrics_toml, name) << "\n"
        // The tests' jobs run as the user that runs them (root
        // on the build machines, which agents refuse by default;
        // other users' tokens carry root's gid 0 as well).
        << "[launch]\n"
        << "allow_root_jobs = " << (geteuid() == 0 ? "true" : "false") << "\n"
        << PerNode(options_.extra_agent_toml, name) << "\n";
  }
}

TestCluster::~TestCluster() {
  for (auto& [i, pid] : agents_) {
    if (pid > 0) kill(pid, SIGKILL);
  }
  if (controller_pid_ > 0) kill(controller_pid_, SIGKILL);
  for (auto& [i, pid] : extra_pids_) {
    if (pid > 0) {
      kill(pid, SIGCONT);
      kill(pid, SIGKILL);
      Reap(pid);
    }
  }
  for (auto& [i, pid] : agents_) Reap(pid);
  Reap(controller_pid_);
  // Jobs run in their own sessions; kill whatever a killed agent left behind.
  std::error_code ec;
  for (const auto& agent : fs::directory_iterator(dir_ + "/agents", ec)) {
    for (const auto& f : fs::directory_iterator(agent.path() / "running", ec)) {
      std::ifstream in(f.path());
      int pid = 0;
      if (in >> pid && pid > 1) kill(-pid, SIGKILL);
    }
  }
  if (std::getenv("CORRAL_KEEP_TEST_DIR") == nullptr) fs::remove_all(dir_, ec);
}

Result<pid_t> TestCluster::Spawn(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, CORRAL_BINARY, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return Internal(std::string("spawn ") + CORRAL_BINARY + ": " + std::strerror(rc));
  return pid;
}

std::string TestCluster::ControllerLog() const {
  return Tail(ReadFile(dir_ + "/logs/controller.log"));
}

Status TestCluster::StartController() {
  CORRAL_ASSIGN_OR_RETURN(controller_pid_,
                          Spawn({"corral", "controller", "--config", dir_ + "/corral.toml"},
                                dir_ + "/logs/controller.log"));
  // A single controller must lead before the test goes on (on PostgreSQL, after a SIGKILL, it
  // waits for its predecessor's lease to expire); one of several may stand by.
  const char* probe = options_.controllers > 1 ? "/livez" : "/readyz";
  bool up = WaitFor(
      [&] {
        auto r = http_->Send("GET", probe, "", {}, true, std::chrono::milliseconds(500));
        return r && r->status == 200;
      },
      std::chrono::seconds(20));
  if (!up) return Unavailable("controller did not come up:\n" + ControllerLog());
  return {};
}

void TestCluster::KillController(int signal) {
  if (controller_pid_ <= 0) return;
  kill(controller_pid_, signal);
  Reap(controller_pid_);
  controller_pid_ = -1;
}

// --- Several controllers (issue 11) ---

std::string TestCluster::controller_url_at(uint32_t i) const {
  if (i <= 1) return url_;
  return "https://127.0.0.1:" + std::to_string(extra_ports_.at(i));
}

pid_t TestCluster::controller_pid_at(uint32_t i) const {
  if (i <= 1) return controller_pid_;
  auto it = extra_pids_.find(i);
  return it == extra_pids_.end() ? -1 : it->second;
}

std::string TestCluster::controller_list() const {
  std::string list = url_;
  for (uint32_t i = 2; i <= options_.controllers; ++i) list += "," + controller_url_at(i);
  return list;
}

Status TestCluster::StartControllerAt(uint32_t i) {
  if (i <= 1) return StartController();
  const std::string name = "controller" + std::to_string(i);
  CORRAL_ASSIGN_OR_RETURN(
      extra_pids_[i],
      Spawn({"corral", "controller", "--config", dir_ + "/corral" + std::to_string(i) + ".toml"},
            dir_ + "/logs/" + name + ".log"));
  auto client = api::HttpClient::Create(controller_url_at(i), client_options());
  if (!client) return tl::unexpected<Error>(client.error());
  bool up = WaitFor(
      [&] {
        auto r = (*client)->Send("GET", "/livez", "", {}, true, std::chrono::milliseconds(500));
        return r && r->status == 200;
      },
      std::chrono::seconds(20));
  if (!up) return Unavailable(name + " did not come up");
  return {};
}

void TestCluster::SignalControllerAt(uint32_t i, int signal) {
  if (i <= 1) {
    if (signal == SIGKILL) {
      KillController(signal);
    } else if (controller_pid_ > 0) {
      kill(controller_pid_, signal);
    }
    return;
  }
  pid_t pid = controller_pid_at(i);
  if (pid <= 0) return;
  kill(pid, signal);
  if (signal == SIGKILL) {
    Reap(pid);
    extra_pids_[i] = -1;
  }
}

Status TestCluster::StartAgent(uint32_t index) {
  char name[16];
  std::snprintf(name, sizeof name, "node%02u", index);
  std::string adir = dir_ + "/agents/" + name;
  CORRAL_ASSIGN_OR_RETURN(agents_[index],
                          Spawn({"corral", "agent", "--config", adir + "/agent.toml"},
                                dir_ + "/logs/" + name + ".log"));
  return {};
}

void TestCluster::KillAgent(uint32_t index, int signal) {
  auto it = agents_.find(index);
  if (it == agents_.end() || it->second <= 0) return;
  kill(it->second, signal);
  Reap(it->second);
  it->second = -1;
}

Status TestCluster::WaitForNodes(size_t count, std::chrono::milliseconds timeout) {
  size_t up = 0;
  bool ok = WaitFor(
      [&] {
        auto nodes = ListNodes();
        if (!nodes) return false;
        up = 0;
        for (const auto& n : *nodes) up += n.node.responding ? 1 : 0;
        return up >= count;
      },
      timeout);
  if (!ok) {
    return Unavailable("only " + std::to_string(up) + " of " + std::to_string(count) +
                       " nodes came up; controller log:\n" + ControllerLog());
  }
  return {};
}

Status TestCluster::Start() {
  CORRAL_RETURN_IF_ERROR(StartController());
  for (uint32_t i = 1; i <= options_.nodes; ++i) CORRAL_RETURN_IF_ERROR(StartAgent(i));
  return WaitForNodes(options_.nodes);
}

std::string TestCluster::Token(const std::string& user) {
  api::Identity who = api::CurrentProcessIdentity();
  if (!user.empty() && user != who.user) {
    who.user = user;
    who.uid = 60000 + static_cast<uint32_t>(user.size());
  }
  auto token = credentials_->MintUserToken(who, SystemClock::Get().Now(), Seconds(600));
  CORRAL_CHECK(token.has_value()) << token.error().message;
  return "Bearer " + *token;
}

api::HttpClientOptions TestCluster::client_options() const {
  api::HttpClientOptions o;
  o.ca_file = ca_file();
  return o;
}

std::string TestCluster::ControllerCall(const std::string& node) const {
  auto token = credentials_->MintControllerCall(node, SystemClock::Get().Now(), Seconds(300));
  CORRAL_CHECK(token.has_value()) << token.error().message;
  return "Bearer " + *token;
}

Result<api::HttpResponse> TestCluster::Request(const std::string& method, const std::string& path,
                                               const std::string& body, bool auth) {
  std::map<std::string, std::string> headers;
  if (auth) headers["authorization"] = Token("");
  return http_->Send(method, path, body, headers, method == "GET");
}

Result<api::SubmitResponse> TestCluster::Submit(const JobSpec& spec, const std::string& user) {
  auto r = http_->Send("POST", "/api/v1/jobs", api::EncodeJobSpec(spec),
                       {{"authorization", Token(user)}});
  CORRAL_ASSIGN_OR_RETURN(auto resp, api::CheckResponse(std::move(r)));
  return api::DecodeSubmitResponse(resp.body);
}

Result<api::JobInfo> TestCluster::GetJob(JobId id) {
  CORRAL_ASSIGN_OR_RETURN(auto resp,
                          api::CheckResponse(Request("GET", "/api/v1/jobs/" + id.ToString(), "")));
  return api::DecodeJobInfo(resp.body);
}

Result<std::vector<api::JobInfo>> TestCluster::ListJobs(const std::string& query) {
  CORRAL_ASSIGN_OR_RETURN(auto resp,
                          api::CheckResponse(Request("GET", "/api/v1/jobs" + query, "")));
  return api::DecodeJobInfoList(resp.body);
}

Result<std::vector<api::NodeInfo>> TestCluster::ListNodes() {
  CORRAL_ASSIGN_OR_RETURN(auto resp, api::CheckResponse(Request("GET", "/api/v1/nodes", "")));
  return api::DecodeNodeInfoList(resp.body);
}

Result<api::JobInfo> TestCluster::WaitJob(JobId id, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline -
                                                                 std::chrono::steady_clock::now());
    if (left.count() < 0)
      return MakeError(ErrorCode::kDeadlineExceeded, "job " + id.ToString() + " did not end");
    auto r =
        http_->Send("GET",
                    "/api/v1/jobs/" + id.ToString() +
                        "/wait?timeout=" + std::to_string(std::min<long>(left.count(), 30)),
                    "", {{"authorization", Token("")}}, true, std::chrono::milliseconds(60000));
    auto checked = api::CheckResponse(std::move(r));
    if (!checked) {
      // The controller may be restarting; try again until the deadline.
      if (checked.error().code == ErrorCode::kUnavailable) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      return tl::unexpected<Error>(checked.error());
    }
    CORRAL_ASSIGN_OR_RETURN(auto info, api::DecodeJobInfo(checked->body));
    if (IsTerminal(info.job.state)) return info;
  }
}

CliResult TestCluster::Cli(const std::vector<std::string>& args, const std::string& cwd) {
  return CliAs("corral", args, cwd);
}

namespace {

// `program ARGS...` and an environment as exec wants them (the strings stay alive with it).
struct ExecArgs {
  ExecArgs(const std::string& program, const std::vector<std::string>& args,
           std::vector<std::string> environment)
      : words{program}, env(std::move(environment)) {
    words.insert(words.end(), args.begin(), args.end());
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    for (auto& kv : env) envp.push_back(kv.data());
    envp.push_back(nullptr);
  }
  std::vector<std::string> words, env;
  std::vector<char*> argv, envp;
};

}  // namespace

CliResult TestCluster::CliAs(const std::string& program, const std::vector<std::string>& args,
                             const std::string& cwd, const std::map<std::string, std::string>& env,
                             const std::string& input) {
  // cli.out/.err/.in, which a test may read while the call runs; a call made while another is
  // running (clients on threads) gets files of its own, removed after.
  static std::atomic<int> in_flight{0};
  static std::atomic<unsigned> sequence{0};
  const bool own_files = in_flight.fetch_add(1) > 0;
  const std::string suffix = own_files ? "." + std::to_string(++sequence) : "";
  std::string out_path = dir_ + "/cli" + suffix + ".out", err_path = dir_ + "/cli" + suffix + ".err",
              in_path = dir_ + "/cli" + suffix + ".in";
  std::ofstream(in_path, std::ios::trunc) << input;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.empty() ? work_dir_.c_str() : cwd.c_str());
  ExecArgs exec(program, args, CliEnvironment(env));
  char* const* argv = exec.argv.data();
  char* const* envp = exec.envp.data();
  CliResult result;
  pid_t pid = -1;
  if (posix_spawn(&pid, CORRAL_BINARY, &fa, nullptr, argv, envp) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&fa);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  if (own_files) {
    for (const std::string* p : {&out_path, &err_path, &in_path}) unlink(p->c_str());
  }
  in_flight.fetch_sub(1);
  return result;
}

Result<TestCluster::TerminalProcess> TestCluster::StartOnTerminal(
    const std::string& program, const std::vector<std::string>& args, uint16_t rows, uint16_t cols,
    const std::map<std::string, std::string>& env) {
  TerminalProcess t;
  t.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (t.master < 0 || grantpt(t.master) != 0 || unlockpt(t.master) != 0) {
    return Internal(std::string("posix_openpt: ") + std::strerror(errno));
  }
  char name[128];
  if (ptsname_r(t.master, name, sizeof name) != 0) return Internal("ptsname_r");
  t.slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (t.slave < 0) return Internal(std::string(name) + ": " + std::strerror(errno));
  winsize ws{};
  ws.ws_row = rows;
  ws.ws_col = cols;
  ioctl(t.master, TIOCSWINSZ, &ws);
  // Everything the child needs is made before fork: it only makes system calls.
  ExecArgs exec(program, args, CliEnvironment(env));
  char* const* argv = exec.argv.data();
  char* const* envp = exec.envp.data();
  const std::string cwd = work_dir_;
  t.pid = fork();
  if (t.pid < 0) return Internal(std::string("fork: ") + std::strerror(errno));
  if (t.pid == 0) {
    setsid();
    int tty = open(name, O_RDWR);  // the session's controlling terminal
    if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) != 0) _exit(126);
    dup2(tty, 0);
    dup2(tty, 1);
    dup2(tty, 2);
    if (tty > 2) close(tty);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execve(CORRAL_BINARY, argv, envp);
    _exit(127);
  }
  return t;
}

std::vector<std::string> TestCluster::CliEnvironment(
    const std::map<std::string, std::string>& env) const {
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    if (kv.rfind("CORRAL_", 0) == 0 || kv.rfind("HOME=", 0) == 0 || kv.rfind("PATH=", 0) == 0 ||
        kv.rfind("SLURM_", 0) == 0 || kv.rfind("SBATCH_", 0) == 0) {
      continue;
    }
    std::string name = kv.substr(0, kv.find('='));
    if (env.contains(name)) continue;
    env_store.push_back(kv);
  }
  const char* path = std::getenv("PATH");
  std::map<std::string, std::string> own = {
      {"PATH", bin_dir_ + ":" + (path != nullptr ? path : "/usr/bin:/bin")},
      {"HOME", dir_},
      {"CORRAL_CONTROLLER", controller_list()},
      {"CORRAL_KEY_FILE", key_file_},
      {"CORRAL_CA_FILE", ca_file()},
      {"CORRAL_CLUSTER", kCluster}};
  for (const auto& [k, v] : env) own[k] = v;
  for (const auto& [k, v] : own) env_store.push_back(k + "=" + v);
  return env_store;
}

JobSpec TestCluster::ShellJob(const std::string& body) const {
  JobSpec s;
  s.script = "#!/bin/sh\n" + body + "\n";
  s.working_dir = work_dir_;
  s.name = "test";
  return s;
}

}  // namespace corral::testing
