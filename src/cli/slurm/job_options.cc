#include "cli/slurm/internal/job_options.h"

#include <algorithm>
#include <cctype>

#include "cli/slurm/begin_time.h"
#include "cli/slurm/dependency.h"
#include "cli/slurm/internal/job_builder.h"
#include "cli/slurm/option_values.h"
#include "core/array_spec.h"
#include "core/duration.h"
#include "core/hostlist.h"
#include "core/resources.h"
#include "core/strings.h"

namespace corral::slurm::internal {
namespace {

using B = JobBuilder;
using U = OptionUse;

// Handlers shared by many entries.

// An option Corral does not support: refused by name, with its source.
Status Refuse(B& b, const U& u) { return b.Unsupported("--" + u.name, u.Where()); }

// An option without effect on Corral (it tunes what Corral does not model): accepted, listed.
Status Ignore(B& b, const U& u) {
  b.req.client.ignored.push_back("--" + u.name + (u.has_value ? "=" + u.value : ""));
  return {};
}

// "CMD: error: MESSAGE" from a value parser's error, with the source; the parser's code kept.
Status ParserError(const B& b, const Error& e, const U& u) {
  return MakeError(e.code,
                   std::string(CommandName(b.command)) + ": error: " + e.message + u.Where());
}

// Client side.

Status Help(B& b, const U&) {
  b.req.client.help = true;
  return {};
}
Status Usage(B& b, const U&) {
  b.req.client.usage = true;
  return {};
}
Status Version(B& b, const U&) {
  b.req.client.version = true;
  return {};
}
Status Wrap(B& b, const U& u) {
  if (u.source == Source::kCommandLine) {
    b.req.client.wrap = u.value;
  } else {
    b.req.warnings.push_back(std::string(CommandName(b.command)) + ": Warning: --wrap is ignored" +
                             u.Where());
  }
  return {};
}
Status Parsable(B& b, const U&) {
  b.req.client.parsable = true;
  return {};
}
Status TestOnly(B& b, const U&) {
  b.req.client.test_only = true;
  return {};
}
Status Quiet(B& b, const U&) {
  b.req.client.quiet = true;
  return {};
}
Status Verbose(B& b, const U&) {
  ++b.req.client.verbose;
  return {};
}
Status Wait(B& b, const U& u) {
  if (b.command != Command::kSbatch) return Refuse(b, u);  // srun's --wait=SECONDS
  b.req.client.wait = true;
  return {};
}

// The job.

Status JobName(B& b, const U& u) {
  b.job_name = u.value;
  return {};
}
Status Account(B& b, const U& u) {
  b.req.spec.account = u.value;
  return {};
}
Status Qos(B& b, const U& u) {
  b.req.spec.qos = u.value;
  return {};
}
Status Partition(B& b, const U& u) {
  b.req.spec.partitions = SplitNonEmpty(u.value, ',');
  return {};
}
Status Reservation(B& b, const U& u) {
  b.req.spec.reservation = u.value;
  return {};
}
Status Comment(B& b, const U& u) {
  b.req.spec.comment = u.value;
  return {};
}
Status MailUser(B& b, const U& u) {
  b.req.spec.mail_user = u.value;
  return {};
}
Status MailType(B& b, const U& u) {
  // Repeated ones add up, across directives and the command line, as in Slurm 22.05.
  auto types = AddMailTypes(b.req.spec.mail_type, u.value);
  if (!types) return b.BadValue(u, types.error().message);
  b.req.spec.mail_type = *types;
  return {};
}
Status Array(B& b, const U& u) {
  if (auto a = ParseArraySpec(u.value); !a.has_value()) return b.Err(a.error().message + u.Where());
  b.req.spec.array = u.value;
  return {};
}
Status Dependency(B& b, const U& u) {
  auto d = ParseDependencySpec(u.value);
  if (!d.has_value()) return ParserError(b, d.error(), u);
  b.req.spec.dependencies = std::move(d->dependencies);
  b.req.spec.dependency_any = d->any;
  return {};
}
Status Begin(B& b, const U& u) {
  auto t = ParseBeginTime(u.value, b.ctx.now, b.ctx.utc_offset_seconds);
  if (!t.has_value()) return b.Err(t.error().message + u.Where());
  b.req.spec.begin_time = *t;
  return {};
}
Status Signal(B& b, const U& u) {
  auto s = ParseSignalSpec(u.value);
  if (!s.has_value()) return ParserError(b, s.error(), u);
  b.req.spec.signal = *s;
  return {};
}
Status Time(B& b, const U& u) {
  auto d = ParseTimeLimit(u.value);
  if (d.has_value() && b.ctx.exact_time_limits && *d != kUnlimited) d = ParseSlurmDuration(u.value);
  if (!d.has_value()) return b.Err("Invalid --time specification" + u.Where());
  b.req.spec.time_limit = *d;
  return {};
}
Status Requeue(B& b, const U&) {
  b.req.spec.requeue = true;
  return {};
}
Status NoRequeue(B& b, const U&) {
  b.req.spec.requeue = false;
  return {};
}
Status Hold(B& b, const U&) {
  b.req.spec.hold = true;
  return {};
}
Status Nice(B& b, const U& u) {
  if (!u.has_value || u.value.empty()) {
    b.req.spec.nice = 100;
    return {};
  }
  auto n = ParseNice(u.value);
  if (!n.has_value()) return b.BadValue(u, n.error().message);
  b.req.spec.nice = *n;
  return {};
}

// Resources.

Status Nodes(B& b, const U& u) {
  auto n = ParseNodeCount(u.value);
  if (!n.has_value()) return b.Err("invalid node count `" + u.value + "'" + u.Where());
  b.req.spec.resources.nodes = n->min;
  b.req.spec.resources.nodes_max = n->max;
  b.nodes_set = true;
  return {};
}
Status Ntasks(B& b, const U& u) {
  CORRAL_RETURN_IF_ERROR(b.Count(u, &b.req.spec.resources.ntasks, false));
  b.ntasks_set = true;
  return {};
}
Status NtasksPerNode(B& b, const U& u) {
  return b.Count(u, &b.req.spec.resources.ntasks_per_node, false);
}
Status CpusPerTask(B& b, const U& u) {
  CORRAL_RETURN_IF_ERROR(b.Count(u, &b.req.spec.resources.cpus_per_task, false));
  b.cpus_set = true;
  return {};
}
Status CpusPerGpu(B& b, const U& u) {
  return b.Count(u, &b.req.spec.resources.cpus_per_gpu, false);
}

// --mem (0), --mem-per-cpu (1), --mem-per-gpu (2).
template <int kWhich>
Status Memory(B& b, const U& u) {
  auto mb = ParseMemoryMb(u.value);
  if (!mb.has_value()) return b.BadValue(u, "expected a size with an optional K, M, G or T suffix");
  ResourceRequest& r = b.req.spec.resources;
  uint64_t* fields[] = {&r.mem_per_node_mb, &r.mem_per_cpu_mb, &r.mem_per_gpu_mb};
  *fields[kWhich] = kWhich == 0 && *mb == 0 ? kWholeNodeMemory : *mb;
  // Directives count as the command line here, as in Slurm.
  b.mem_set[kWhich] = u.source == Source::kEnvironment ? 1 : 2;
  return {};
}

// --gpus (0), --gpus-per-node (1), --gpus-per-task (2).
template <int kWhich>
Status Gpus(B& b, const U& u) {
  auto g = ParseGpuCount(u.value);
  if (!g.has_value()) return b.BadValue(u, g.error().message);
  ResourceRequest& r = b.req.spec.resources;
  if (!g->type.empty()) r.gpu_type = g->type;
  uint32_t* fields[] = {&r.gpus, &r.gpus_per_node, &r.gpus_per_task};
  *fields[kWhich] = g->count;
  b.gpus_env[kWhich] = u.value;  // Slurm's sbatch exports these options as given ("a100:4")
  return {};
}

Status Gres(B& b, const U& u) {
  b.gpus_env[1].clear();  // --gres sets no SLURM_GPUS_PER_NODE
  auto g = ParseGres(u.value);
  if (!g.has_value() && g.error().code == ErrorCode::kUnimplemented) {
    return MakeError(ErrorCode::kUnimplemented, std::string(CommandName(b.command)) +
                                                    ": error: generic resource \"" +
                                                    g.error().message + "\" (--gres=" + u.value +
                                                    ") is not supported by Corral");
  }
  if (!g.has_value()) return b.BadValue(u, g.error().message);
  b.req.spec.resources.gpus_per_node = g->count;
  if (!g->type.empty()) b.req.spec.resources.gpu_type = g->type;
  return {};
}

Status Exclusive(B& b, const U& u) {
  if (u.has_value && !u.value.empty() && Lower(u.value) != "exclusive") {
    return b.Unsupported("--exclusive=" + u.value, u.Where());
  }
  b.req.spec.resources.exclusive = true;
  return {};
}
Status Constraint(B& b, const U& u) {
  b.req.spec.resources.constraint = u.value;
  return {};
}

// --nodelist (true), --exclude (false).
template <bool kNodelist>
Status Hosts(B& b, const U& u) {
  if (u.value.find('/') != std::string::npos) {
    return b.Unsupported("--" + u.name + " with a host file (\"" + u.value + "\")", u.Where());
  }
  auto hosts = ExpandHostList(u.value, 100000);
  if (!hosts.has_value()) return b.BadValue(u, hosts.error().message);
  (kNodelist ? b.req.spec.resources.nodelist : b.req.spec.resources.exclude) = std::move(*hosts);
  return {};
}

// Input, output, directories.

// --output (true), --error (false).
template <bool kOutput>
Status OutputPath(B& b, const U& u) {
  (kOutput ? b.req.spec.stdout_path : b.req.spec.stderr_path) =
      Lower(u.value) == "none" ? "/dev/null" : u.value;
  return {};
}
Status Input(B& b, const U& u) {
  b.req.client.input = Lower(u.value) == "none" ? "/dev/null" : u.value;
  if (b.command == Command::kSbatch && b.req.client.input != "/dev/null") {
    return b.Unsupported("--input=" + u.value + " (a batch job's stdin other than /dev/null)",
                         u.Where());
  }
  return {};
}
Status OpenMode(B& b, const U& u) {
  const std::string& v = u.value;
  char m = v.empty() ? 0 : static_cast<char>(std::tolower(static_cast<unsigned char>(v[0])));
  if (m != 'a' && m != 't') return b.Err("Invalid --open-mode argument: " + v + u.Where());
  b.open_mode = m;
  b.req.spec.append_output = m == 'a';
  return {};
}
Status Chdir(B& b, const U& u) {
  const std::string& v = u.value;
  b.req.spec.working_dir = !v.empty() && v.front() == '/' ? v : b.ctx.cwd + "/" + v;
  return {};
}
Status Export(B& b, const U& u) {
  b.export_value = u.value;
  return {};
}

// pyxis: the image, workdir and name take the last value given (pyxis refuses a second,
// different one); mounts and variable names add up, as in pyxis.

// Appends the items of `list` not already in `to`.
void AddUnique(std::vector<std::string>& to, const std::string& list) {
  for (auto& item : SplitNonEmpty(list, ',')) {
    if (std::find(to.begin(), to.end(), item) == to.end()) to.push_back(item);
  }
}

Status ContainerImage(B& b, const U& u) {
  if (u.value.empty()) return b.Err("--container-image: argument required" + u.Where());
  b.req.spec.container.image = u.value;
  return {};
}
Status ContainerMounts(B& b, const U& u) {
  AddUnique(b.req.spec.container.mounts, u.value);
  return {};
}
Status ContainerWorkdir(B& b, const U& u) {
  b.req.spec.container.workdir = u.value;
  return {};
}
Status ContainerName(B& b, const U& u) {
  if (u.value.empty()) return b.Err("--container-name: argument required" + u.Where());
  b.req.spec.container.name = u.value;
  return {};
}
Status ContainerEnv(B& b, const U& u) {
  AddUnique(b.req.spec.container.env, u.value);
  return {};
}
Status MountHome(B& b, const U&) {
  b.req.spec.container.mount_home = true;
  return {};
}
Status NoMountHome(B& b, const U&) {
  b.req.spec.container.mount_home = false;
  return {};
}

// Steps and allocations (client side).

Status GpuBind(B& b, const U& u) {
  b.req.client.gpu_bind = u.value;
  return {};
}
Status Distribution(B& b, const U& u) {
  std::string lower = Lower(u.value);
  if (lower.rfind("block", 0) != 0 && lower.rfind("cyclic", 0) != 0) {
    return b.Unsupported("--distribution=" + u.value, u.Where());
  }
  b.req.client.distribution = u.value;
  return {};
}
Status Immediate(B& b, const U& u) {
  uint32_t secs = 0;
  if (u.has_value && !u.value.empty()) CORRAL_RETURN_IF_ERROR(b.Count(u, &secs, true));
  b.req.client.immediate = secs;
  return {};
}
Status Jobid(B& b, const U& u) {
  if (!AllDigits(u.value) || u.value.size() > 18) return b.BadValue(u, "expected a job id");
  b.req.client.jobid = std::stoull(u.value);
  return {};
}
Status Relative(B& b, const U& u) {
  uint32_t n = 0;
  CORRAL_RETURN_IF_ERROR(b.Count(u, &n, true));
  b.req.client.relative = n;
  return {};
}
Status KillOnBadExit(B& b, const U& u) {
  b.req.client.kill_on_bad_exit = !(u.has_value && u.value == "0");
  return {};
}

// A flag of `ClientOptions`.
template <bool ClientOptions::*kFlag>
Status SetFlag(B& b, const U&) {
  b.req.client.*kFlag = true;
  return {};
}

constexpr Arg kNa = Arg::kNa, kNo = Arg::kNo, kReq = Arg::kReq, kOpt = Arg::kOpt;

constexpr JobOption kOptions[] = {
    {"accel-bind", 0, kNa, kReq, kNa, Refuse},
    {"account", 'A', kReq, kReq, kReq, Account, "NAME", "charge the job to account NAME"},
    {"acctg-freq", 0, kReq, kReq, kReq, Ignore},
    {"array", 'a', kReq, kNa, kNa, Array, "SPEC", "a job array: 0-15, 1,3,5, 0-31:2, 0-99%4"},
    {"batch", 0, kReq, kNa, kNa, Refuse},
    {"bb", 0, kReq, kReq, kReq, Refuse},
    {"bbf", 0, kReq, kReq, kReq, Refuse},
    {"bcast", 0, kNa, kOpt, kNa, Refuse},
    {"bcast-exclude", 0, kNa, kReq, kNa, Refuse},
    {"begin", 'b', kReq, kReq, kReq, Begin, "TIME",
     "start no earlier than TIME (16:00, now+1hour, 2026-11-29T16:00)"},
    {"bell", 0, kNa, kNa, kNo, Ignore},
    {"chdir", 'D', kReq, kReq, kReq, Chdir, "DIR", "the working directory of the job"},
    {"cluster", 'M', kReq, kReq, kReq, Refuse},
    {"cluster-constraint", 0, kReq, kReq, kReq, Refuse},
    {.name = "clusters", .sbatch = kReq, .srun = kReq, .salloc = kReq, .alias_of = "cluster"},
    {"comment", 0, kReq, kReq, kReq, Comment, "TEXT", "a comment, shown by scontrol and sacct"},
    {"compress", 0, kNa, kOpt, kNa, Refuse},
    {"constraint", 'C', kReq, kReq, kReq, Constraint, "LIST", "nodes with these features"},
    {"container", 0, kReq, kReq, kReq, Refuse},
    {"container-entrypoint", 0, kNo, kNo, kNo, Refuse},
    {"container-env", 0, kReq, kReq, kReq, ContainerEnv, "NAMES",
     "pyxis: variables passed into the container"},
    {"container-image", 0, kReq, kReq, kReq, ContainerImage, "IMAGE",
     "pyxis: run the tasks in IMAGE ([USER@][REGISTRY#]IMAGE[:TAG])"},
    {"container-mount-home", 0, kNo, kNo, kNo, MountHome, nullptr,
     "pyxis: mount the home directory (the default)"},
    {"container-mounts", 0, kReq, kReq, kReq, ContainerMounts, "SRC:DST[:FLAGS],...",
     "pyxis: bind mounts"},
    {"container-name", 0, kReq, kReq, kReq, ContainerName, "NAME",
     "pyxis: name the container (steps reuse it)"},
    {"container-readonly", 0, kNo, kNo, kNo, Refuse},
    {"container-remap-root", 0, kNo, kNo, kNo, Refuse},
    {"container-save", 0, kReq, kReq, kReq, Refuse},
    {"container-workdir", 0, kReq, kReq, kReq, ContainerWorkdir, "DIR",
     "pyxis: the working directory in the container"},
    {"container-writable", 0, kNo, kNo, kNo, Refuse},
    {"context", 0, kReq, kReq, kReq, Refuse},
    {"contiguous", 0, kNo, kNo, kNo, Refuse},
    {"core-spec", 'S', kReq, kReq, kReq, Refuse},
    {"cores-per-socket", 0, kReq, kReq, kReq, Refuse},
    {"cpu-bind", 0, kNa, kReq, kNa, Ignore},
    {"cpu-freq", 0, kReq, kReq, kReq, Refuse},
    {.name = "cpu_bind", .srun = kReq, .alias_of = "cpu-bind"},
    {"cpus-per-gpu", 0, kReq, kReq, kReq, CpusPerGpu, "N", "CPUs for each GPU"},
    {"cpus-per-task", 'c', kReq, kReq, kReq, CpusPerTask, "N", "CPUs for each task"},
    {"deadline", 0, kReq, kReq, kReq, Refuse},
    {"debugger-test", 0, kNa, kNo, kNa, Refuse},
    {"delay-boot", 0, kReq, kReq, kReq, Refuse},
    {"dependency", 'd', kReq, kReq, kReq, Dependency, "LIST",
     "after other jobs: afterok:ID[:ID...], afterany:..., singleton"},
    {"disable-status", 'X', kNa, kNo, kNa, Ignore},
    {"distribution", 'm', kReq, kReq, kReq, Distribution, "block|cyclic",
     "how tasks are laid out over the nodes"},
    {"epilog", 0, kNa, kReq, kNa, Refuse},
    {"error", 'e', kReq, kReq, kNa, OutputPath<false>, "PATTERN",
     "stderr to this file (%j %A %a %N %u %x %%)"},
    {"exact", 0, kNa, kNo, kNa, SetFlag<&ClientOptions::exact>, nullptr,
     "a step gets only the CPUs it asks for"},
    {"exclude", 'x', kReq, kReq, kReq, Hosts<false>, "HOSTS", "not on these nodes"},
    {"exclusive", 0, kOpt, kOpt, kOpt, Exclusive, "exclusive",
     "whole nodes, shared with no other job"},
    {"export", 0, kReq, kReq, kNa, Export, "ALL|NONE|VARS",
     "the job's environment (VARS: NAME[=VALUE],...)"},
    {"export-file", 0, kReq, kNa, kNa, Refuse},
    {"extra-node-info", 'B', kReq, kReq, kReq, Refuse},
    {"get-user-env", 0, kOpt, kNa, kOpt, Ignore},
    {"gid", 0, kReq, kReq, kReq, Refuse},
    {"gpu-bind", 0, kReq, kReq, kReq, GpuBind, "TYPE", "how tasks are bound to GPUs (srun)"},
    {"gpu-freq", 0, kReq, kReq, kReq, Refuse},
    {"gpus", 'G', kReq, kReq, kReq, Gpus<0>, "[TYPE:]N", "GPUs for the whole job"},
    {"gpus-per-node", 0, kReq, kReq, kReq, Gpus<1>, "[TYPE:]N", "GPUs on each node"},
    {"gpus-per-socket", 0, kReq, kReq, kReq, Refuse},
    {"gpus-per-task", 0, kReq, kReq, kReq, Gpus<2>, "[TYPE:]N", "GPUs for each task"},
    {"gres", 0, kReq, kReq, kReq, Gres, "gpu[:TYPE]:N", "GPUs on each node"},
    {"gres-flags", 0, kReq, kReq, kReq, Ignore},
    {"help", 'h', kNo, kNo, kNo, Help, nullptr, "this help"},
    {"het-group", 0, kNa, kReq, kNa, Refuse},
    {"hint", 0, kReq, kReq, kReq, Ignore},
    {"hold", 'H', kNo, kNo, kNo, Hold, nullptr, "submit the job held (scontrol release)"},
    {"ignore-pbs", 0, kNo, kNa, kNa, Refuse},
    {"immediate", 'I', kNa, kOpt, kOpt, Immediate, "SECS",
     "give up unless the resources come within SECS"},
    {"input", 'i', kReq, kReq, kNa, Input, "PATH", "stdin (a batch job's: none only)"},
    {"interactive", 0, kNa, kNo, kNa, Refuse},
    {"job-name", 'J', kReq, kReq, kReq, JobName, "NAME", "the job's name"},
    {"jobid", 0, kNa, kReq, kNa, Jobid, "ID", "run as a step of job ID"},
    {"kill-command", 'K', kNa, kNa, kOpt, Refuse},
    {"kill-on-bad-exit", 'K', kNa, kOpt, kNa, KillOnBadExit, "0|1",
     "end the step when a task fails"},
    {"kill-on-invalid-dep", 0, kReq, kNa, kNa, Refuse},
    {"label", 'l', kNa, kNo, kNa, SetFlag<&ClientOptions::label>, nullptr,
     "prefix each output line with its task's rank"},
    {"licenses", 'L', kReq, kReq, kReq, Refuse},
    {"mail-type", 0, kReq, kReq, kReq, MailType, "TYPES", "mail on BEGIN, END, FAIL, ALL, ..."},
    {"mail-user", 0, kReq, kReq, kReq, MailUser, "ADDRESS", "where the mail goes"},
    {"mcs-label", 0, kReq, kReq, kReq, Refuse},
    {"mem", 0, kReq, kReq, kReq, Memory<0>, "SIZE",
     "memory on each node (K, M, G, T; 0 = all of it)"},
    {"mem-bind", 0, kReq, kReq, kReq, Ignore},
    {"mem-per-cpu", 0, kReq, kReq, kReq, Memory<1>, "SIZE", "memory for each CPU"},
    {"mem-per-gpu", 0, kReq, kReq, kReq, Memory<2>, "SIZE", "memory for each GPU"},
    {"mincpus", 0, kReq, kReq, kReq, Refuse},
    {"mpi", 0, kNa, kReq, kNa, Ignore},
    {"msg-timeout", 0, kNa, kReq, kNa, Refuse},
    {"multi-prog", 0, kNa, kNo, kNa, Refuse},
    {"network", 0, kReq, kReq, kReq, Refuse},
    {"nice", 0, kOpt, kOpt, kOpt, Nice, "N", "lower the job's priority by N (default 100)"},
    {"no-allocate", 'Z', kNa, kNo, kNa, Refuse},
    {"no-bell", 0, kNa, kNa, kNo, Ignore},
    {"no-container-entrypoint", 0, kNo, kNo, kNo, Refuse},
    {"no-container-mount-home", 0, kNo, kNo, kNo, NoMountHome, nullptr,
     "pyxis: do not mount the home directory"},
    {"no-container-remap-root", 0, kNo, kNo, kNo, Refuse},
    {"no-kill", 'k', kOpt, kOpt, kOpt, Ignore},
    {"no-requeue", 0, kNo, kNa, kNa, NoRequeue, nullptr, "never requeue the job"},
    {"no-shell", 0, kNa, kNa, kNo, SetFlag<&ClientOptions::no_shell>, nullptr,
     "allocate, print the job id and exit"},
    {"nodefile", 'F', kReq, kReq, kReq, Refuse},
    {"nodelist", 'w', kReq, kReq, kReq, Hosts<true>, "HOSTS", "on these nodes (node[1-4],gpu7)"},
    {"nodes", 'N', kReq, kReq, kReq, Nodes, "N[-M]", "N nodes (N to M)"},
    {"ntasks", 'n', kReq, kReq, kReq, Ntasks, "N", "N tasks in all"},
    {"ntasks-per-core", 0, kReq, kReq, kReq, Refuse},
    {"ntasks-per-gpu", 0, kReq, kReq, kReq, Refuse},
    {"ntasks-per-node", 0, kReq, kReq, kReq, NtasksPerNode, "N", "N tasks on each node"},
    {"ntasks-per-socket", 0, kReq, kReq, kReq, Refuse},
    {"ntasks-per-tres", 0, kReq, kReq, kReq, Refuse},
    {"open-mode", 0, kReq, kReq, kNa, OpenMode, "append|truncate", "how output files are opened"},
    {"output", 'o', kReq, kReq, kNa, OutputPath<true>, "PATTERN",
     "stdout to this file (%j %A %a %N %u %x %%)"},
    {"overcommit", 'O', kNo, kNo, kNo, Refuse},
    {"overlap", 0, kNa, kOpt, kNa, SetFlag<&ClientOptions::overlap>, "force",
     "a step may share its CPUs with other steps"},
    {"oversubscribe", 's', kNo, kNo, kNo, Ignore},
    {.name = "pack-group", .srun = kReq, .alias_of = "het-group"},
    {"parsable", 0, kNo, kNa, kNa, Parsable, nullptr, "print the job id only"},
    {"partition", 'p', kReq, kReq, kReq, Partition, "LIST",
     "in the first of these partitions that can run it"},
    {"power", 0, kReq, kReq, kReq, Refuse},
    {"prefer", 0, kReq, kReq, kReq, Refuse},
    {"preserve-env", 'E', kNa, kNo, kNa, Refuse},
    {"priority", 0, kReq, kReq, kReq, Refuse},
    {"profile", 0, kReq, kReq, kReq, Ignore},
    {"prolog", 0, kNa, kReq, kNa, Refuse},
    {"propagate", 0, kOpt, kOpt, kNa, Ignore},
    {"pty", 0, kNa, kNo, kNa, SetFlag<&ClientOptions::pty>, nullptr,
     "task 0 in a pseudo-terminal (srun --pty bash: an interactive shell)"},
    {"qos", 'q', kReq, kReq, kReq, Qos, "NAME", "the quality of service"},
    {"quiet", 'Q', kNo, kNo, kNo, Quiet, nullptr, "print errors only"},
    {"quit-on-interrupt", 0, kNa, kNo, kNa, Refuse},
    {"reboot", 0, kNo, kNo, kNo, Refuse},
    {"relative", 'r', kNa, kReq, kNa, Relative, "N",
     "a step starts at node N of the allocation (0 = the first)"},
    {"requeue", 0, kNo, kNa, kNa, Requeue, nullptr, "requeue the job when its node fails"},
    {"reservation", 0, kReq, kReq, kReq, Reservation, "NAME", "in this reservation"},
    {"resv-ports", 0, kNa, kOpt, kNa, Refuse},
    {"send-libs", 0, kNa, kOpt, kNa, Refuse},
    {"signal", 0, kReq, kReq, kReq, Signal, "[B:]SIG[@SECS]",
     "send SIG SECS (60) before the time limit"},
    {"slurmd-debug", 0, kNa, kReq, kNa, Refuse},
    {"sockets-per-node", 0, kReq, kReq, kReq, Refuse},
    {"spread-job", 0, kNo, kNo, kNo, Refuse},
    {"switches", 0, kReq, kReq, kReq, Refuse},
    {"task-epilog", 0, kNa, kReq, kNa, Refuse},
    {"task-prolog", 0, kNa, kReq, kNa, Refuse},
    {.name = "tasks-per-node",
     .sbatch = kReq,
     .srun = kReq,
     .salloc = kReq,
     .alias_of = "ntasks-per-node"},
    {"test-only", 0, kNo, kNo, kNa, TestOnly, nullptr,
     "check the job against the partitions, submit nothing"},
    {"thread-spec", 0, kReq, kReq, kReq, Refuse},
    {"threads", 'T', kNa, kReq, kNa, Refuse},
    {"threads-per-core", 0, kReq, kReq, kReq, Refuse},
    {"time", 't', kReq, kReq, kReq, Time, "TIME",
     "the time limit (MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]])"},
    {"time-min", 0, kReq, kReq, kReq, Refuse},
    {"tmp", 0, kReq, kReq, kReq, Refuse},
    {"uid", 0, kReq, kReq, kReq, Refuse},
    {"unbuffered", 'u', kNa, kNo, kNa, SetFlag<&ClientOptions::unbuffered>, nullptr,
     "(accepted: output is always forwarded as it comes)"},
    {.name = "usage",
     .letter = 'u',
     .sbatch = kNo,
     .srun = kNo,
     .salloc = kNo,
     .apply = Usage,
     .help = "this help",
     .letter_in = CommandBit(Command::kSalloc)},
    {"use-min-nodes", 0, kNo, kNo, kNo, Refuse},
    {"verbose", 'v', kNo, kNo, kNo, Verbose, nullptr, "more messages"},
    {"version", 'V', kNo, kNo, kNo, Version, nullptr, "print the version"},
    {.name = "wait",
     .letter = 'W',
     .sbatch = kNo,
     .srun = kReq,
     .apply = Wait,
     .help = "wait for the job to end; exit with its status",
     .help_in = CommandBit(Command::kSbatch)},
    {"wait-all-nodes", 0, kReq, kNa, kReq, Refuse},
    {"wckey", 0, kReq, kReq, kReq, Refuse},
    {"whole", 0, kNa, kNo, kNa, SetFlag<&ClientOptions::whole>, nullptr, "a step gets whole nodes"},
    {"wrap", 0, kReq, kNa, kNa, Wrap, "COMMAND", "the script is \"#!/bin/sh\" and COMMAND"},
    {"x11", 0, kNa, kOpt, kOpt, Refuse},
};

// Every entry says what applies it: a handler, or, for an alias, its canonical entry.
constexpr bool EveryEntryHasAHandler() {
  for (const JobOption& o : kOptions) {
    if ((o.apply == nullptr) == (o.alias_of == nullptr)) return false;
  }
  return true;
}
static_assert(EveryEntryHasAHandler(), "a JobOption needs a handler (or is an alias)");

}  // namespace

std::span<const JobOption> JobOptions() { return kOptions; }

const JobOption* FindJobOption(std::string_view name) {
  for (const JobOption& o : kOptions) {
    if (name == o.name) return &o;
  }
  return nullptr;
}

Arg ArgOf(const JobOption& option, Command command) {
  switch (command) {
    case Command::kSbatch:
      return option.sbatch;
    case Command::kSrun:
      return option.srun;
    case Command::kSalloc:
      return option.salloc;
  }
  return Arg::kNa;
}

bool LetterIn(const JobOption& option, Command command) {
  return option.letter != 0 && ArgOf(option, command) != Arg::kNa &&
         (option.letter_in & CommandBit(command)) != 0;
}

bool HelpIn(const JobOption& option, Command command) {
  return option.help != nullptr && ArgOf(option, command) != Arg::kNa &&
         (option.help_in & CommandBit(command)) != 0;
}

}  // namespace corral::slurm::internal
