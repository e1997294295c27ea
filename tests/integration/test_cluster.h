// TestCluster: a real Corral cluster for integration tests — a controller and N agents
// started as processes of the built `corral` binary, on loopback ports, in a temporary
// directory that is removed afterwards. Every connection is TLS, with the cluster's own CA,
// certificates and keys in DIR/pki (cli/cluster_pki.h), as `corral dev` makes them.
//
// Not thread-safe except where noted.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "api/auth.h"
#include "api/credentials.h"
#include "api/http.h"
#include "api/messages.h"
#include "core/job.h"
#include "core/result.h"

namespace corral::testing {

struct ClusterOptions {
  uint32_t nodes = 2;
  uint32_t gpus_per_node = 4;
  uint32_t cpus_per_node = 32;
  uint32_t heartbeat_interval_s = 1;
  uint32_t node_timeout_s = 3;
  uint32_t kill_grace_s = 1;
  std::string extra_controller_toml;  // appended to the controller's config (partitions, ...)
  std::string munge_socket;           // the controller also accepts MUNGE credentials from it
  // For every agent ("{node}" becomes its name): keys added to its [gpu] section, and text
  // appended to its config (new sections: [health], [cgroup], [container]).
  std::string extra_agent_gpu_toml;
  std::string extra_agent_toml;
  // Keys added to every agent's [metrics] section (which names the cluster's scrape token).
  std::string extra_agent_metrics_toml;
  // High availability (issue 11): `controllers` controllers sharing the store at `store_url`
  // (a postgresql:// URL), each on its own port with its own state_dir; agents and the CLI
  // get the list of all. Controller 1 is the one `StartController`/`KillController` mean.
  uint32_t controllers = 1;
  std::string store_url;
  uint32_t ha_lease_s = 2;
};

struct CliResult {
  int status = -1;
  std::string out;
  std::string err;
};

// Waits until `condition` holds, checking it every few milliseconds, or `timeout` passes.
// Returns whether it held.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

class TestCluster {
 public:
  explicit TestCluster(ClusterOptions options = {});
  ~TestCluster();  // kills every process and removes the directory
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  // Starts the controller and every agent and waits until all nodes are registered.
  // Returns the error (with the tail of the relevant log) when something does not come up.
  Status Start();

  Status StartController();
  void KillController(int signal = 9);       // does not wait for a restart
  Status StartAgent(uint32_t index);         // 1-based: node01 is 1
  void KillAgent(uint32_t index, int signal = 9);
  // Waits until `count` nodes are registered and responding.
  Status WaitForNodes(size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Thread-safe API calls as user `user` (a token minted with the cluster's key).
  Result<api::SubmitResponse> Submit(const JobSpec& spec, const std::string& user = "");
  Result<api::JobInfo> GetJob(JobId id);
  Result<std::vector<api::JobInfo>> ListJobs(const std::string& query = "?all=1");
  Result<std::vector<api::NodeInfo>> ListNodes();
  // Raw request with the default user's token (or none when `auth` is false).
  Result<api::HttpResponse> Request(const std::string& method, const std::string& path,
                                    const std::string& body, bool auth = true);
  // Waits (long poll) until the job has ended; returns its record.
  Result<api::JobInfo> WaitJob(JobId id, std::chrono::seconds timeout = std::chrono::seconds(60));

  // Runs `corral ARGS...` with the cluster in its environment.
  CliResult Cli(const std::vector<std::string>& args, const std::string& cwd = "");

  // Runs the binary under another name (argv[0] = `program`: "sbatch", "squeue", ...), as
  // through the links the build makes, with the cluster in its environment plus `env`, and
  // `input` on its stdin. PATH starts with `bin_dir()`, which holds such links (and `corral`),
  // so that jobs submitted this way find sbatch, srun, scontrol, ... as on a Slurm cluster.
  CliResult CliAs(const std::string& program, const std::vector<std::string>& args,
                  const std::string& cwd = "", const std::map<std::string, std::string>& env = {},
                  const std::string& input = "");
  const std::string& bin_dir() const { return bin_dir_; }

  // A CLI command on a terminal of its own (srun --pty): `program ARGS...` as CliAs runs it,
  // but as the leader of a new session whose controlling terminal, stdin, stdout and stderr
  // are a new pseudo-terminal of `rows` x `cols`. The caller reads and writes `master`, may
  // look at the terminal's settings through `slave` (kept open, so that reading `master`
  // never fails once the process is gone), waits for `pid` and closes both.
  struct TerminalProcess {
    pid_t pid = -1;
    int master = -1;
    int slave = -1;
  };
  Result<TerminalProcess> StartOnTerminal(const std::string& program,
                                          const std::vector<std::string>& args, uint16_t rows,
                                          uint16_t cols,
                                          const std::map<std::string, std::string>& env = {});

  // A JobSpec running `body` under /bin/sh in the work directory.
  JobSpec ShellJob(const std::string& body) const;

  // The cluster's name (the iss of its tokens), its CA, and the keyring that mints any token.
  static constexpr const char* kCluster = "test";
  std::string ca_file() const { return dir_ + "/pki/ca.crt"; }
  const api::Credentials& credentials() const { return *credentials_; }
  // Client options that verify the cluster's servers (agents and controller).
  api::HttpClientOptions client_options() const;
  // The Authorization header of the controller's call to node `node`'s agent.
  std::string ControllerCall(const std::string& node) const;
  std::string Token(const std::string& user);

  const std::string& dir() const { return dir_; }
  const std::string& work_dir() const { return work_dir_; }
  const std::string& url() const { return url_; }
  std::string ControllerLog() const;
  pid_t controller_pid() const { return controller_pid_; }

  // --- Several controllers (options.controllers > 1; issue 11) ---
  // Starts controller `i` (1-based) and waits until it answers /livez.
  Status StartControllerAt(uint32_t i);
  // Sends `signal` to controller `i` (SIGKILL: and reaps it).
  void SignalControllerAt(uint32_t i, int signal);
  std::string controller_url_at(uint32_t i) const;
  pid_t controller_pid_at(uint32_t i) const;
  // Every controller's URL, comma-separated (what agents and the CLI are given).
  std::string controller_list() const;

 private:
  Result<pid_t> Spawn(const std::vector<std::string>& args, const std::string& log);
  // CliAs' environment: this process's less the cluster's own variables, plus the cluster's
  // and `env`.
  std::vector<std::string> CliEnvironment(const std::map<std::string, std::string>& env) const;

  ClusterOptions options_;
  std::string dir_;
  std::string work_dir_;
  std::string bin_dir_;
  std::string key_file_;  // the cluster keyring
  std::string url_;
  uint16_t port_ = 0;
  pid_t controller_pid_ = -1;
  std::map<uint32_t, uint16_t> extra_ports_;  // controllers 2..N
  std::map<uint32_t, pid_t> extra_pids_;
  std::map<uint32_t, pid_t> agents_;
  std::unique_ptr<api::Credentials> credentials_;
  std::unique_ptr<api::HttpClient> http_;
};

}  // namespace corral::testing
