#include "agent/exec/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <linux/bpf.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "core/log.h"
#include "core/strings.h"

namespace corral::agent {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `value` to a cgroup file. Returns kInternal naming it.
Status WriteFile(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Internal("cgroup: cannot open " + path + ": " + ErrnoText(errno));
  ssize_t n = write(fd, value.data(), value.size());
  int err = errno;
  close(fd);
  if (n < 0)
    return Internal("cgroup: cannot write \"" + value + "\" to " + path + ": " + ErrnoText(err));
  return {};
}

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// "name value" lines (memory.events, memory.oom_control): the value of `key`, or 0.
uint64_t KeyValue(const std::string& path, const std::string& key) {
  std::istringstream in(ReadAll(path));
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

std::vector<int> Pids(const std::string& dir) {
  std::vector<int> out;
  std::istringstream in(ReadAll(dir + "/cgroup.procs"));
  for (int pid; in >> pid;) out.push_back(pid);
  return out;
}

// A mounted hierarchy and the agent's own cgroup in it.
struct Hierarchy {
  bool v2 = false;
  std::string mount;                  // mount point
  std::string own;                    // the agent's own cgroup directory (mount + path)
  std::set<std::string> controllers;  // v1: the mount's; v2: the own cgroup's available ones
};

// The v2 device program: refuses each denied (type, major, minor), allows the rest.
// Context: struct bpf_cgroup_dev_ctx { u32 access_type (access << 16 | type); u32 major;
// u32 minor; }.
Result<int> LoadDeviceProgram(const std::vector<DeviceNumber>& deny) {
  std::vector<bpf_insn> p;
  auto insn = [&](uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
    bpf_insn i{};
    i.code = code;
    i.dst_reg = dst & 0xf;
    i.src_reg = src & 0xf;
    i.off = off;
    i.imm = imm;
    p.push_back(i);
  };
  insn(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0);       // r2 = ctx->access_type
  insn(BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, 0xFFFF);  // r2 &= 0xffff (the type)
  insn(BPF_LDX | BPF_MEM | BPF_W, 3, 1, 4, 0);       // r3 = ctx->major
  insn(BPF_LDX | BPF_MEM | BPF_W, 4, 1, 8, 0);       // r4 = ctx->minor
  for (const DeviceNumber& d : deny) {
    int32_t type = d.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
    insn(BPF_JMP | BPF_JNE | BPF_K, 2, 0, 4, type);  // skip the 5 below on a mismatch
    insn(BPF_JMP | BPF_JNE | BPF_K, 3, 0, 3, static_cast<int32_t>(d.major));
    insn(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 2, static_cast<int32_t>(d.minor));
    insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);  // r0 = 0: refuse
    insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
  }
  insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1);  // r0 = 1: allow
  insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
  static const char kLicense[] = "GPL";
  bpf_attr attr{};
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = reinterpret_cast<uint64_t>(p.data());
  attr.insn_cnt = static_cast<uint32_t>(p.size());
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  int fd = static_cast<int>(syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr));
  if (fd < 0) return Internal("cgroup: loading the device BPF program: " + ErrnoText(errno));
  return fd;
}

Status AttachDeviceProgram(const std::string& dir, int prog) {
  int cg = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0) return Internal("cgroup: " + dir + ": " + ErrnoText(errno));
  bpf_attr attr{};
  attr.target_fd = static_cast<uint32_t>(cg);
  attr.attach_bpf_fd = static_cast<uint32_t>(prog);
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  int rc = static_cast<int>(syscall(SYS_bpf, BPF_PROG_ATTACH, &attr, sizeof attr));
  int err = errno;
  close(cg);
  if (rc < 0)
    return Internal("cgroup: attaching the device BPF program to " + dir + ": " + ErrnoText(err));
  return {};
}

class JobCgroupImpl final : public JobCgroup {
 public:
  std::vector<std::string> dirs;  // every directory created, deepest last
  std::string kill_v2;            // a v2 directory (cgroup.kill), or ""
  std::string freezer_v1;         // a v1 freezer directory, or ""
  std::string memory_dir;         // where memory is limited, or ""
  bool memory_v2 = false;

  std::vector<std::string> procs_files() const override {
    std::vector<std::string> out;
    for (const auto& d : dirs) out.push_back(d + "/cgroup.procs");
    return out;
  }

  bool OutOfMemory() const override {
    if (memory_dir.empty()) return false;
    if (memory_v2) return KeyValue(memory_dir + "/memory.events", "oom_kill") > 0;
    return KeyValue(memory_dir + "/memory.oom_control", "oom_kill") > 0;
  }

  uint64_t PeakMemoryMb() const override {
    if (memory_dir.empty()) return 0;
    std::string text =
        ReadAll(memory_dir + (memory_v2 ? "/memory.peak" : "/memory.max_usage_in_bytes"));
    try {
      return text.empty() ? 0 : (std::stoull(text) + (1 << 20) - 1) >> 20;
    } catch (const std::exception&) {
      return 0;
    }
  }

  CgroupUsage Usage() const override {
    CgroupUsage u;
    auto number = [](const std::string& text) -> uint64_t {
      try {
        return text.empty() ? 0 : std::stoull(text);
      } catch (const std::exception&) {
        return 0;
      }
    };
    if (!memory_dir.empty()) {
      u.memory_kb =
          number(ReadAll(memory_dir + (memory_v2 ? "/memory.current" : "/memory.usage_in_bytes"))) >>
          10;
      u.memory_peak_kb =
          number(ReadAll(memory_dir + (memory_v2 ? "/memory.peak" : "/memory.max_usage_in_bytes"))) >>
          10;
    }
    if (!kill_v2.empty()) {
      u.cpu_seconds = static_cast<double>(KeyValue(kill_v2 + "/cpu.stat", "usage_usec")) / 1e6;
    }
    std::set<int> pids;
    for (const auto& d : dirs) {
      for (int pid : Pids(d)) pids.insert(pid);
    }
    u.processes = pids.size();
    return u;
  }

  Status Freeze(bool frozen) override {
    if (!kill_v2.empty() && Exists(kill_v2 + "/cgroup.freeze")) {
      return WriteFile(kill_v2 + "/cgroup.freeze", frozen ? "1" : "0");
    }
    if (!freezer_v1.empty()) {
      return WriteFile(freezer_v1 + "/freezer.state", frozen ? "FROZEN" : "THAWED");
    }
    return MakeError(ErrorCode::kUnimplemented, "cgroup: no freezer");
  }

  bool Empty() const {
    for (const auto& d : dirs) {
      if (!Pids(d).empty()) return false;
    }
    return true;
  }

  void KillOnce() {
    if (!kill_v2.empty() && Exists(kill_v2 + "/cgroup.kill")) {
      (void)WriteFile(kill_v2 + "/cgroup.kill", "1");
      return;
    }
    bool frozen =
        !freezer_v1.empty() && WriteFile(freezer_v1 + "/freezer.state", "FROZEN").has_value();
    for (const auto& d : dirs) {
      for (int pid : Pids(d)) kill(pid, SIGKILL);
    }
    if (frozen) (void)WriteFile(freezer_v1 + "/freezer.state", "THAWED");
  }

  // Removes the directories that are empty (rmdir refuses the others); returns whether all
  // are gone. When the job's processes have all exited, as usual, this is all Destroy does.
  bool RemoveEmpty() {
    bool all = true;
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
      if (it->empty()) continue;
      if (rmdir(it->c_str()) == 0 || errno == ENOENT) {
        if (*it == kill_v2) kill_v2.clear();
        if (*it == freezer_v1) freezer_v1.clear();
        it->clear();
      } else {
        all = false;
      }
    }
    std::erase(dirs, std::string());
    return all;
  }

  Status Destroy(Duration timeout, const Clock& clock) override {
    if (RemoveEmpty()) return {};
    MonoTime deadline = clock.MonotonicNow() + timeout;
    while (true) {
      if (Empty()) break;
      KillOnce();
      if (clock.MonotonicNow() > deadline) {
        return MakeError(ErrorCode::kDeadlineExceeded,
                         "cgroup " + (dirs.empty() ? std::string("?") : dirs.front()) +
                             ": processes remain after SIGKILL");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // rmdir can fail briefly with EBUSY while the kernel finishes tearing tasks down.
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
      while (rmdir(it->c_str()) != 0 && errno != ENOENT) {
        if (clock.MonotonicNow() > deadline) {
          return MakeError(ErrorCode::kDeadlineExceeded,
                           "cgroup " + *it + ": rmdir: " + ErrnoText(errno));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    return {};
  }
};

class CgroupManagerImpl final : public CgroupManager {
 public:
  // Removes the node's directories when no job is left in them, and the parent directory when
  // no other node uses it (rmdir refuses non-empty directories).
  ~CgroupManagerImpl() override {
    for (const auto& b : Bases()) {
      if (rmdir(b.c_str()) == 0) rmdir(b.substr(0, b.rfind('/')).c_str());
    }
  }

  // The base directory (OWN/<parent>/<node>) of each hierarchy used, and which one serves
  // which function ("" = none).
  std::vector<Hierarchy> hierarchies;
  std::map<std::string, std::string> base;                           // hierarchy mount -> base dir
  std::string memory, cpuset, cpu, pids, devices, kill_v2, freezer;  // base dirs
  bool memory_v2 = false, cpuset_v2 = false, cpu_v2 = false, pids_v2 = false, devices_bpf = false;
  const Clock* clock = nullptr;
  // Read once at Open, so that making a job's cgroup only creates and writes (every job pays
  // for it): the base's CPUs and memory nodes (what a v1 cpuset starts from), and whether
  // swap can be limited.
  std::string base_cpus, base_mems;
  bool swap_file = false;

  std::string Describe() const override {
    std::vector<std::string> v1, v2;
    auto add = [&](const std::string& dir, bool is_v2, const char* what) {
      if (!dir.empty()) (is_v2 ? v2 : v1).push_back(what);
    };
    add(memory, memory_v2, "memory");
    add(cpuset, cpuset_v2, "cpuset");
    if (cpuset.empty()) add(cpu, cpu_v2, "cpu quota");
    add(pids, pids_v2, "pids");
    add(devices, devices_bpf, devices_bpf ? "devices (BPF)" : "devices");
    add(kill_v2, true, "kill");
    if (kill_v2.empty()) add(freezer, false, "freezer");
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    std::string s;
    if (!v1.empty()) s = "cgroup v1 (" + list(v1) + ")";
    if (!v2.empty()) s += std::string(s.empty() ? "" : " + ") + "cgroup v2 (" + list(v2) + ")";
    return s;
  }

  // The distinct base directories in use.
  std::vector<std::string> Bases() const {
    std::set<std::string> s;
    for (const auto& d : {memory, cpuset, cpu, pids, devices, kill_v2, freezer}) {
      if (!d.empty()) s.insert(d);
    }
    return {s.begin(), s.end()};
  }

  Result<std::unique_ptr<JobCgroup>> Create(const JobCgroupSpec& spec) override {
    auto cg = std::make_unique<JobCgroupImpl>();
    std::string name = "job_" + spec.job.ToString() + "_" + spec.generation.ToString();
    for (const auto& b : Bases()) {
      std::string dir = b + "/" + name;
      int rc = mkdir(dir.c_str(), 0755);
      if (rc != 0 && errno == EEXIST) {
        // Left by a previous agent that ran this run (a crash): kill it and start over.
        JobCgroupImpl old;
        old.dirs = {dir};
        old.kill_v2 = b == kill_v2 ? dir : "";
        old.freezer_v1 = b == freezer ? dir : "";
        (void)old.Destroy(Seconds(2), *clock);
        rc = mkdir(dir.c_str(), 0755);
      }
      if (rc != 0 && errno != EEXIST) {
        Status s = Internal("cgroup: cannot create " + dir + ": " + ErrnoText(errno));
        (void)cg->Destroy(Seconds(1), *clock);
        return tl::unexpected<Error>(s.error());
      }
      cg->dirs.push_back(dir);
    }
    auto dir_of = [&](const std::string& b) { return b.empty() ? std::string() : b + "/" + name; };
    cg->kill_v2 = dir_of(kill_v2);
    cg->freezer_v1 = dir_of(freezer);
    auto undo = [&](const Error& e) -> Result<std::unique_ptr<JobCgroup>> {
      (void)cg->Destroy(Seconds(1), *clock);
      return tl::unexpected<Error>(e);
    };
    if (!cpuset.empty() && (!spec.cpus.empty() || !cpuset_v2)) {
      // A v1 cpuset starts empty and takes no task so: the job's CPUs, else the base's, and
      // memory nodes before any task joins (v2 takes both, and needs neither).
      std::string d = dir_of(cpuset);
      std::string cpus = spec.cpus.empty() ? base_cpus : JoinNumbers(spec.cpus);
      std::string mems = spec.mems.empty() ? base_mems : JoinNumbers(spec.mems);
      if (!mems.empty()) {
        if (Status s = WriteFile(d + "/cpuset.mems", mems); !s) return undo(s.error());
      }
      if (!cpus.empty()) {
        if (Status s = WriteFile(d + "/cpuset.cpus", cpus); !s) return undo(s.error());
      }
    } else if (!cpu.empty() && spec.cpu_count > 0) {
      std::string d = dir_of(cpu);
      uint64_t period = 100000;
      Status s = cpu_v2
                     ? WriteFile(d + "/cpu.max", std::to_string(period * spec.cpu_count) + " " +
                                                     std::to_string(period))
                     : WriteFile(d + "/cpu.cfs_quota_us", std::to_string(period * spec.cpu_count));
      if (!s) return undo(s.error());
    }
    if (!memory.empty() && spec.memory_mb > 0) {
      std::string d = dir_of(memory);
      std::string bytes = std::to_string(spec.memory_mb << 20);
      cg->memory_dir = d;
      cg->memory_v2 = memory_v2;
      if (memory_v2) {
        if (Status s = WriteFile(d + "/memory.max", bytes); !s) return undo(s.error());
        if (swap_file) (void)WriteFile(d + "/memory.swap.max", "0");
      } else {
        if (Status s = WriteFile(d + "/memory.limit_in_bytes", bytes); !s) return undo(s.error());
        // Swap may not bypass the limit (the file exists only with swap accounting).
        if (swap_file) (void)WriteFile(d + "/memory.memsw.limit_in_bytes", bytes);
      }
    } else if (!memory.empty()) {
      cg->memory_dir = dir_of(memory);
      cg->memory_v2 = memory_v2;
    }
    if (!pids.empty() && spec.pids_max > 0) {
      if (Status s = WriteFile(dir_of(pids) + "/pids.max", std::to_string(spec.pids_max)); !s)
        return undo(s.error());
    }
    if (!devices.empty() && !spec.deny.empty()) {
      std::string d = dir_of(devices);
      if (devices_bpf) {
        auto prog = LoadDeviceProgram(spec.deny);
        if (!prog) return undo(prog.error());
        Status s = AttachDeviceProgram(d, *prog);
        close(*prog);  // the attachment holds the program
        if (!s) return undo(s.error());
      } else {
        for (const DeviceNumber& n : spec.deny) {
          std::string rule = std::string(1, n.type) + " " + std::to_string(n.major) + ":" +
                             std::to_string(n.minor) + " rwm";
          if (Status s = WriteFile(d + "/devices.deny", rule); !s) return undo(s.error());
        }
      }
    }
    return std::unique_ptr<JobCgroup>(std::move(cg));
  }

  void KillStale() override {
    for (const auto& b : Bases()) {
      DIR* dir = opendir(b.c_str());
      if (dir == nullptr) continue;
      std::vector<std::string> stale;
      while (dirent* e = readdir(dir)) {
        std::string n = e->d_name;
        if (n.rfind("job_", 0) == 0) stale.push_back(b + "/" + n);
      }
      closedir(dir);
      for (const auto& d : stale) {
        CORRAL_LOG(Warn) << "killing cgroup " << d << " left by a previous agent run";
        JobCgroupImpl old;
        old.dirs = {d};
        old.kill_v2 = b == kill_v2 ? d : "";
        old.freezer_v1 = b == freezer ? d : "";
        (void)old.Destroy(Seconds(5), *clock);
      }
    }
  }
};

// Splits "a,b,c" into its non-empty parts.
std::set<std::string> SplitSet(const std::string& s, char sep) {
  std::vector<std::string> parts = SplitNonEmpty(s, sep);
  return {parts.begin(), parts.end()};
}

}  // namespace

uint64_t JobMemoryLimitMb(const CgroupConfig& config, const NodeShare& s) {
  if (s.given_memory_mb > 0) return s.given_memory_mb;
  if (config.default_memory_per_job_mb > 0) return config.default_memory_per_job_mb;
  double share = 0;
  if (s.node_cpus > 0) share = std::max(share, double(s.cpus) / s.node_cpus);
  if (s.node_gpus > 0) share = std::max(share, double(s.gpus) / s.node_gpus);
  if (share <= 0 || share > 1) share = 1;
  return static_cast<uint64_t>(double(s.node_memory_mb) * share);
}

Result<DeviceNumber> DeviceNumberOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return NotFound("device file " + path + ": " + ErrnoText(errno));
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return InvalidArgument(path + " is not a device file");
  }
  return DeviceNumber{S_ISCHR(st.st_mode) ? 'c' : 'b', major(st.st_rdev), minor(st.st_rdev)};
}

Result<std::unique_ptr<CgroupManager>> CgroupManager::Open(const CgroupConfig& config,
                                                           const std::string& node,
                                                           const Clock& clock) {
  if (config.mode == "off") return Unavailable("cgroups are off ([cgroup] mode = \"off\")");
  if (geteuid() != 0) return Unavailable("the agent is not root");
  // The agent's own cgroup per hierarchy: "ID:CONTROLLERS:PATH" ("0::PATH" for v2).
  std::map<std::string, std::string> own_v1;  // controller -> path
  std::string own_v2;
  bool has_v2_line = false;
  {
    std::istringstream in(ReadAll(config.self_cgroup));
    for (std::string line; std::getline(in, line);) {
      size_t a = line.find(':'), b = line.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      std::string ctrls = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
      if (line.substr(0, a) == "0" && ctrls.empty()) {
        own_v2 = path;
        has_v2_line = true;
      } else {
        for (const auto& c : SplitSet(ctrls, ',')) own_v1[c] = path;
      }
    }
  }
  // Mounts: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - FSTYPE SOURCE SUPEROPTS".
  std::vector<Hierarchy> hs;
  {
    std::istringstream in(ReadAll(config.mountinfo));
    for (std::string line; std::getline(in, line);) {
      size_t dash = line.find(" - ");
      if (dash == std::string::npos) continue;
      std::istringstream pre(line.substr(0, dash)), post(line.substr(dash + 3));
      std::string id, parent, devno, root, mountpoint, opts, fstype, source, super;
      pre >> id >> parent >> devno >> root >> mountpoint >> opts;
      post >> fstype >> source >> super;
      if (opts.rfind("ro", 0) == 0 && (opts.size() == 2 || opts[2] == ',')) continue;  // read-only
      auto rel = [&](const std::string& path) {
        // The agent's path is relative to the hierarchy's root; the mount shows `root`.
        std::string p = path;
        if (root != "/" && p.rfind(root, 0) == 0) p = p.substr(root.size());
        return mountpoint + (p == "/" ? "" : p);
      };
      if (fstype == "cgroup2" && has_v2_line) {
        Hierarchy h;
        h.v2 = true;
        h.mount = mountpoint;
        h.own = rel(own_v2);
        h.controllers = SplitSet(ReadAll(h.own + "/cgroup.controllers"), ' ');
        std::set<std::string> trimmed;
        for (auto c : h.controllers) {
          while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.pop_back();
          if (!c.empty()) trimmed.insert(c);
        }
        h.controllers = trimmed;
        hs.push_back(std::move(h));
      } else if (fstype == "cgroup") {
        Hierarchy h;
        h.mount = mountpoint;
        for (const auto& o : SplitSet(super, ',')) {
          if (own_v1.contains(o)) h.controllers.insert(o);
        }
        if (h.controllers.empty()) continue;
        h.own = rel(own_v1[*h.controllers.begin()]);
        hs.push_back(std::move(h));
      }
    }
  }
  if (hs.empty()) return Unavailable("no writable cgroup hierarchy is mounted");
  auto impl = std::make_unique<CgroupManagerImpl>();
  impl->clock = &clock;
  bool allow_v1 = config.mode != "v2", allow_v2 = config.mode != "v1";
  const Hierarchy* v2 = nullptr;
  for (const auto& h : hs) {
    if (h.v2 && allow_v2) v2 = &h;
  }
  auto v1_with = [&](const std::string& c) -> const Hierarchy* {
    if (!allow_v1) return nullptr;
    for (const auto& h : hs) {
      if (!h.v2 && h.controllers.contains(c)) return &h;
    }
    return nullptr;
  };
  // Prepares OWN/<parent>/<node> in `h`, enabling `controllers` on the way down (v2).
  std::map<std::string, std::string> prepared;  // mount -> base
  std::vector<std::string> problems;
  auto prepare = [&](const Hierarchy& h, const std::set<std::string>& controllers) -> std::string {
    if (auto it = prepared.find(h.mount); it != prepared.end()) return it->second;
    std::string a = h.own + "/" + config.parent, b = a + "/" + node;
    std::string enable;
    for (const auto& c : controllers) enable += (enable.empty() ? "+" : " +") + c;
    for (const std::string& d : {a, b}) {
      if (h.v2 && !enable.empty()) {
        std::string parent_dir = d.substr(0, d.rfind('/'));
        Status s = WriteFile(parent_dir + "/cgroup.subtree_control", enable);
        if (!s && parent_dir == h.own) {
          // "No internal processes": move the agent's cgroup's processes to a leaf first
          // (the service manager delegated this subtree to the agent).
          std::string leaf = h.own + "/" + config.parent + "-agent";
          mkdir(leaf.c_str(), 0755);
          for (int pid : Pids(h.own)) (void)WriteFile(leaf + "/cgroup.procs", std::to_string(pid));
          s = WriteFile(parent_dir + "/cgroup.subtree_control", enable);
        }
        if (!s) {
          problems.push_back(s.error().message);
          return "";
        }
      }
      if (mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
        problems.push_back("cannot create " + d + ": " + ErrnoText(errno));
        return "";
      }
      if (!h.v2 && h.controllers.contains("cpuset")) {
        // A v1 cpuset starts empty: give it its parent's CPUs and memory nodes.
        std::string up = d.substr(0, d.rfind('/'));
        std::string cpus = ReadAll(up + "/cpuset.cpus"), mems = ReadAll(up + "/cpuset.mems");
        if (!cpus.empty() && cpus != "\n") (void)WriteFile(d + "/cpuset.cpus", cpus);
        if (!mems.empty() && mems != "\n") (void)WriteFile(d + "/cpuset.mems", mems);
      }
    }
    prepared[h.mount] = b;
    return b;
  };
  std::set<std::string> v2_use;
  auto pick = [&](const std::string& c, bool want, std::string* dir, bool* is_v2) {
    if (!want) return;
    if (v2 != nullptr && v2->controllers.contains(c)) {
      v2_use.insert(c);
      *is_v2 = true;
      return;
    }
    if (const Hierarchy* h = v1_with(c)) *dir = prepare(*h, {});
  };
  pick("memory", config.constrain_memory, &impl->memory, &impl->memory_v2);
  pick("cpuset", config.constrain_cpus, &impl->cpuset, &impl->cpuset_v2);
  // A CPU quota only where there is no cpuset (each hierarchy used costs every job a
  // directory and a join).
  if (impl->cpuset.empty() && !impl->cpuset_v2)
    pick("cpu", config.constrain_cpus, &impl->cpu, &impl->cpu_v2);
  pick("pids", config.pids_max > 0, &impl->pids, &impl->pids_v2);
  if (config.constrain_devices) {
    if (const Hierarchy* h = v1_with("devices")) {
      impl->devices = prepare(*h, {});
    } else if (v2 != nullptr) {
      impl->devices_bpf = true;  // the v2 base, set below
    }
  }
  if (v2 != nullptr) {
    std::string b = prepare(*v2, v2_use);
    if (!b.empty()) {
      impl->kill_v2 = b;
      if (impl->memory_v2) impl->memory = b;
      if (impl->cpuset_v2) impl->cpuset = b;
      if (impl->cpu_v2) impl->cpu = b;
      if (impl->pids_v2) impl->pids = b;
      if (impl->devices_bpf) impl->devices = b;
    } else {
      impl->memory_v2 = impl->cpuset_v2 = impl->cpu_v2 = impl->pids_v2 = impl->devices_bpf = false;
    }
  }
  if (impl->kill_v2.empty()) {
    if (const Hierarchy* h = v1_with("freezer")) impl->freezer = prepare(*h, {});
  }
  if (impl->Bases().empty()) {
    return Unavailable(problems.empty() ? "no usable cgroup controller" : problems.front());
  }
  if (!impl->cpuset.empty()) {
    auto trimmed = [](std::string v) {
      while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
      return v;
    };
    impl->base_cpus = trimmed(
        ReadAll(impl->cpuset + (impl->cpuset_v2 ? "/cpuset.cpus.effective" : "/cpuset.cpus")));
    impl->base_mems = trimmed(
        ReadAll(impl->cpuset + (impl->cpuset_v2 ? "/cpuset.mems.effective" : "/cpuset.mems")));
  }
  if (!impl->memory.empty()) {
    // The base has the files its children get.
    impl->swap_file = Exists(
        impl->memory + (impl->memory_v2 ? "/memory.swap.max" : "/memory.memsw.limit_in_bytes"));
  }
  for (const auto& p : problems) CORRAL_LOG(Warn) << "cgroup: " << p;
  return std::unique_ptr<CgroupManager>(std::move(impl));
}

}  // namespace corral::agent
