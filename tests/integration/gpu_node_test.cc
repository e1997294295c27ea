// The agent on GPU nodes, end to end with real processes (simulated GPUs): per-GPU health and
// fault injection through CLI -> controller -> agent -> backend, per-job usage, isolation
// (cgroups, device files, the job's user) and containers.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ClusterOptions Options(uint32_t gpus, std::string gpu_toml = "", std::string agent_toml = "") {
  ClusterOptions o;
  o.nodes = 1;
  o.gpus_per_node = gpus;
  o.extra_agent_gpu_toml = "sample_interval_s = 1\n" + gpu_toml;
  o.extra_agent_toml = "[health]\ninterval_s = 1\n" + agent_toml;
  return o;
}

api::NodeInfo Node(TestCluster& c) {
  auto nodes = c.ListNodes();
  return nodes && !nodes->empty() ? nodes->front() : api::NodeInfo{};
}

JobState StateOf(TestCluster& c, JobId id) {
  auto j = c.GetJob(id);
  return j ? j->job.state : JobState::kPending;
}

TEST(GpuHealthTest, InjectedXidTakesOnlyThatGpuOutAndRequeuesItsJobOnAHealthyGpu) {
  TestCluster cluster(Options(4));
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  // A requeueable job on GPU 0 (first fit) that would run for long on its first run, and a
  // job on GPU 1 that must not notice anything.
  // The trap is set before the first line is written, and the test waits for that line, so
  // the checkpoint signal cannot arrive before the script can take it.
  JobSpec victim = cluster.ShellJob(
      "if [ \"$CORRAL_RESTART_COUNT\" = 0 ]; then\n"
      "  trap 'echo checkpoint >> victim.log; exit 0' TERM\n"
      "fi\n"
      "echo \"$CORRAL_RESTART_COUNT $CUDA_VISIBLE_DEVICES\" >> victim.log\n"
      "if [ \"$CORRAL_RESTART_COUNT\" = 0 ]; then sleep 300 & wait; fi\n");
  victim.resources.gpus_per_node = 1;
  victim.requeue = true;
  auto v = cluster.Submit(victim);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  ASSERT_TRUE(WaitFor([&] { return StateOf(cluster, v->job_id) == JobState::kRunning; }, seconds(20)));
  ASSERT_EQ(cluster.GetJob(v->job_id)->job.allocation.nodes[0].gpus.ToString(), "0");
  JobSpec bystander = cluster.ShellJob("sleep 300\n");
  bystander.resources.gpus_per_node = 1;
  auto b = cluster.Submit(bystander);
  ASSERT_TRUE(b.has_value());
  ASSERT_TRUE(WaitFor([&] { return StateOf(cluster, b->job_id) == JobState::kRunning; }, seconds(20)));

  const std::string victim_log = cluster.work_dir() + "/victim.log";
  ASSERT_TRUE(WaitFor([&] { return Read(victim_log) == "0 0\n"; }, seconds(20))) << Read(victim_log);
  CliResult inject = cluster.Cli({"node", "inject", "node01", "--gpu", "0", "--xid", "79"});
  ASSERT_EQ(inject.status, 0) << inject.err;

  // GPU 0 goes out of service, durably recorded on the node; the job gets SIGTERM (its
  // checkpoint signal), is requeued, and runs again on a healthy GPU.
  ASSERT_TRUE(WaitFor([&] { return Node(cluster).node.failed_gpus.contains(0); }, seconds(20)))
      << cluster.ControllerLog();
  auto done = cluster.WaitJob(v->job_id, seconds(60));
  ASSERT_TRUE(done.has_value()) << done.error().message;
  EXPECT_EQ(done->job.state, JobState::kCompleted) << done->job.reason;
  EXPECT_EQ(done->job.restart_count, 1u);
  std::string log = Read(cluster.work_dir() + "/victim.log");
  EXPECT_EQ(log.rfind("0 0\ncheckpoint\n1 ", 0), 0u) << log;
  EXPECT_EQ(log.find("1 0\n"), std::string::npos) << "rerun on the failed GPU: " << log;
  EXPECT_EQ(Node(cluster).node.failed_gpus, GpuSet(0b1));
  EXPECT_EQ(StateOf(cluster, b->job_id), JobState::kRunning) << "the other GPUs keep working";
  api::NodeInfo n = Node(cluster);
  ASSERT_FALSE(n.gpu_problems.empty());
  EXPECT_EQ(n.gpu_problems[0].reason, "XID 79 (GPU has fallen off the bus)");
  EXPECT_TRUE(n.gpu_problems[0].latched);
  CliResult nodes = cluster.Cli({"nodes"});
  EXPECT_NE(nodes.out.find("(failed 0)"), std::string::npos) << nodes.out;

  // New jobs never land on GPU 0.
  JobSpec two = cluster.ShellJob("echo $CUDA_VISIBLE_DEVICES > two.txt\n");
  two.resources.gpus_per_node = 2;
  auto t = cluster.Submit(two);
  ASSERT_TRUE(t.has_value());
  auto t_done = cluster.WaitJob(t->job_id, seconds(30));
  ASSERT_TRUE(t_done.has_value());
  EXPECT_EQ(t_done->job.state, JobState::kCompleted);
  EXPECT_EQ(Read(cluster.work_dir() + "/two.txt"), "2,3\n");

  // The operator resumes it (after resetting the GPU): back in service, and the agent drops
  // the latched XID.
  CliResult resume = cluster.Cli({"node", "resume-gpu", "node01", "0"});
  ASSERT_EQ(resume.status, 0) << resume.err;
  EXPECT_TRUE(Node(cluster).node.failed_gpus.empty());
  ASSERT_TRUE(WaitFor([&] { return Node(cluster).gpu_problems.empty(); }, seconds(20)));
  EXPECT_TRUE(Node(cluster).node.failed_gpus.empty());
  CliResult again = cluster.Cli({"node", "resume-gpu", "node01", "0"});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("already in service"), std::string::npos) << again.err;
}

TEST(GpuHealthTest, StateChecksAndNonRequeueableJobsEndNodeFail) {
  TestCluster cluster(Options(2, "", "max_temperature_c = 90\n"));
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  JobSpec plain = cluster.ShellJob("sleep 300\n");
  plain.resources.gpus_per_node = 1;
  auto j = cluster.Submit(plain);
  ASSERT_TRUE(j.has_value());
  ASSERT_TRUE(WaitFor([&] { return StateOf(cluster, j->job_id) == JobState::kRunning; }, seconds(20)));

  ASSERT_EQ(cluster.Cli({"node", "inject", "node01", "--gpu", "0", "--temperature", "97"}).status, 0);
  auto ended = cluster.WaitJob(j->job_id, seconds(30));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->job.state, JobState::kNodeFail);
  EXPECT_NE(ended->job.reason.find("gpu 0: temperature 97 C over 90 C"), std::string::npos) << ended->job.reason;

  // Refused while it is still too hot; accepted once it has cooled down.
  CliResult hot = cluster.Cli({"node", "resume-gpu", "node01", "0"});
  EXPECT_EQ(hot.status, 1);
  EXPECT_NE(hot.err.find("still fails its checks: temperature 97 C over 90 C"), std::string::npos) << hot.err;
  ASSERT_EQ(cluster.Cli({"node", "inject", "node01", "--gpu", "0", "--clear"}).status, 0);
  ASSERT_TRUE(WaitFor([&] { return Node(cluster).gpu_problems.empty(); }, seconds(20)));
  EXPECT_TRUE(Node(cluster).node.failed_gpus.contains(0)) << "no auto_resume: an operator decides";
  // `corral resume NODE` returns every GPU that passes its checks.
  ASSERT_EQ(cluster.Cli({"resume", "node01"}).status, 0);
  EXPECT_TRUE(Node(cluster).node.failed_gpus.empty());

  // Injection is checked: unknown GPU.
  CliResult bad = cluster.Cli({"node", "inject", "node01", "--gpu", "9", "--xid", "48"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("gpu 9: no such GPU"), std::string::npos) << bad.err;
}

TEST(GpuHealthTest, AutoResumeAndHealthScriptDrain) {
  TestCluster cluster(Options(1, "", "auto_resume = true\nmax_power_watts = 500\nscript = \"SCRIPT\"\n"));
  std::string real_script = cluster.dir() + "/check.sh";
  std::string real_flag = cluster.dir() + "/sick";
  std::ofstream(real_script) << "#!/bin/sh\nif [ -e " << real_flag
                             << " ]; then echo 'ERROR: nhc: /scratch is full'; exit 1; fi\n";
  fs::permissions(real_script, fs::perms::owner_all);
  std::string cfg = cluster.dir() + "/agents/node01/agent.toml";
  std::string text = Read(cfg);
  text.replace(text.find("SCRIPT"), 6, real_script);
  std::ofstream(cfg, std::ios::trunc) << text;
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  std::ofstream(real_flag) << "x";
  ASSERT_TRUE(WaitFor([&] { return Node(cluster).node.drain; }, seconds(20)));
  EXPECT_EQ(Node(cluster).node.reason, "health: health script: ERROR: nhc: /scratch is full");
  fs::remove(real_flag);
  ASSERT_TRUE(WaitFor([&] { return !Node(cluster).node.drain; }, seconds(20))) << "auto_resume undrains";

  ASSERT_EQ(cluster.Cli({"node", "inject", "node01", "--gpu", "0", "--power", "650"}).status, 0);
  ASSERT_TRUE(WaitFor([&] { return Node(cluster).node.failed_gpus.contains(0); }, seconds(20)));
  ASSERT_EQ(cluster.Cli({"node", "inject", "node01", "--gpu", "0", "--power", "300"}).status, 0);
  ASSERT_TRUE(WaitFor([&] { return Node(cluster).node.failed_gpus.empty(); }, seconds(20)))
      << "a state check that passes again returns the GPU with auto_resume";
}

TEST(UsageTest, GpuUsageIsSampledStoredAndShown) {
  TestCluster cluster(Options(2));
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  for (int g = 0; g < 2; ++g) {
    ASSERT_EQ(cluster.Cli({"node", "inject", "node01", "--gpu", std::to_string(g), "--util", g == 0 ? "80" : "40",
                           "--power", "300", "--memory-used", g == 0 ? "30000" : "1000"})
                  .status,
              0);
  }
  JobSpec spec = cluster.ShellJob("sleep 4\n");
  spec.resources.gpus_per_node = 2;
  auto j = cluster.Submit(spec);
  ASSERT_TRUE(j.has_value());
  auto done = cluster.WaitJob(j->job_id, seconds(60));
  ASSERT_TRUE(done.has_value());
  ASSERT_EQ(done->job.state, JobState::kCompleted);
  const JobUsage& u = done->job.usage;
  EXPECT_GE(u.gpu_seconds, 7.5);
  EXPECT_LE(u.gpu_seconds, 20);
  EXPECT_DOUBLE_EQ(u.gpu_util_max, 80);
  EXPECT_NEAR(u.gpu_util_mean, 60, 0.5);
  EXPECT_EQ(u.gpu_mem_max_mb, 30000u);
  // Two GPUs at 300 W for most of 4 s.
  EXPECT_GE(u.energy_joules, 2 * 300 * 2.0);
  EXPECT_LE(u.energy_joules, 2 * 300 * 8.0);
  CliResult show = cluster.Cli({"show", j->job_id.ToString()});
  EXPECT_NE(show.out.find("GpuSeconds:"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("mean 60.0% max 80.0%"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("GpuMemMax:"), std::string::npos);
  EXPECT_NE(show.out.find("Energy:"), std::string::npos);
}

// --- Isolation: needs root and cgroups ----------------------------------------------------

bool CgroupsUsable(std::string* why) {
  if (geteuid() != 0) {
    *why = "the agent must be root to use cgroups";
    return false;
  }
  if (!fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") && !fs::exists("/sys/fs/cgroup/cgroup.controllers") &&
      !fs::exists("/sys/fs/cgroup/unified/cgroup.controllers")) {
    *why = "no cgroup hierarchy is mounted";
    return false;
  }
  return true;
}

TEST(IsolationTest, MemoryOverrunEndsOutOfMemory) {
  std::string why;
  if (!CgroupsUsable(&why)) GTEST_SKIP() << why;
  TestCluster cluster(Options(1));
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  std::string log = Read(cluster.dir() + "/logs/node01.log");
  if (log.find("running jobs without cgroups") != std::string::npos) GTEST_SKIP() << log;
  if (!fs::exists("/sys/fs/cgroup/memory") && log.find("memory") == std::string::npos) GTEST_SKIP() << log;
  JobSpec hog = cluster.ShellJob("x=$(head -c 268435456 /dev/zero | tr '\\0' a); echo ${#x}\n");
  hog.resources.mem_per_node_mb = 48;
  auto j = cluster.Submit(hog);
  ASSERT_TRUE(j.has_value()) << j.error().message;
  auto done = cluster.WaitJob(j->job_id, seconds(60));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->job.state, JobState::kOutOfMemory) << done->job.reason;
}

TEST(IsolationTest, JobOpensOnlyItsOwnGpuDeviceFilesAndRunsBoundToItsCpus) {
  std::string why;
  if (!CgroupsUsable(&why)) GTEST_SKIP() << why;
  TestCluster cluster(Options(2, "device_dir = \"DEVDIR\"\n"));
  std::string devdir = cluster.dir() + "/dev";
  fs::create_directories(devdir);
  for (int i = 0; i < 2; ++i) {
    std::string f = devdir + "/nvidia" + std::to_string(i);
    if (mknod(f.c_str(), S_IFCHR | 0666, makedev(195, i)) != 0) GTEST_SKIP() << "cannot mknod device files here";
  }
  std::string cfg = cluster.dir() + "/agents/node01/agent.toml";
  std::string text = Read(cfg);
  text.replace(text.find("DEVDIR"), 6, devdir);
  std::ofstream(cfg, std::ios::trunc) << text;
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  if (Read(cluster.dir() + "/logs/node01.log").find("running jobs without cgroups") != std::string::npos) {
    GTEST_SKIP() << "the agent could not use cgroups here";
  }
  JobSpec spec = cluster.ShellJob("for g in 0 1; do head -c1 " + devdir + "/nvidia$g 2>&1; done\n"
                                  "grep Cpus_allowed_list /proc/self/status\n");
  spec.resources.gpus_per_node = 1;
  spec.resources.cpus_per_task = 1;
  spec.stdout_path = "dev.out";
  auto j = cluster.Submit(spec);
  ASSERT_TRUE(j.has_value());
  auto done = cluster.WaitJob(j->job_id, seconds(60));
  ASSERT_TRUE(done.has_value());
  std::string out = Read(cluster.work_dir() + "/dev.out");
  // GPU 0 is the job's: the (absent) driver answers ENXIO; GPU 1 is refused by the cgroup.
  EXPECT_NE(out.find("nvidia0' for reading: No such device or address"), std::string::npos) << out;
  EXPECT_NE(out.find("nvidia1' for reading: Operation not permitted"), std::string::npos) << out;
  if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
    EXPECT_NE(out.find("Cpus_allowed_list:\t0\n"), std::string::npos) << out;
  }
}

// `corral run` on a 2-node job: every task runs in its job's cgroup on its node (the second
// node makes it for the job's first task there), denied the GPUs of that node the job was not
// given; the second node keeps the cgroup between steps and removes it once the job has ended.
TEST(IsolationTest, StepTasksOnEveryNodeRunInTheJobsCgroup) {
  std::string why;
  if (!CgroupsUsable(&why)) GTEST_SKIP() << why;
  ClusterOptions o = Options(2, "device_dir = \"DEVDIR\"\n");
  o.nodes = 2;
  TestCluster cluster(o);
  std::string devdir = cluster.dir() + "/dev";
  fs::create_directories(devdir);
  for (int i = 0; i < 2; ++i) {
    std::string f = devdir + "/nvidia" + std::to_string(i);
    if (mknod(f.c_str(), S_IFCHR | 0666, makedev(195, i)) != 0)
      GTEST_SKIP() << "cannot mknod device files here";
  }
  for (const char* node : {"node01", "node02"}) {
    std::string cfg = cluster.dir() + "/agents/" + node + "/agent.toml";
    std::string text = Read(cfg);
    text.replace(text.find("DEVDIR"), 6, devdir);
    std::ofstream(cfg, std::ios::trunc) << text;
  }
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  for (const char* node : {"node01", "node02"}) {
    if (Read(cluster.dir() + "/logs/" + node + ".log").find("running jobs without cgroups") !=
        std::string::npos) {
      GTEST_SKIP() << "the agent could not use cgroups here";
    }
  }
  // One GPU per node (GPU 0, first fit): each task prints its node, its cgroups and what
  // opening each GPU's device file gives; the script then waits for the test.
  std::string script = cluster.work_dir() + "/iso.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                        << CORRAL_BINARY << " run -l sh -c 'echo node=$CORRAL_NODENAME; "
                        << "grep \"/job_${CORRAL_JOB_ID}_\" /proc/self/cgroup; "
                        << "for g in 0 1; do head -c1 " << devdir << "/nvidia$g 2>&1; done; true'\n"
                        << "echo step-done\n"
                        << "while [ ! -e go ]; do sleep 0.1; done\n";
  CliResult submit = cluster.Cli({"submit", "--parsable", "--nodes=2", "--ntasks-per-node=1",
                                  "--gpus-per-node=1", "--output=iso.out", script});
  ASSERT_EQ(submit.status, 0) << submit.err;
  JobId id(std::stoull(submit.out));
  std::string out_path = cluster.work_dir() + "/iso.out";
  ASSERT_TRUE(
      WaitFor([&] { return Read(out_path).find("step-done") != std::string::npos; }, seconds(60)))
      << Read(out_path) << cluster.ControllerLog();
  std::string out = Read(out_path);
  auto job = cluster.GetJob(id);
  ASSERT_TRUE(job.has_value());
  std::string cgroup = "/job_" + id.ToString() + "_" + job->job.allocation.generation.ToString();
  // The cgroup directories of the task on node02, as /proc/self/cgroup named them.
  std::vector<std::string> node02_dirs;
  for (int rank = 0; rank < 2; ++rank) {
    std::string prefix = std::to_string(rank) + ": ";
    std::istringstream in(out);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(prefix, 0) == 0) lines.push_back(line.substr(prefix.size()));
    }
    ASSERT_GE(lines.size(), 4u) << out;
    std::string node = lines[0].substr(lines[0].find('=') + 1);
    bool in_cgroup = false;
    for (const auto& l : lines) {
      if (l.size() < cgroup.size() ||
          l.compare(l.size() - cgroup.size(), cgroup.size(), cgroup) != 0)
        continue;
      in_cgroup = true;
      EXPECT_NE(l.find("/" + node + "-"), std::string::npos)
          << "a cgroup of " << node << "'s agent: " << l;
      if (node == "node02") node02_dirs.push_back(l.substr(l.find(':', l.find(':') + 1) + 1));
    }
    EXPECT_TRUE(in_cgroup) << node << " task is not in " << cgroup << ":\n" << out;
    EXPECT_NE(out.find(prefix + "head: cannot open '" + devdir +
                       "/nvidia0' for reading: No such device or address"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find(prefix + "head: cannot open '" + devdir +
                       "/nvidia1' for reading: Operation not permitted"),
              std::string::npos)
        << out;
  }
  ASSERT_FALSE(node02_dirs.empty()) << out;
  // Where those directories are: under one of the mounted hierarchies.
  auto existing = [&] {
    std::vector<std::string> found;
    for (const auto& mount : fs::directory_iterator("/sys/fs/cgroup")) {
      for (const auto& d : node02_dirs) {
        if (fs::is_directory(mount.path().string() + d)) found.push_back(mount.path().string() + d);
      }
    }
    return found;
  };
  EXPECT_FALSE(existing().empty()) << "node02 keeps the job's cgroup between its steps";
  std::ofstream(cluster.work_dir() + "/go") << "";
  auto done = cluster.WaitJob(id, seconds(60));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->job.state, JobState::kCompleted) << done->job.reason;
  EXPECT_TRUE(WaitFor([&] { return existing().empty(); }, seconds(20)))
      << "node02 removes the job's cgroup once the job has ended: " << existing().front();
}

TEST(IsolationTest, JobRunsAsTheSubmittingUser) {
  if (geteuid() != 0) GTEST_SKIP() << "switching users needs a root agent";
  TestCluster cluster(Options(1));
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  std::string shared = cluster.work_dir() + "/shared";
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all);
  fs::permissions(cluster.dir(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  JobSpec spec = cluster.ShellJob("id -u; id -g; echo $HOME > /dev/null\n");
  spec.working_dir = shared;
  spec.stdout_path = "who.out";
  auto j = cluster.Submit(spec, "alice");  // a token for "alice" (uid 60005, no passwd entry)
  ASSERT_TRUE(j.has_value()) << j.error().message;
  auto done = cluster.WaitJob(j->job_id, seconds(60));
  ASSERT_TRUE(done.has_value());
  ASSERT_EQ(done->job.state, JobState::kCompleted) << done->job.reason;
  std::string out = Read(shared + "/who.out");
  EXPECT_EQ(out.substr(0, out.find('\n')), std::to_string(done->job.spec.uid)) << out;
  EXPECT_NE(done->job.spec.uid, 0u);
  struct stat st{};
  ASSERT_EQ(stat((shared + "/who.out").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, done->job.spec.uid) << "the output file belongs to the job's user";
}

// --- Containers: podman, where it runs ------------------------------------------------------

// Why podman cannot run a container here, or "" when it can. `conf` is a containers.conf
// with the settings this kind of host needs.
std::string PodmanProblem(const std::string& dir, std::string* image, std::string* conf) {
  if (system("command -v podman >/dev/null 2>&1") != 0) return "podman is not installed";
  if (system("command -v busybox >/dev/null 2>&1") != 0) return "busybox (for a local image) is not installed";
  // A one-file image from busybox: no registry needed.
  std::string root = dir + "/rootfs";
  fs::create_directories(root + "/bin");
  std::string bb = "cp \"$(command -v busybox)\" " + root + "/bin/busybox && for c in sh id cat echo env; do ln -sf busybox " +
                   root + "/bin/$c; done && tar -C " + root + " -cf " + dir + "/rootfs.tar . && podman import " + dir +
                   "/rootfs.tar localhost/corral-test-busybox:1 >/dev/null 2>&1";
  if (system(bb.c_str()) != 0) return "podman import of a busybox root fails";
  *image = "localhost/corral-test-busybox:1";
  // Hosts without CAP_SYS_RESOURCE cannot raise rlimits; crun refuses hybrid cgroup hosts.
  *conf = dir + "/containers.conf";
  std::ofstream(*conf) << "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n"
                       << (system("command -v runc >/dev/null 2>&1") == 0 ? "[engine]\nruntime = \"runc\"\n" : "");
  std::string run = "CONTAINERS_CONF=" + *conf + " podman run --rm --network=host " + *image + " /bin/sh -c true >" + dir +
                    "/podman-probe.log 2>&1";
  if (system(run.c_str()) != 0) return "podman cannot run a container here: " + Read(dir + "/podman-probe.log");
  return "";
}

TEST(ContainerTest, PodmanRunsTheScriptWithItsEnvironmentMountsAndOnlyItsGpus) {
  char tmpl[] = "/tmp/corral-podman-XXXXXX";
  std::string scratch = mkdtemp(tmpl);
  std::string image, conf;
  std::string problem = PodmanProblem(scratch, &image, &conf);
  if (!problem.empty()) {
    fs::remove_all(scratch);
    GTEST_SKIP() << problem;
  }
  TestCluster cluster(Options(4, "", "[container]\nruntime = \"podman\"\ngpus = \"none\"\nenv = [\"CONTAINERS_CONF=" +
                                         conf + "\"]\n"));
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  JobSpec spec = cluster.ShellJob(
      "echo \"pwd=$(pwd) cvd=$CUDA_VISIBLE_DEVICES nvd=$NVIDIA_VISIBLE_DEVICES job=$CORRAL_JOB_ID mine=$MINE\"\n"
      "ls /bin/busybox >/dev/null && echo image-root\n");
  spec.resources.gpus_per_node = 2;
  spec.environment.Mutable()["MINE"] = "carried";
  spec.container.image = image;
  spec.stdout_path = "container.out";
  auto j = cluster.Submit(spec);
  ASSERT_TRUE(j.has_value());
  auto done = cluster.WaitJob(j->job_id, seconds(120));
  ASSERT_TRUE(done.has_value());
  std::string out = Read(cluster.work_dir() + "/container.out");
  EXPECT_EQ(done->job.state, JobState::kCompleted) << done->job.reason << "\n" << out;
  EXPECT_NE(out.find("pwd=" + cluster.work_dir()), std::string::npos) << out;
  EXPECT_NE(out.find("job=" + j->job_id.ToString()), std::string::npos) << out;
  EXPECT_NE(out.find("mine=carried"), std::string::npos) << out;
  EXPECT_NE(out.find("image-root"), std::string::npos) << out;
  // Only its two GPUs, by UUID, for the NVIDIA runtime hook.
  auto nodes = cluster.ListNodes();
  const auto& inv = nodes->front().node.inventory;
  GpuSet gpus = done->job.allocation.nodes[0].gpus;
  std::string uuids;
  for (uint32_t g : gpus.ToVector()) uuids += (uuids.empty() ? "" : ",") + inv.gpus[g].uuid;
  EXPECT_NE(out.find("nvd=" + uuids), std::string::npos) << out;
  fs::remove_all(scratch);
}

// srun --container-image with podman itself: each task in the image, with its rank.
TEST(ContainerTest, PodmanRunsEachSrunTaskInTheImageWithItsRank) {
  char tmpl[] = "/tmp/corral-podman-XXXXXX";
  std::string scratch = mkdtemp(tmpl);
  std::string image, conf;
  std::string problem = PodmanProblem(scratch, &image, &conf);
  if (!problem.empty()) {
    fs::remove_all(scratch);
    GTEST_SKIP() << problem;
  }
  TestCluster cluster(Options(4, "", "[container]\nruntime = \"podman\"\ngpus = \"none\"\nenv = [\"CONTAINERS_CONF=" +
                                         conf + "\"]\n"));
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  auto r = cluster.CliAs("srun", {"-n", "2", "-l", "--container-image=" + image, "sh", "-c",
                                  "ls /bin/busybox >/dev/null && echo \"rank=$RANK of=$WORLD_SIZE pwd=$(pwd)\""},
                         cluster.work_dir());
  EXPECT_EQ(r.status, 0) << r.err;
  std::string pwd = " pwd=" + cluster.work_dir();
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"0: rank=0 of=2" + pwd, "1: rank=1 of=2" + pwd})) << r.out << r.err;
  fs::remove_all(scratch);
}

// --- Containers for srun steps (pyxis' srun --container-image) ---------------------------

// A stand-in for podman, configured as the agents' runtime: records each call's arguments in
// `dir`/calls (and its env file's lines, as ENV:NAME=value), then does what `podman run` would
// with them, without isolation: runs the command after "--" and the image with the env
// file's variables, in --workdir, telling it the image and the devices it was given
// (FAKE_IMAGE, FAKE_DEVICES).
std::string FakeRuntime(const std::string& dir) {
  std::string calls = dir + "/calls";
  fs::create_directories(calls);
  fs::permissions(calls, fs::perms::all);
  std::string path = dir + "/fake-podman";
  std::ofstream(path) << "#!/bin/bash\n"
                         "rec='" + calls + "/'$(date +%s%N).$$\n"
                         "printf '%s\\n' \"$@\" > \"$rec\"\n"
                         "[ \"$1\" = run ] || exit 0\n"
                         "shift\n"
                         "wd=/\n"
                         "while [ $# -gt 0 ]; do\n"
                         "  case \"$1\" in\n"
                         "    --env-file=*) while IFS= read -r kv; do echo \"ENV:$kv\" >> \"$rec\"; "
                         "export \"$kv\" 2>/dev/null; done < \"${1#--env-file=}\" ;;\n"
                         "    --workdir=*) wd=\"${1#--workdir=}\" ;;\n"
                         "    --device=*) devices=\"$devices${1#--device=} \" ;;\n"
                         "    --) shift; break ;;\n"
                         "    --*) ;;\n"
                         "    *) break ;;\n"
                         "  esac\n"
                         "  shift\n"
                         "done\n"
                         "export FAKE_IMAGE=\"$1\" FAKE_DEVICES=\"$devices\"\n"
                         "shift\n"
                         "cd \"$wd\" && exec \"$@\"\n";
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  return path;
}

// The recorded `run` calls: one argument vector each.
std::vector<std::vector<std::string>> RunCalls(const std::string& dir) {
  std::vector<std::vector<std::string>> out;
  for (const auto& f : fs::directory_iterator(dir + "/calls")) {
    std::vector<std::string> argv;  // the arguments, then ENV:NAME=value lines
    std::istringstream in(Read(f.path()));
    for (std::string line; std::getline(in, line);) argv.push_back(line);
    if (!argv.empty() && argv[0] == "run") out.push_back(argv);
  }
  return out;
}

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  std::sort(out.begin(), out.end());
  return out;
}

class StepContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-fake-runtime-XXXXXX";
    scratch_ = mkdtemp(tmpl);
    fake_ = FakeRuntime(scratch_);
    // The test cluster lives under /tmp: its data directory is a mount the nodes allow.
    ClusterOptions o = Options(4, "", "[container]\nruntime = \"podman\"\nruntime_path = \"" + fake_ +
                                          "\"\nallow_mounts = [\"/tmp\"]\n");
    o.nodes = 2;
    cluster_ = std::make_unique<TestCluster>(o);
    ASSERT_TRUE(cluster_->Start().has_value()) << cluster_->ControllerLog();
    fs::create_directories(cluster_->dir() + "/data");
  }
  void TearDown() override {
    cluster_.reset();
    fs::remove_all(scratch_);
  }
  std::string scratch_, fake_;
  std::unique_ptr<TestCluster> cluster_;
};

// The shape of most pyxis jobs: a batch script (itself not in a container) whose srun runs
// every task in the image, one GPU each, with a data mount. Each task goes through the
// runtime with the image (pyxis' "REGISTRY#IMAGE" written for podman), the mount, only its own
// GPU, its working directory, and its ranks and Slurm variables in its environment.
TEST_F(StepContainerTest, SrunTasksRunThroughTheRuntimeWithImageMountsGpusAndRanks) {
  TestCluster& c = *cluster_;
  const std::string data = c.dir() + "/data";
  std::ofstream(c.work_dir() + "/train.sh")
      << "#!/bin/bash\n"
         "#SBATCH -N 2 --ntasks-per-node=2 --gpus-per-node=2 -o train-%j.out\n"
         "srun -l --gpus-per-task=1 --container-image=nvcr.io#nvidia/pytorch:24.01-py3 "
         "--container-mounts=" + data + ":/data:ro bash -c 'echo \"rank=$RANK local=$LOCAL_RANK "
         "world=$WORLD_SIZE procid=$SLURM_PROCID master=$MASTER_ADDR:$MASTER_PORT "
         "cuda=$CUDA_VISIBLE_DEVICES nvidia=$NVIDIA_VISIBLE_DEVICES image=$FAKE_IMAGE "
         "devices=$FAKE_DEVICES pwd=$(pwd)\"'\n";
  auto r = c.CliAs("sbatch", {"--parsable", "train.sh"}, c.work_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  JobId id(std::stoull(r.out));
  auto done = c.WaitJob(id, seconds(90));
  ASSERT_TRUE(done.has_value());
  std::string out = Read(c.work_dir() + "/train-" + id.ToString() + ".out");
  ASSERT_EQ(done->job.state, JobState::kCompleted) << done->job.reason << "\n" << out;

  auto nodes = c.ListNodes();
  ASSERT_TRUE(nodes.has_value());
  std::map<std::string, std::vector<GpuInfo>> inventory;
  for (const auto& n : *nodes) inventory[n.node.inventory.name] = n.node.inventory.gpus;
  const Job& j = done->job;
  ASSERT_EQ(j.allocation.nodes.size(), 2u);
  std::vector<std::string> want;
  std::vector<std::string> uuids;
  for (uint32_t rank = 0; rank < 4; ++rank) {
    const NodeAllocation& na = j.allocation.nodes[rank / 2];
    uint32_t gpu = na.gpus.ToVector().at(rank % 2);
    std::string uuid = inventory[na.node_name].at(gpu).uuid;
    uuids.push_back(uuid);
    want.push_back(std::to_string(rank) + ": rank=" + std::to_string(rank) + " local=" + std::to_string(rank % 2) +
                   " world=4 procid=" + std::to_string(rank) + " master=");
    want.back() += "* cuda=0 nvidia=" + uuid + " image=nvcr.io/nvidia/pytorch:24.01-py3 devices=nvidia.com/gpu=" +
                   uuid + "  pwd=" + c.work_dir();
  }
  std::vector<std::string> lines = SortedLines(out);
  ASSERT_EQ(lines.size(), 4u) << out;
  std::set<std::string> masters;
  for (size_t i = 0; i < 4; ++i) {
    // MASTER_ADDR:MASTER_PORT are the job's (node01's address, a free port): the same for all.
    size_t star = want[i].find('*');
    size_t cuda = lines[i].find(" cuda=");
    ASSERT_NE(cuda, std::string::npos) << out;
    EXPECT_EQ(lines[i].substr(0, star), want[i].substr(0, star)) << out;
    EXPECT_EQ(lines[i].substr(cuda), want[i].substr(star + 1)) << out;
    masters.insert(lines[i].substr(star, cuda - star));
  }
  EXPECT_EQ(masters.size(), 1u) << out;
  EXPECT_EQ(masters.begin()->find(':') != std::string::npos, true) << out;

  // Every task went through the runtime: the task's own container, image, mount, GPU, ranks.
  auto calls = RunCalls(scratch_);
  ASSERT_EQ(calls.size(), 4u);
  std::set<std::string> names, ranks;
  for (const auto& argv : calls) {
    // The data directory, checked as the user and staged by the agent (the runtime runs as
    // root): mounted read-only at /data.
    EXPECT_TRUE(std::any_of(argv.begin(), argv.end(), [](const std::string& a) {
      return a.rfind("--volume=", 0) == 0 && a.size() > 18 && a.substr(a.size() - 9) == ":/data:ro";
    }));
    EXPECT_TRUE(Contains(argv, "--workdir=" + c.work_dir()));
    auto dashes = std::find(argv.begin(), argv.end(), "--");
    ASSERT_NE(dashes, argv.end());
    EXPECT_EQ(*(dashes + 1), "nvcr.io/nvidia/pytorch:24.01-py3");  // the image after "--"
    EXPECT_EQ(*(dashes + 2), "bash");  // the command, as given: found in the image
    EXPECT_EQ(*(dashes - 1), "--user=" + std::to_string(j.spec.uid) + ":" + std::to_string(j.spec.gid));
    EXPECT_TRUE(Contains(argv, "--security-opt=no-new-privileges"));
    EXPECT_TRUE(Contains(argv, "--cap-drop=ALL"));
    auto name = std::find_if(argv.begin(), argv.end(), [](const std::string& a) { return a.rfind("--name=", 0) == 0; });
    ASSERT_NE(name, argv.end());
    names.insert(name->substr(7));
    EXPECT_EQ(name->rfind("--name=corral-", 0), 0u) << *name;
    int devices = 0;
    for (const auto& a : argv) {
      if (a.rfind("ENV:RANK=", 0) == 0) ranks.insert(a.substr(9));
      if (a.rfind("--device=", 0) == 0) ++devices;
      EXPECT_NE(a.rfind("--env", 0) == 0 && a.rfind("--env-file=", 0) != 0, true) << "no value in argv: " << a;
      EXPECT_NE(a.rfind("ENV:PATH=", 0), 0u) << "the image's PATH is its own";
    }
    EXPECT_EQ(devices, 1);
  }
  EXPECT_EQ(names.size(), 4u) << "one container per task";
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
}

// Options given to salloc reach the steps run in it (Slurm's SPANK variables) while the
// allocation itself runs bare, and --container-name names a container whose image later steps
// of the job get by naming it.
TEST_F(StepContainerTest, AllocationOptionsAreInheritedAndANamedContainerIsReused) {
  TestCluster& c = *cluster_;
  const std::string no_image = "env -u SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_image ";
  auto r = c.CliAs("salloc", {"-N", "1", "--container-image=docker.io/library/ubuntu:24.04", "--container-name=dev",
                              "bash", "-c",
                              "srun bash -c 'echo first=$FAKE_IMAGE'; "
                              "srun --container-image=alpine:3 --container-name=tools bash -c 'echo second=$FAKE_IMAGE'; " +
                                  no_image + "srun --container-name=tools bash -c 'echo third=$FAKE_IMAGE'; " + no_image +
                                  "srun --container-name=never true; echo status=$?"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("first=docker.io/library/ubuntu:24.04\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("second=alpine:3\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("third=alpine:3\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("status=1\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("--container-name=never: no earlier step of this job made a container of that name; give "
                       "--container-image with it the first time"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(RunCalls(scratch_).size(), 3u) << "three steps in containers; the allocation itself runs bare";
}

}  // namespace
}  // namespace corral::testing
