#include "cli/run.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/random.h>

#include "api/http.h"
#include "api/json_codec.h"
#include "api/step_io.h"
#include "cli/client.h"
#include "cli/internal/command_options.h"
#include "cli/internal/slurm_cli.h"
#include "cli/slurm/environment.h"
#include "cli/step_pty.h"
#include "core/clock.h"
#include "core/credential_env.h"
#include "core/hex.h"
#include "core/hostlist.h"
#include "core/step.h"
#include "core/strings.h"

extern char** environ;

namespace corral::cli {
namespace {

using A = internal::RunArgs;
using slurm::ArgKind;
using slurm::SetTrue;
using slurm::SetValue;

constexpr const char* kUsage =
    "usage: corral run [options] CMD [ARGS...]   (inside a job, like srun)\n";
constexpr const char* kUsageEnd =
    "Every task gets MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK, NODE_RANK,\n"
    "LOCAL_WORLD_SIZE (never over a value exported by the caller) and CORRAL_PROCID,\n"
    "CORRAL_LOCALID, CORRAL_NODEID, CORRAL_STEP_ID, ...\n";

Result<uint32_t> Count(const char* opt, const std::string& v) {
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n <= 0 || n > 1'000'000) {
    return InvalidArgument(std::string("--") + opt + ": \"" + v + "\" is not a valid count");
  }
  return static_cast<uint32_t>(n);
}

Status Nodes(A& s, const std::string& v) {
  // "-N 2" or "-N 2-2" (srun's min-max: the minimum is what counts inside an allocation).
  CORRAL_ASSIGN_OR_RETURN(s.spec.nodes, Count("nodes", v.substr(0, v.find('-'))));
  return {};
}
Status Ntasks(A& s, const std::string& v) {
  CORRAL_ASSIGN_OR_RETURN(s.spec.ntasks, Count("ntasks", v));
  return {};
}
Status NtasksPerNode(A& s, const std::string& v) {
  CORRAL_ASSIGN_OR_RETURN(s.spec.ntasks_per_node, Count("ntasks-per-node", v));
  return {};
}
Status CpusPerTask(A& s, const std::string& v) {
  CORRAL_ASSIGN_OR_RETURN(s.spec.cpus_per_task, Count("cpus-per-task", v));
  return {};
}
Status GpusPerTask(A& s, const std::string& v) {
  std::string count = v.substr(v.rfind(':') == std::string::npos ? 0 : v.rfind(':') + 1);
  CORRAL_ASSIGN_OR_RETURN(s.spec.gpus_per_task, Count("gpus-per-task", count));
  return {};
}
// --nodelist (true), --exclude (false): host lists.
template <bool kNodelist>
Status Hosts(A& s, const std::string& v) {
  auto hosts = ExpandHostList(v, 100000);
  if (!hosts.has_value())
    return InvalidArgument(std::string(kNodelist ? "--nodelist" : "--exclude") + ": " +
                           hosts.error().message);
  (kNodelist ? s.spec.nodelist : s.spec.exclude) = std::move(*hosts);
  return {};
}
Status Relative(A& s, const std::string& v) {
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 0 || n > 1'000'000)
    return InvalidArgument("--relative: \"" + v + "\" is not a node index");
  s.spec.relative = static_cast<int32_t>(n);
  return {};
}
Status KillOnBadExit(A& s, const std::string& v) {
  if (v.empty() || v == "1") {
    s.spec.kill_on_bad_exit = true;
  } else if (v == "0") {
    s.spec.kill_on_bad_exit = false;
  } else {
    return InvalidArgument("--kill-on-bad-exit: expected 0 or 1, got \"" + v + "\"");
  }
  return {};
}
Status ContainerImage(A& s, const std::string& v) {
  if (v.empty()) return InvalidArgument("--container-image: argument required");
  s.spec.container.image = v;
  return {};
}
Status ContainerMounts(A& s, const std::string& v) {
  s.spec.container.mounts.clear();
  for (auto& m : SplitNonEmpty(v, ',')) {
    // SRC[:DST[:FLAGS]], both absolute (the agent maps them onto its runtime).
    std::vector<std::string> parts;
    std::stringstream ms(m);
    for (std::string p; std::getline(ms, p, ':');) parts.push_back(p);
    bool ok = parts.size() >= 1 && parts.size() <= 3;
    for (size_t i = 0; ok && i < std::min<size_t>(parts.size(), 2); ++i)
      ok = !parts[i].empty() && parts[i][0] == '/';
    if (!ok)
      return InvalidArgument("--container-mounts: \"" + m +
                             "\" is not SRC[:DST[:FLAGS]] with absolute paths");
    s.spec.container.mounts.push_back(m);
  }
  return {};
}
Status ContainerWorkdir(A& s, const std::string& v) {
  if (v.empty() || v[0] != '/')
    return InvalidArgument("--container-workdir: \"" + v + "\" is not an absolute path");
  s.spec.container.workdir = v;
  return {};
}
Status ContainerName(A& s, const std::string& v) {
  if (v.empty()) return InvalidArgument("--container-name: argument required");
  s.spec.container.name = v;
  return {};
}
Status ContainerEnv(A& s, const std::string& v) {
  s.spec.container.env = SplitNonEmpty(v, ',');
  return {};
}
Status MountHome(A& s, const std::string&) {
  s.spec.container.mount_home = true;
  return {};
}
Status NoMountHome(A& s, const std::string&) {
  s.spec.container.mount_home = false;
  return {};
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired, kOpt = ArgKind::kOptional;

constexpr slurm::CommandOption<A> kOptions[] = {
    {"nodes", 'N', kReq, Nodes, "N", "the first N nodes of the job (default: all)"},
    {"ntasks", 'n', kReq, Ntasks, "N", "tasks in all (default: the job's, else one per node)"},
    {"ntasks-per-node", 0, kReq, NtasksPerNode, "N", "tasks on each node"},
    {"nodelist", 'w', kReq, Hosts<true>, "HOSTS",
     "run on these nodes of the job (and more with -N)"},
    {"exclude", 'x', kReq, Hosts<false>, "HOSTS", "not on these nodes of the job"},
    {"relative", 'r', kReq, Relative, "N", "start at node N of the job (0 = the first)"},
    {"slurm-env", 0, kNone, SetTrue<&A::spec, &StepSpec::slurm>, nullptr,
     "as srun: Slurm's variables only, no WORLD_SIZE, RANK, MASTER_ADDR, ..."},
    {"cpus-per-task", 'c', kReq, CpusPerTask, "N",
     "CPUs per task (checked against the job's; -O to overcommit)"},
    {"gpus-per-task", 0, kReq, GpusPerTask, "N",
     "bind each task to N of its node's GPUs (CUDA_VISIBLE_DEVICES)"},
    {"overcommit", 'O', kNone, SetTrue<&A::spec, &StepSpec::overcommit>, nullptr,
     "more tasks than the job's CPUs"},
    {"kill-on-bad-exit", 'K', kOpt, KillOnBadExit, "0|1", "end every task as soon as one fails"},
    {"label", 'l', kNone, SetTrue<&A::label>, nullptr,
     "prefix each output line with the task's rank (\"0: \")"},
    {"pty", 0, kNone, SetTrue<&A::spec, &StepSpec::pty>, nullptr,
     "task 0 in a pseudo-terminal, this terminal in raw mode (srun --pty; an interactive shell)"},
    {"unbuffered", 'u', kNone, slurm::Accept<A>, nullptr,
     "(accepted: output is always forwarded as it comes)"},
    {"export", 0, kReq, SetValue<&A::export_mode>, "ALL|NONE|VAR[=value],...",
     "the tasks' environment (default ALL)"},
    {"chdir", 'D', kReq, SetValue<&A::spec, &StepSpec::working_dir>, "DIR",
     "working directory of the tasks (default: the current one)"},
    {"output", 'o', kReq, SetValue<&A::spec, &StepSpec::stdout_path>, "PATTERN",
     "tasks write to files on their nodes (%j %s %t %n %N)"},
    {"error", 'e', kReq, SetValue<&A::spec, &StepSpec::stderr_path>, "PATTERN",
     "the same for stderr"},
    {"jobid", 0, kReq, SetValue<&A::job>, "JOB", "the job (default: $CORRAL_JOB_ID)"},
    {"controller", 0, kReq, SetValue<&A::controller>, "URL", "the controller"},
    {"json", 0, kNone, SetTrue<&A::json>, nullptr, "print the step's record at the end"},
    {"help", 'h', kNone, SetTrue<&A::help>, nullptr, "this help"},
    {"container-image", 0, kReq, ContainerImage, "IMAGE",
     "run each task in IMAGE ([USER@][REGISTRY#]IMAGE[:TAG])"},
    {"container-mounts", 0, kReq, ContainerMounts, "SRC:DST[:FLAGS],...", "bind mounts"},
    {"container-workdir", 0, kReq, ContainerWorkdir, "DIR", "the tasks' directory in it"},
    {"container-name", 0, kReq, ContainerName, "NAME", "name the container (steps reuse it)"},
    {"container-env", 0, kReq, ContainerEnv, "NAME,...", "variables passed into the container"},
    {"container-mount-home", 0, kNone, MountHome, nullptr, "mount the home directory (default)"},
    {"no-container-mount-home", 0, kNone, NoMountHome, nullptr, "do not mount it"},
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

// The tasks' base environment from --export, resolved as sbatch resolves it
// (slurm::ResolveExport: ALL, NONE, names and NAME=value, any case); where not everything is
// exported, the CORRAL_* variables are kept too, as Slurm keeps SLURM_*.
Result<std::map<std::string, std::string>> ExportedEnvironment(const std::string& mode) {
  const std::map<std::string, std::string> process = internal::ProcessEnvironment();
  CORRAL_ASSIGN_OR_RETURN(auto env, slurm::ResolveExport(mode.empty() ? "ALL" : mode, process));
  for (const auto& [name, value] : process) {
    if (name.rfind("CORRAL_", 0) == 0 && !IsCredentialVariable(name)) env.emplace(name, value);
  }
  // An empty map would mean "the job's submitted environment" to the controller.
  if (env.empty()) env["CORRAL_EXPORT_ENV"] = mode;
  return env;
}

std::string RandomToken() {
  unsigned char bytes[16] = {};
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return HexEncode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// Takes the chunks agents send and writes them out line by line, labelled under -l. Only a
// peer that holds the step's I/O secret gets here: the server's TLS needs the key derived from
// it (api/step_io.h).
// Thread-safe (the HTTP server calls it from one thread per connection).
class OutputSink {
 public:
  // `raw`: a terminal's output, written as it comes (no lines, no labels).
  OutputSink(bool label, bool raw) : label_(label), raw_(raw) {}

  void set_width(size_t ntasks) {
    std::lock_guard<std::mutex> lock(mu_);
    width_ = std::to_string(ntasks > 0 ? ntasks - 1 : 0).size();
  }

  api::HttpResponse Handle(const api::HttpRequest& req) {
    api::HttpResponse r;
    auto q = [&](const char* k) {
      auto it = req.query.find(k);
      return it == req.query.end() ? std::string() : it->second;
    };
    uint32_t task = static_cast<uint32_t>(std::strtoul(q("task").c_str(), nullptr, 10));
    bool err = q("stream") == "err";
    bool eof = q("eof") == "1";
    std::lock_guard<std::mutex> lock(mu_);
    std::string& pending = partial_[{task, err}];
    if (raw_) {
      WriteAll(err ? 2 : 1, req.body);
    } else {
      pending += req.body;
    }
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      Emit(task, err, std::string_view(pending).substr(start, nl + 1 - start));
    }
    pending.erase(0, start);
    if (eof) {
      if (!pending.empty()) Emit(task, err, pending);
      pending.clear();
      eofs_.insert({task, err});
      cv_.notify_all();
    }
    r.body = R"({"status":"ok"})";
    return r;
  }

  // Waits until both streams of every task in `tasks` have reached end of file, or `timeout`.
  void WaitForEof(const std::set<uint32_t>& tasks, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] {
      for (uint32_t t : tasks) {
        if (!eofs_.contains({t, false}) || !eofs_.contains({t, true})) return false;
      }
      return true;
    });
    // What never reached end of file (a node went down) is written as it is.
    for (auto& [key, text] : partial_) {
      if (!text.empty()) Emit(key.first, key.second, text);
      text.clear();
    }
  }

 private:
  void Emit(uint32_t task, bool err, std::string_view line) {
    int fd = err ? 2 : 1;
    if (label_) {
      std::string prefix = std::to_string(task);
      if (prefix.size() < width_) prefix.insert(0, width_ - prefix.size(), ' ');
      prefix += ": ";
      std::string out = prefix;
      out += line;
      WriteAll(fd, out);
    } else {
      WriteAll(fd, line);
    }
  }

  const bool label_;
  const bool raw_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t width_ = 1;
  std::map<std::pair<uint32_t, bool>, std::string> partial_;
  std::set<std::pair<uint32_t, bool>> eofs_;
};

// How long `corral run` waits for an unavailable controller (a restart) before giving up.
constexpr std::chrono::seconds kControllerOutage(300);

// The name messages carry: "srun" when srun runs the step (--slurm-env), as Slurm's do.
std::string g_prog = "corral run";

int Fail(const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", g_prog.c_str(), message.c_str());
  return 1;
}

// A terminal step's client side (cli/step_pty.h). Finish() (also on the way out) ends the
// input, stops reading this terminal and puts its settings back, in that order, so that no
// thread waits on another and the server's long polls return at once.
struct PtySession {
  std::unique_ptr<PtyInput> input;
  std::unique_ptr<RawTerminal> raw;
  std::unique_ptr<StdinPump> pump;
  void Finish() {
    if (input) input->Close();
    if (pump) pump->Stop();
    if (raw) raw->Restore();
  }
};

}  // namespace

namespace internal {

std::span<const slurm::CommandOption<RunArgs>> RunOptionTable() { return kOptions; }

}  // namespace internal

int RunStepCommand(int argc, char** argv) {
  internal::RunArgs s;
  slurm::OptionScan scan = slurm::ScanWithTable(
      internal::RunOptionTable(), std::vector<std::string>(argv, argv + argc), "+:", s);
  if (scan.failure) {
    const std::string& bad = scan.failure->last_word;
    if (scan.failure->missing_argument) {
      std::fprintf(stderr, "corral run: error: option \"%s\" needs a value\n", bad.c_str());
    } else {
      std::fprintf(stderr,
                   "corral run: error: unrecognized option \"%s\" (see `corral run --help`)\n",
                   bad.c_str());
    }
    return 2;
  }
  if (scan.error) {
    std::fprintf(stderr, "corral run: error: %s\n", scan.error->message.c_str());
    return 2;
  }
  if (s.help) {
    std::printf("%s%s%s", kUsage, slurm::TableHelp(internal::RunOptionTable()).c_str(), kUsageEnd);
    return 0;
  }
  s.spec.argv = scan.operands;
  if (s.spec.argv.empty()) {
    std::fprintf(stderr, "corral run: error: no command given (see `corral run --help`)\n");
    return 2;
  }
  if (s.spec.slurm) g_prog = "srun";
  std::optional<std::pair<uint16_t, uint16_t>> window;
  if (s.spec.pty) {
    window = isatty(0) ? TerminalSize(0) : std::nullopt;
    if (!window) {
      // As Slurm's srun: without a terminal the option is dropped, with these two lines.
      std::fprintf(stderr,
                   "%s: error: ioctl(TIOCGWINSZ): Inappropriate ioctl for device\n"
                   "%s: error: Not using a pseudo-terminal, disregarding --pty option\n",
                   g_prog.c_str(), g_prog.c_str());
      s.spec.pty = false;
    } else if (!s.spec.stdout_path.empty() || !s.spec.stderr_path.empty()) {
      return Fail("--pty: a terminal's output cannot go to --output/--error files");
    }
  }
  if (s.job.empty()) {
    const char* env = std::getenv("CORRAL_JOB_ID");
    if (env == nullptr || *env == '\0') {
      return Fail("not inside a job (CORRAL_JOB_ID is not set); give --jobid JOB");
    }
    s.job = env;
  }
  auto job = ParseJobIdArg(s.job);
  if (!job) return Fail(job.error().message);
  char cwd[4096];
  if (s.spec.working_dir.empty() && getcwd(cwd, sizeof cwd) != nullptr) s.spec.working_dir = cwd;
  if (!s.spec.working_dir.empty() && s.spec.working_dir[0] != '/' &&
      getcwd(cwd, sizeof cwd) != nullptr) {
    s.spec.working_dir = std::string(cwd) + "/" + s.spec.working_dir;
  }
  auto exported = ExportedEnvironment(s.export_mode);
  if (!exported) return Fail("--export: " + exported.error().message);
  s.spec.environment = std::move(*exported);
  if (s.spec.pty) {
    // As Slurm's srun: the first window size, which the agent gives the terminal.
    s.spec.environment["SLURM_PTY_WIN_ROW"] = std::to_string(window->first);
    s.spec.environment["SLURM_PTY_WIN_COL"] = std::to_string(window->second);
  }
  // Inside the job, its rendezvous port (the batch host checked it was free).
  const char* own_job = std::getenv("CORRAL_JOB_ID");
  const char* port = std::getenv("MASTER_PORT");
  if (own_job != nullptr && own_job == s.job && port != nullptr) {
    s.spec.master_port = static_cast<uint32_t>(std::strtoul(port, nullptr, 10));
  }

  auto client = Client::Connect(s.controller);
  if (!client) return Fail(client.error().message);

  // Signals go to one thread, blocked before any thread starts so that every thread inherits
  // the mask. SIGINT, SIGTERM and SIGHUP cancel the step. SIGUSR1 and SIGUSR2 are ignored: a
  // job's --signal reaches its tasks from their own agents, and this command must not die of
  // the one its batch script's process group gets.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&stop_signals, sig);
  if (s.spec.pty) sigaddset(&stop_signals, SIGWINCH);  // the window's new size goes to the task
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::atomic<bool> done{false};

  // The output server, unless the tasks write to files: TLS with a key derived from a secret
  // of this step (api/step_io.h), which goes to the controller and the agents over TLS only.
  PtySession pty;  // outlives the server, whose handlers use its input
  if (s.spec.pty) pty.input = std::make_unique<PtyInput>();
  std::unique_ptr<api::HttpServer> server;
  std::unique_ptr<OutputSink> sink;
  if (s.spec.stdout_path.empty()) {
    s.spec.io_token = RandomToken();
    sink = std::make_unique<OutputSink>(s.label, s.spec.pty);
    server = std::make_unique<api::HttpServer>(
        api::HttpServerOptions{.tls = api::StepIoServerTls(s.spec.io_token)});
    OutputSink* out = sink.get();
    server->Route("POST", "/io", [out](const api::HttpRequest& req) { return out->Handle(req); });
    if (PtyInput* in = pty.input.get()) {
      server->Route("GET", "/pty", [in](const api::HttpRequest& req) { return in->Handle(req); });
    }
    if (Status st = server->Start("0.0.0.0", 0); !st) return Fail(st.error().message);
    s.spec.io_port = server->port();
    if (s.spec.pty) s.spec.environment["SLURM_PTY_PORT"] = std::to_string(s.spec.io_port);
    if (const char* node = std::getenv("CORRAL_NODENAME"); node != nullptr && own_job == s.job) {
      s.spec.io_node = node;
    }
  }

  // Before the server goes (its long polls return once the input is closed).
  struct PtyFinisher {
    PtySession* p;
    ~PtyFinisher() { p->Finish(); }
  } pty_finisher{&pty};

  auto step = (*client)->CreateStep(*job, s.spec);
  if (!step) return Fail(step.error().message);
  if (sink) sink->set_width(step->tasks.size());
  const uint32_t step_id = step->step;
  if (pty.input) {
    pty.raw = RawTerminal::Enter(0);
    pty.pump = std::make_unique<StdinPump>(0, pty.input.get());
  }

  PtyInput* pty_input = pty.input.get();
  std::thread signals([&stop_signals, &done, controller = s.controller, id = *job, step_id,
                       pty_input] {
    int sig = 0;
    while (sigwait(&stop_signals, &sig) == 0) {
      if (done.load()) return;  // the main thread is done (and sent SIGUSR2)
      if (sig == SIGUSR1 || sig == SIGUSR2) continue;
      if (sig == SIGWINCH) {
        auto size = TerminalSize(0);
        if (pty_input != nullptr && size) pty_input->Resize(size->first, size->second);
        continue;
      }
      std::fprintf(stderr, "%s: cancelling step %s.%u (signal %d)\n", g_prog.c_str(),
                   id.ToString().c_str(), step_id, sig);
      auto other = Client::Connect(controller);
      if (other) (void)(*other)->CancelStep(id, step_id);
    }
  });

  api::StepInfo final_info = *step;
  int status = 0;
  // The controller may restart while the step runs (its steps are stored): wait for it to
  // come back, for a bounded time.
  std::optional<MonoTime> outage;
  auto pause = std::chrono::milliseconds(100);
  while (final_info.state == JobState::kRunning) {
    auto info = (*client)->WaitStep(*job, step_id, 30);
    if (!info) {
      MonoTime now = SystemClock::Get().MonotonicNow();
      if (info.error().code == ErrorCode::kUnavailable &&
          (!outage || now - *outage < kControllerOutage)) {
        if (!outage) {
          std::fprintf(stderr, "%s: %s; retrying for up to %lld s\n", g_prog.c_str(),
                       info.error().message.c_str(),
                       static_cast<long long>(kControllerOutage.count()));
          outage = now;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(2000));
        continue;
      }
      status = Fail(info.error().message);
      break;
    }
    if (outage) std::fprintf(stderr, "%s: the controller is back\n", g_prog.c_str());
    outage.reset();
    pause = std::chrono::milliseconds(100);
    final_info = *info;
  }
  done.store(true);
  pthread_kill(signals.native_handle(), SIGUSR2);
  signals.join();
  if (status != 0) return status;

  if (sink) {
    std::set<uint32_t> started;
    for (const auto& t : final_info.tasks) {
      // A terminal step forwards task 0 only (the others write to /dev/null).
      if (t.message.empty() && (!s.spec.pty || t.task.rank == 0)) started.insert(t.task.rank);
    }
    sink->WaitForEof(started, std::chrono::seconds(10));
    pty.Finish();
    server->Stop();
  }
  for (const auto& t : final_info.tasks) {
    std::string what;
    if (!t.message.empty()) {
      what = t.message;
    } else if (t.signal != 0) {
      what = "Killed by signal " + std::to_string(t.signal);
    } else if (t.exit_code != 0) {
      what = "Exited with exit code " + std::to_string(t.exit_code);
    }
    if (!what.empty()) {
      std::fprintf(stderr, "%s: error: %s: task %u: %s\n", g_prog.c_str(), t.task.node.c_str(),
                   t.task.rank, what.c_str());
    }
  }
  if (s.json) std::printf("%s\n", api::EncodeStepInfo(final_info).c_str());
  std::fflush(stdout);
  if (final_info.state == JobState::kCompleted) return 0;
  return final_info.exit_code != 0 ? std::min(final_info.exit_code, 255) : 1;
}

}  // namespace corral::cli
