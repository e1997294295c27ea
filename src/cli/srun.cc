// `srun` and `salloc`.
//
// srun inside an allocation (SLURM_JOB_ID or --jobid) is `corral run`: a step of that job over
// its nodes. Outside one, srun first makes an allocation for the command's duration, runs the
// step in it and gives the allocation back, as Slurm's srun does.
//
// An allocation (salloc, srun outside a job) is a job whose batch script only holds the nodes:
// it waits until it is told to end (SIGTERM, which it answers by exiting 0, so the job ends
// COMPLETED) or its time limit. The command or shell runs here, on the submitting host, with
// the job's SLURM_* variables, so that srun inside it finds the allocation. When it ends the
// allocation is released. A client that dies leaves the allocation to its time limit (or
// `scancel`), as an orphaned Slurm allocation is.
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/wait.h>

#include "cli/internal/slurm_cli.h"
#include "cli/run.h"
#include "cli/slurm/environment.h"
#include "cli/slurm/options.h"
#include "cli/slurm/submit.h"
#include "core/clock.h"
#include "core/hostlist.h"
#include "core/slurm_env.h"

extern char** environ;

namespace corral::cli::internal {
namespace {

// The script of an allocation: hold the nodes until SIGTERM (exit 0) or the time limit.
constexpr const char* kHolderScript =
    "#!/bin/sh\n"
    "# An allocation made by salloc or srun (Corral): the command runs on the submitting host.\n"
    "trap 'kill $! 2>/dev/null; exit 0' TERM INT HUP\n"
    "while :; do sleep 3600 & wait $!; done\n";

volatile sig_atomic_t g_interrupted = 0;

void OnInterrupt(int) { g_interrupted = 1; }

// Which options were given on the command line or through srun's input variables (as opposed
// to the parser's defaults).
struct GivenOptions {
  std::vector<std::string> names;
  std::vector<std::string> command_line;  // those given on the command line
  std::string export_value;  // the last --export (or SLURM_EXPORT_ENV / SRUN_EXPORT_ENV)
  bool Has(const std::string& name) const {
    return std::find(names.begin(), names.end(), name) != names.end();
  }
  bool OnCommandLine(const std::string& name) const {
    return std::find(command_line.begin(), command_line.end(), name) != command_line.end();
  }
};

GivenOptions FindGiven(const std::vector<std::string>& args, const slurm::SubmitContext& ctx) {
  GivenOptions g;
  for (const slurm::EnvironmentOption& e : slurm::InputVariables(slurm::Command::kSrun)) {
    auto it = ctx.environment.find(e.variable);
    if (it == ctx.environment.end()) continue;
    g.names.push_back(e.option);
    if (std::string_view(e.option) == "export") g.export_value = it->second;
  }
  if (auto scan = slurm::ScanOptions(slurm::Command::kSrun, args); scan.has_value()) {
    for (const auto& o : scan->options) {
      g.names.push_back(o.name);
      g.command_line.push_back(o.name);
      if (o.name == "export") g.export_value = o.value;
    }
  }
  return g;
}

// `corral run`'s command line for the step `req` describes, in job `job`. With `whole_job`
// (srun's own allocation) the step takes every node and task of it. Inside an allocation,
// -w/-x/-r place the step (`corral run --nodelist/--exclude/--relative`, PlanStep); with them
// the node and task counts come from the command line only, not from the job's SLURM_NNODES
// and SLURM_NTASKS (so `srun -w node2 cmd` runs on node2 alone, as in Slurm).
std::vector<std::string> StepCommandLine(const slurm::SubmitRequest& req, const GivenOptions& given,
                                         uint64_t job, bool whole_job) {
  const ResourceRequest& r = req.spec.resources;
  std::vector<std::string> out = {"run", "--jobid=" + std::to_string(job), "--slurm-env"};
  const bool placed =
      !whole_job && (!r.nodelist.empty() || !r.exclude.empty() || req.client.relative.has_value());
  auto has = [&](const char* name) { return placed ? given.OnCommandLine(name) : given.Has(name); };
  if (whole_job || has("nodes")) out.push_back("--nodes=" + std::to_string(r.nodes));
  if (whole_job || has("ntasks") || has("nodes") || has("ntasks-per-node")) {
    out.push_back("--ntasks=" + std::to_string(r.ntasks));
  }
  if (r.ntasks_per_node > 0 && (!placed || has("ntasks-per-node")))
    out.push_back("--ntasks-per-node=" + std::to_string(r.ntasks_per_node));
  if (!whole_job) {
    if (!r.nodelist.empty()) out.push_back("--nodelist=" + CompressHostList(r.nodelist));
    if (!r.exclude.empty()) out.push_back("--exclude=" + CompressHostList(r.exclude));
    if (req.client.relative.has_value())
      out.push_back("--relative=" + std::to_string(*req.client.relative));
  }
  if (given.Has("cpus-per-task"))
    out.push_back("--cpus-per-task=" + std::to_string(r.cpus_per_task));
  if (r.gpus_per_task > 0) out.push_back("--gpus-per-task=" + std::to_string(r.gpus_per_task));
  if (req.client.kill_on_bad_exit.has_value()) {
    out.push_back(*req.client.kill_on_bad_exit ? "--kill-on-bad-exit=1" : "--kill-on-bad-exit=0");
  }
  if (req.client.label) out.push_back("--label");
  if (req.client.pty) out.push_back("--pty");
  if (!given.export_value.empty()) out.push_back("--export=" + given.export_value);
  if (!req.spec.working_dir.empty()) out.push_back("--chdir=" + req.spec.working_dir);
  if (!req.spec.stdout_path.empty()) out.push_back("--output=" + req.spec.stdout_path);
  if (!req.spec.stderr_path.empty()) out.push_back("--error=" + req.spec.stderr_path);
  // pyxis: the tasks run in the container (given here, or inherited from the job).
  const ContainerSpec& c = req.spec.container;
  if (!c.image.empty()) out.push_back("--container-image=" + c.image);
  if (!c.name.empty()) out.push_back("--container-name=" + c.name);
  if (!c.image.empty() || !c.name.empty()) {
    std::string mounts, env;
    for (const auto& m : c.mounts) mounts += (mounts.empty() ? "" : ",") + m;
    for (const auto& e : c.env) env += (env.empty() ? "" : ",") + e;
    if (!mounts.empty()) out.push_back("--container-mounts=" + mounts);
    if (!env.empty()) out.push_back("--container-env=" + env);
    if (!c.workdir.empty()) out.push_back("--container-workdir=" + c.workdir);
    if (!c.mount_home) out.push_back("--no-container-mount-home");
  }
  out.push_back("--");
  out.insert(out.end(), req.client.command.begin(), req.client.command.end());
  return out;
}

int RunStep(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return RunStepCommand(static_cast<int>(args.size()), argv.data());
}

// Submits the allocation and waits until it runs. Prints Slurm's messages as `prog` does.
// Returns the running job, or null after printing why.
std::optional<api::JobInfo> Allocate(Client& client, JobSpec spec, const std::string& prog,
                                     const slurm::ClientOptions& opts) {
  spec.script = kHolderScript;
  spec.container = ContainerSpec();  // the holder runs bare; steps get the container
  spec.command.clear();
  spec.script_args.clear();
  spec.stdout_path = "/dev/null";
  spec.stderr_path.clear();
  spec.requeue = false;
  spec.array.clear();
  auto submitted = client.Submit(spec);
  if (!submitted) {
    PrintError(prog, "Job submit/allocate failed: " + submitted.error().message);
    return std::nullopt;
  }
  JobId id = submitted->job_id;
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  auto restore = [&] {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  };
  bool announced = false;
  const MonoTime started = SystemClock::Get().MonotonicNow();
  auto pause = std::chrono::milliseconds(5);
  while (true) {
    auto info = client.GetJob(id);
    if (!info) {
      PrintError(prog, info.error().message);
      restore();
      return std::nullopt;
    }
    if (info->job.state == JobState::kRunning) {
      if (announced)
        std::fprintf(stderr, "%s: job %s has been allocated resources\n", prog.c_str(),
                     id.ToString().c_str());
      restore();
      return *info;
    }
    if (IsTerminal(info->job.state)) {
      std::fprintf(stderr, "%s: error: Job allocation %s has been revoked.\n", prog.c_str(),
                   id.ToString().c_str());
      restore();
      return std::nullopt;
    }
    Duration waited = SystemClock::Get().MonotonicNow() - started;
    if (opts.immediate.has_value() &&
        waited >= std::chrono::seconds(std::max<uint32_t>(*opts.immediate, 1))) {
      (void)client.Cancel(id);
      std::fprintf(stderr, "%s: error: Unable to allocate resources: Requested nodes are busy\n",
                   prog.c_str());
      restore();
      return std::nullopt;
    }
    if (g_interrupted) {
      (void)client.Cancel(id);
      std::fprintf(stderr, "%s: Job allocation %s has been revoked.\n", prog.c_str(),
                   id.ToString().c_str());
      restore();
      return std::nullopt;
    }
    if (!announced && waited > std::chrono::milliseconds(500) && !opts.quiet) {
      if (prog == "salloc")
        std::fprintf(stderr, "salloc: Pending job allocation %s\n", id.ToString().c_str());
      std::fprintf(stderr, "%s: job %s queued and waiting for resources\n", prog.c_str(),
                   id.ToString().c_str());
      announced = true;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
}

// Ends the allocation: its holder exits 0 on SIGTERM (the job ends COMPLETED); if that does
// not happen within a few seconds (its launch still in flight, say), it is cancelled.
void Release(Client& client, JobId id) {
  if (client.Signal(id, SIGTERM)) {
    auto info = client.WaitJob(id, 5);
    if (info && IsTerminal(info->job.state)) return;
  }
  (void)client.Cancel(id);
}

// The variables a command run in allocation `job` on the submitting host gets, as salloc sets
// them: the job's, without those of a particular node.
std::map<std::string, std::string> AllocationEnvironment(const Job& job) {
  SlurmNodeContext ctx;
  ctx.node_index = job.allocation.nodes.size();  // no node: the submitting host is none of them
  EnvMap env = SlurmBatchEnvironment(job, ctx);
  for (const char* k : {"SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_GTIDS"})
    env.erase(k);
  env["CORRAL_JOB_ID"] = job.id.ToString();
  return env;
}

// The shell salloc starts without a command: the user's login shell (passwd), as Slurm's salloc
// takes it, else $SHELL, else /bin/sh.
std::string LoginShell() {
  std::vector<char> buf(4096);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
      pw.pw_shell != nullptr && pw.pw_shell[0] == '/') {
    return pw.pw_shell;
  }
  const char* shell = std::getenv("SHELL");
  return shell != nullptr && *shell != '\0' ? shell : "/bin/sh";
}

}  // namespace

int RunSrun(int argc, char** argv) {
  const std::string prog = "srun";
  std::vector<std::string> args(argv + 1, argv + argc);
  slurm::SubmitContext ctx = ProcessContext();
  auto req = slurm::ParseSrun(args, ctx);
  if (!req) {
    PrintError(prog, req.error().message);
    return 1;
  }
  if (req->client.help || req->client.usage) {
    std::printf(
        "Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]]\n"
        "Inside an allocation: -N, -n, --ntasks-per-node, -c, --gpus-per-task, -l, -K, --export,\n"
        "-D, -o, -e, --pty, and pyxis' --container-image, --container-mounts, "
        "--container-workdir,\n"
        "--container-name, --container-env, --[no-]container-mount-home (a step of the job,\n"
        "`corral run`); outside one, also the job's options (an allocation for the command's\n"
        "duration):\n%s"
        "Options Corral does not support are refused by name. Details: docs/slurm.md\n",
        slurm::OptionsHelp(slurm::Command::kSrun).c_str());
    return 0;
  }
  if (req->client.version) {
    PrintVersion();
    return 0;
  }
  for (const auto& w : req->warnings) std::fprintf(stderr, "%s\n", w.c_str());
  GivenOptions given = FindGiven(args, ctx);
  if (req->client.jobid.has_value()) {
    return RunStep(StepCommandLine(*req, given, *req->client.jobid, /*whole_job=*/false));
  }
  if (req->client.relative.has_value()) {
    // As Slurm: -r places a step inside an allocation; it means nothing for a new one.
    PrintError(prog, "--relative option invalid for job allocation request");
    return 1;
  }
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto job = Allocate(*client, req->spec, prog, req->client);
  if (!job) return 1;
  int status = RunStep(StepCommandLine(*req, given, job->job.id.value, /*whole_job=*/true));
  Release(*client, job->job.id);
  return status;
}

int RunSalloc(int argc, char** argv) {
  const std::string prog = "salloc";
  std::vector<std::string> args(argv + 1, argv + argc);
  slurm::SubmitContext ctx = ProcessContext();
  auto req = slurm::ParseSalloc(args, ctx);
  if (!req) {
    PrintError(prog, req.error().message);
    return 1;
  }
  if (req->client.help || req->client.usage) {
    std::printf(
        "Usage: salloc [OPTIONS(0)...] [command(0) [args(0)...]]\n"
        "An allocation with the job options of sbatch; the command (default: your shell) runs "
        "here\n"
        "with SLURM_JOB_ID, SLURM_JOB_NODELIST, ... so that srun runs steps in it:\n%s"
        "Options Corral does not support are refused by name. Details: docs/slurm.md\n",
        slurm::OptionsHelp(slurm::Command::kSalloc).c_str());
    return 0;
  }
  if (req->client.version) {
    PrintVersion();
    return 0;
  }
  for (const auto& w : req->warnings) std::fprintf(stderr, "%s\n", w.c_str());
  auto client = ConnectOrReport(prog);
  if (client == nullptr) return 1;
  auto job = Allocate(*client, req->spec, prog, req->client);
  if (!job) return 1;
  const Job& j = job->job;
  std::string id = j.id.ToString();
  if (!req->client.quiet) {
    std::fprintf(stderr, "salloc: Granted job allocation %s\n", id.c_str());
  }
  if (req->client.no_shell) return 0;

  std::vector<std::string> command = req->client.command;
  const char* interactive_step = std::getenv("CORRAL_SALLOC_INTERACTIVE_STEP");
  if (command.empty()) {
    command = {LoginShell()};
    // Slurm's LaunchParameters=use_interactive_step: the shell runs as a step on the
    // allocation's first node, in a terminal (`srun -N1 -n1 --pty SHELL`).
    if (interactive_step != nullptr && std::string_view(interactive_step) == "1")
      command = {"srun", "-N1", "-n1", "--pty", command[0]};
  }
  std::map<std::string, std::string> env = ProcessEnvironment();
  for (auto& [k, v] : AllocationEnvironment(j)) env[k] = v;
  // salloc's pyxis options reach the steps run in it, as Slurm's SPANK variables.
  for (auto& [k, v] : slurm::PyxisEnvironment(req->spec.container)) env[k] = v;
  std::vector<std::string> env_store;
  for (const auto& [k, v] : env) env_store.push_back(k + "=" + v);
  std::vector<char*> envp, cargv;
  for (auto& kv : env_store) envp.push_back(kv.data());
  envp.push_back(nullptr);
  for (auto& a : command) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  // The command gets the terminal's signals; salloc waits for it.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 1;
  pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    // `srun` is this binary (it picks the command by argv[0]) when the shell runs as a step.
    if (command[0] == "srun" && req->client.command.empty()) {
      execve("/proc/self/exe", cargv.data(), envp.data());
    }
    execvpe(cargv[0], cargv.data(), envp.data());
    std::fprintf(stderr, "salloc: error: %s: %s\n", command[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  if (pid < 0) {
    PrintError(prog, std::string("fork: ") + std::strerror(errno));
  } else {
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (!req->client.quiet)
    std::fprintf(stderr, "salloc: Relinquishing job allocation %s\n", id.c_str());
  Release(*client, j.id);
  return status;
}

}  // namespace corral::cli::internal
