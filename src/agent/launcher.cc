#include "agent/launcher.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include "agent/exec/step_support.h"
#include "agent/exec/task_env.h"
#include "agent/run_journal.h"
#include "core/log.h"
#include "core/output_pattern.h"
#include "core/step.h"
#include "core/strings.h"

namespace corral::agent {

namespace fs = std::filesystem;

namespace {

// The job's own output files (its --output and --error patterns) as this node names them.
void SetJobOutputs(const Job& job, const std::string& node_name, ProcessSpec* spec) {
  OutputPatternValues values{.job_id = job.id.value,
                             .array_job_id = job.array_job_id.value,
                             .array_task_id = job.array_task_id,
                             .job_name = job.spec.name,
                             .user = job.spec.user,
                             .node_name = node_name};
  spec->stdout_path = ResolveOutputPath(job.spec.stdout_path, values, job.spec.working_dir);
  if (!job.spec.stderr_path.empty()) {
    spec->stderr_path = ResolveOutputPath(job.spec.stderr_path, values, job.spec.working_dir);
  }
}

// The ids the agent switches to for `job`: its user's when the agent is root (a job the node
// lets run as root runs as the agent), none otherwise.
std::pair<std::optional<uint32_t>, std::optional<uint32_t>> JobUser(const Job& job) {
  if (geteuid() != 0 || job.spec.uid == 0) return {};
  return {job.spec.uid, job.spec.gid};
}

// The home directory and shell of `uid` ("" when it has no passwd entry).
std::pair<std::string, std::string> LoginOf(uint32_t uid) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(4096);
  int rc;
  while ((rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)) == ERANGE) {
    buf.resize(buf.size() * 2);
  }
  if (rc != 0 || found == nullptr) return {};
  return {pw.pw_dir != nullptr ? pw.pw_dir : "", pw.pw_shell != nullptr ? pw.pw_shell : ""};
}

}  // namespace

std::string RunDirectory(const std::string& state_dir, JobRun run) {
  return state_dir + "/jobs/" + run.ToString();
}

Result<std::string> WriteRunScript(const std::string& state_dir, JobRun run,
                                   const std::string& text, std::optional<uint32_t> uid,
                                   std::optional<uint32_t> gid) {
  const std::string dir = RunDirectory(state_dir, run);
  auto fail = [&](const std::string& what) {
    return Internal("cannot " + what + ": " + std::strerror(errno));
  };
  if (mkdir(dir.c_str(), 0711) != 0) {
    if (errno != EEXIST) return fail("create " + dir);
    // Left by a crash: the agent's own (nothing in it is the user's to rename or replace).
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (mkdir(dir.c_str(), 0711) != 0) return fail("create " + dir);
  }
  if (chmod(dir.c_str(), 0711) != 0) return fail("chmod " + dir);
  const std::string script = dir + "/script";
  int fd = open(script.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
  if (fd < 0) return fail("create " + script);
  bool ok = true;
  for (size_t off = 0; ok && off < text.size();) {
    ssize_t w = write(fd, text.data() + off, text.size() - off);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) off += static_cast<size_t>(w);
  }
  ok = ok && fchmod(fd, 0700) == 0 && (!uid || fchown(fd, *uid, gid.value_or(*uid)) == 0);
  int err = errno;
  close(fd);
  errno = err;
  if (!ok) return fail("write " + script);
  return script;
}

Launcher::Launcher(const AgentConfig& config, ProcessSupervisor& supervisor, NodeMonitor* node,
                   std::vector<GpuInfo> gpus, const Clock& clock)
    : config_(config), clock_(clock), supervisor_(supervisor), node_(node), gpus_(std::move(gpus)) {}

StartedProcess Launcher::Started(JobRun run, uint32_t step, uint32_t task) const {
  for (const auto& p : supervisor_.Running()) {
    if (p.job == run.job && p.generation == run.generation && p.step == step && p.task == task) {
      return {p.pid, ProcessStartTime(p.pid)};
    }
  }
  return {};
}

Result<AgentCore::BatchStarted> Launcher::StartBatch(const Job& job,
                                                     const std::string& cluster_name,
                                                     const std::string& job_credential) {
  const JobRun run{job.id, job.allocation.generation};
  const auto [uid, gid] = JobUser(job);
  CORRAL_ASSIGN_OR_RETURN(std::string script,
                          WriteRunScript(config_.state_dir, run, job.spec.script, uid, gid));
  ProcessSpec spec;
  spec.job = job.id;
  spec.generation = job.allocation.generation;
  spec.argv = {script};
  spec.argv.insert(spec.argv.end(), job.spec.script_args.begin(), job.spec.script_args.end());
  // Distributed training's rendezvous on this, the first node, and the checkpoint directory.
  uint32_t candidate =
      MasterPortCandidate(job.id, config_.master_port_min, config_.master_port_max);
  auto port = PickFreePort(candidate, config_.master_port_min, config_.master_port_max);
  if (!port) CORRAL_LOG(Warn) << "job " << job.id.ToString() << ": " << port.error().message;
  const uint32_t master_port = port ? *port : candidate;
  std::string checkpoint_dir = CheckpointDirectory(job, config_.checkpoint_root);
  JobEnvContext env_ctx{.node_name = config_.name,
                        .controller_url = config_.controller_url,
                        .ca_file = config_.tls_ca,
                        .job_credential = job_credential,
                        .master_addr = RendezvousHost(config_.advertise_host, config_.name),
                        .master_port = master_port,
                        .checkpoint_dir = checkpoint_dir,
                        .cluster_name = cluster_name,
                        .gpus = gpus_};
  if (auto g = job.spec.environment->find("SLURM_GET_USER_ENV");
      g != job.spec.environment.end() && g->second == "1") {
    std::tie(env_ctx.login_home, env_ctx.login_shell) = LoginOf(job.spec.uid);
  }
  spec.env = BuildJobEnvironment(job, env_ctx);
  spec.cwd = job.spec.working_dir;
  SetJobOutputs(job, config_.name, &spec);
  if (spec.stderr_path == spec.stdout_path) spec.stderr_path.clear();
  // A requeued job appends to its output, as in Slurm.
  spec.append = job.spec.append_output || job.restart_count > 0;
  spec.uid = uid;
  spec.gid = gid;
  spec.time_limit = job.time_limit;
  spec.kill_grace = config_.kill_grace;
  spec.warn = job.spec.signal;
  if (Status made = MakeDirectoriesAs(checkpoint_dir, spec.uid, spec.gid); !made) {
    CORRAL_LOG(Warn) << "job " << job.id.ToString()
                     << ": checkpoint directory: " << made.error().message;
  }
  AgentTrace trace;
  if (node_) {
    CORRAL_RETURN_IF_ERROR(node_->PrepareJob(job, &spec));
    trace.cgroup_ready = clock_.Now();
  }
  trace.spawned = clock_.Now();
  if (Status launched = supervisor_.Launch(spec); !launched) {
    if (node_) node_->AbandonJob(run);
    return tl::unexpected<Error>(launched.error());
  }
  // The supervisor's spawn returns once the child has executed the script (a vfork-style
  // clone or posix_spawn).
  trace.exec = clock_.Now();
  return AgentCore::BatchStarted{Started(run, kBatchStepId, 0), master_port, trace};
}

JobEnvContext Launcher::StepContext(const api::StepLaunchRequest& launch,
                                    const std::string& cluster_name) {
  const Job& job = launch.job;
  JobEnvContext ctx{.node_name = config_.name,
                    .controller_url = config_.controller_url,
                    .ca_file = config_.tls_ca,
                    .job_credential = launch.job_credential,
                    .master_addr = launch.master_addr,
                    .master_port = launch.master_port,
                    .checkpoint_dir = CheckpointDirectory(job, config_.checkpoint_root),
                    .cluster_name = cluster_name,
                    .gpus = gpus_};
  const auto [uid, gid] = JobUser(job);
  if (Status made = MakeDirectoriesAs(ctx.checkpoint_dir, uid, gid); !made) {
    CORRAL_LOG(Warn) << "job " << job.id.ToString() << " step " << launch.step
                     << ": checkpoint directory: " << made.error().message;
  }
  return ctx;
}

Result<StartedProcess> Launcher::StartTask(const api::StepLaunchRequest& launch,
                                           const StepTask& task, const JobEnvContext& ctx,
                                           StepOutputForwarder* forwarder) {
  const Job& job = launch.job;
  const StepSpec& step = launch.spec;
  ProcessSpec spec;
  spec.job = job.id;
  spec.generation = job.allocation.generation;
  spec.step = launch.step;
  spec.task = task.rank;
  spec.env = BuildTaskEnvironment(job, launch.step, step, launch.layout, task, ctx);
  spec.cwd = step.working_dir.empty() ? job.spec.working_dir : step.working_dir;
  spec.argv = step.argv;
  std::tie(spec.uid, spec.gid) = JobUser(job);  // the job's, whatever the step says
  // In a container the program is the image's, found in its PATH.
  const bool contained = !step.container.image.empty();
  if (!contained) {
    std::string path_var;
    for (const auto& kv : spec.env) {
      if (kv.rfind("PATH=", 0) == 0) path_var = kv.substr(5);
    }
    CORRAL_ASSIGN_OR_RETURN(
        spec.argv[0], ResolveProgram(step.argv.at(0), path_var, spec.cwd, spec.uid, spec.gid));
  }
  // The job's time limit, counted from the job's start (so that a new limit for the job,
  // `SetTimeLimit`, applies to the tasks as it does to the batch script), and its warning
  // signal unless that is for the batch script only. A step started after the job's warning
  // time does not get the warning at once (see `ProcessSpec::warn`).
  spec.time_limit = kUnlimited;
  spec.limit_start = job.start_time;  // also for a limit set later on an unlimited job
  if (job.time_limit != kUnlimited && job.time_limit > Duration(0)) {
    spec.time_limit = RunDeadlineLimit(job);  // plus the time the run was suspended
  }
  spec.kill_grace = config_.kill_grace;
  if (!job.spec.signal.batch_only && job.spec.signal.signal != 0) spec.warn = job.spec.signal;
  std::pair<int, int> pipes{-1, -1};
  int tty_holder = -1;  // the terminal's slave, open until the task has it
  if (step.pty) {
    // srun --pty: task 0 in a terminal (its first size from srun's SLURM_PTY_WIN_ROW/COL, as
    // slurmstepd takes it); the other tasks' stdin, stdout and stderr are /dev/null.
    if (task.rank == 0 && forwarder != nullptr) {
      auto dimension = [&](const char* name, uint32_t fallback) {
        auto it = step.environment.find(name);
        auto v = it == step.environment.end() ? std::nullopt : ParseUint(it->second);
        return v && *v > 0 && *v <= 0xFFFF ? static_cast<uint32_t>(*v) : fallback;
      };
      CORRAL_ASSIGN_OR_RETURN(
          auto slave, forwarder->AddPtyTask(task.rank, spec.uid, dimension("SLURM_PTY_WIN_ROW", 24),
                                            dimension("SLURM_PTY_WIN_COL", 80)));
      spec.tty_path = slave.path;
      tty_holder = slave.fd;
    }
  } else if (forwarder != nullptr) {
    CORRAL_ASSIGN_OR_RETURN(pipes, forwarder->AddTask(task.rank));
    spec.stdout_fd = pipes.first;
    spec.stderr_fd = pipes.second;
  } else if (!step.stdout_path.empty()) {
    OutputPatternValues values{.job_id = job.id.value,
                               .array_job_id = job.array_job_id.value,
                               .array_task_id = job.array_task_id,
                               .step_id = launch.step,
                               .job_name = job.spec.name,
                               .user = job.spec.user,
                               .node_name = config_.name,
                               .node_index = task.node_rank,
                               .task_id = task.rank};
    spec.stdout_path = ResolveOutputPath(step.stdout_path, values, spec.cwd);
    if (!step.stderr_path.empty()) {
      spec.stderr_path = ResolveOutputPath(step.stderr_path, values, spec.cwd);
    }
  } else {
    // Like the batch script: into the job's own output files, appended.
    SetJobOutputs(job, config_.name, &spec);
    spec.append = true;
  }
  // The job's cgroup on this node (made by its first task here, unless the batch step
  // runs here), its CPUs and device rules.
  if (node_) {
    CORRAL_RETURN_IF_ERROR(
        node_->PrepareTask(job, {.spec = step.container, .gpus = task.gpus}, &spec));
  } else if (contained) {
    return FailedPrecondition("containers need the node monitor");
  }
  Status launched = supervisor_.Launch(spec);
  if (tty_holder >= 0) close(tty_holder);
  if (pipes.first >= 0) {
    close(pipes.first);
    close(pipes.second);
  }
  CORRAL_RETURN_IF_ERROR(launched);
  return Started({job.id, spec.generation}, launch.step, task.rank);
}

Status Launcher::Signal(const SignalOrder& order) {
  const JobId job = order.run.job;
  const Generation gen = order.run.generation;
  Status s;
  // `scontrol suspend|resume`: the run's cgroup frozen or thawed stops or continues every
  // process of the run here, those that left their process group too; the signals to the
  // groups are the fallback without a cgroup freezer. A cancel thaws it first, so that its
  // SIGTERM is handled in the grace time.
  if (node_ != nullptr && order.step == kAllSteps && !order.batch_script_only) {
    if (order.suspend && (order.signal == SIGSTOP || order.signal == SIGCONT)) {
      Status frozen = node_->FreezeRun(order.run, order.signal == SIGSTOP);
      if (frozen) return {};
      CORRAL_LOG(Debug) << "job " << job.ToString() << ": " << frozen.error().message
                        << "; signalling its process groups";
    } else if (order.signal == 0) {
      (void)node_->FreezeRun(order.run, false);
    }
  }
  if (order.batch_script_only) {
    s = SignalBatchScript(order.run, order.signal);
  } else if (order.step == kAllSteps) {
    s = order.signal == 0 ? supervisor_.Cancel(job, gen)
                          : supervisor_.Signal(job, gen, order.signal);
  } else {
    s = order.signal == 0 ? supervisor_.CancelStep(job, gen, order.step)
                          : supervisor_.SignalStep(job, gen, order.step, order.signal);
  }
  if (!s && order.missing_ok && s.error().code == ErrorCode::kNotFound) return {};
  return s;
}

Status Launcher::SignalBatchScript(JobRun run, int signal) {
  for (const auto& p : supervisor_.Running()) {
    if (p.job != run.job || p.generation != run.generation || p.step != kBatchStepId) continue;
    if (kill(p.pid, signal) < 0 && errno != ESRCH) {
      return Internal("job " + run.job.ToString() + ": kill: " + std::strerror(errno));
    }
    return {};
  }
  return NotFound("job " + run.job.ToString() + "." + run.generation.ToString() +
                  ": no such process");
}

}  // namespace corral::agent
