#include "agent/exec/container.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace corral::agent {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool HasPrefix(const std::vector<std::string>& v, const std::string& prefix) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
}

ContainerLaunch Launch() {
  ContainerLaunch l;
  l.job = JobId(42);
  l.node = "gpu01";
  l.script = "/var/lib/corral/agent/jobs/42/script";
  l.name = "corral-alice-42-1-batch-gpu01-0a1b2c3d";
  l.workdir = "/home/alice/run";
  l.output_dirs = {"/home/alice/run", "/scratch/logs"};
  l.env = {"CUDA_VISIBLE_DEVICES=2,5", "PATH=/usr/bin", "CORRAL_JOB_ID=42", "WITH_COMMA=a,b",
           "SECRET_TOKEN=s3cr3t"};
  l.uid = 1000;
  l.gid = 100;
  l.groups = {100, 2001};
  l.home = "/home/alice";
  l.gpus.resize(2);
  l.gpus[0].index = 2;
  l.gpus[0].uuid = "GPU-2222";
  l.gpus[1].index = 5;
  l.gpus[1].uuid = "GPU-5555";
  l.device_files = {"/dev/nvidia2", "/dev/nvidia5"};
  l.memory_mb = 4096;
  l.cpus = {4, 5};
  l.pids_max = 4096;
  l.env_file = "/var/lib/corral/agent/containers/" + l.name + "/env";
  l.spec.image = "docker.io/library/ubuntu:24.04";
  l.spec.mounts = {"/datasets:/data:ro"};
  return l;
}

// `l` with its mounts planned and taken as they are (the host checks are container_host's).
Result<ContainerCommand> Build(const ContainerConfig& config, ContainerLaunch l) {
  CORRAL_ASSIGN_OR_RETURN(l.mounts, PlanMounts(l));
  return BuildContainerCommand(config, l);
}

// The options part of a podman/docker command: after "run", before "--".
std::vector<std::string> Options(const std::vector<std::string>& argv) {
  auto dashes = std::find(argv.begin(), argv.end(), "--");
  return {argv.begin() + 2, dashes};
}

TEST(ContainerTest, PodmanGetsOnlyTheJobsGpusMountsAndEnvironment) {
  auto c = Build({.runtime = "podman"}, Launch());
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const auto& a = c->argv;
  EXPECT_EQ(a[0], "podman");
  EXPECT_EQ(a[1], "run");
  EXPECT_FALSE(c->runs_as_user);
  EXPECT_EQ(c->name, "corral-alice-42-1-batch-gpu01-0a1b2c3d");
  EXPECT_TRUE(Has(a, "--name=corral-alice-42-1-batch-gpu01-0a1b2c3d"));
  EXPECT_TRUE(Has(a, "--memory=4096m"));
  EXPECT_TRUE(Has(a, "--cpuset-cpus=4,5"));
  EXPECT_TRUE(Has(a, "--pids-limit=4096"));
  EXPECT_TRUE(Has(a, "--volume=/home/alice/run:/home/alice/run"));
  EXPECT_TRUE(Has(a, "--volume=/var/lib/corral/agent/jobs/42:/corral/job:ro"));
  EXPECT_TRUE(Has(a, "--volume=/scratch/logs:/scratch/logs"));
  EXPECT_TRUE(Has(a, "--volume=/datasets:/data:ro"));
  EXPECT_TRUE(Has(a, "--volume=/home/alice:/home/alice"));
  EXPECT_TRUE(Has(a, "--workdir=/home/alice/run"));
  EXPECT_TRUE(Has(a, "--device=nvidia.com/gpu=GPU-2222"));
  EXPECT_TRUE(Has(a, "--device=nvidia.com/gpu=GPU-5555"));
  // The environment goes through the 0600 env file, never argv.
  EXPECT_TRUE(Has(a, "--env-file=" + Launch().env_file));
  EXPECT_FALSE(HasPrefix(a, "--env="));
  for (const auto& arg : a) EXPECT_EQ(arg.find("s3cr3t"), std::string::npos) << arg;
  EXPECT_TRUE(Has(c->env_file, "CUDA_VISIBLE_DEVICES=0,1"));  // renumbered inside
  EXPECT_TRUE(Has(c->env_file, "NVIDIA_VISIBLE_DEVICES=GPU-2222,GPU-5555"));
  EXPECT_TRUE(Has(c->env_file, "CORRAL_JOB_ID=42"));
  EXPECT_TRUE(Has(c->env_file, "SECRET_TOKEN=s3cr3t"));
  EXPECT_FALSE(Has(c->env_file, "PATH=/usr/bin"));  // the image's own PATH
  EXPECT_EQ(a[a.size() - 2], "docker.io/library/ubuntu:24.04");
  EXPECT_EQ(a.back(), "/corral/job/script");
  EXPECT_EQ(c->cleanup, (std::vector<std::string>{"podman", "rm", "--force", "--ignore",
                                                  "corral-alice-42-1-batch-gpu01-0a1b2c3d"}));
}

// The shape every rootful podman and docker command has, whatever the user sent: the user's
// --user last among the options with its groups before it, no-new-privileges and no
// capabilities, no --privileged, "--" and then the image, every option one "--name=value".
void ExpectLockedDown(const std::vector<std::string>& argv, const std::string& image) {
  std::vector<std::string> opts = Options(argv);
  ASSERT_FALSE(opts.empty());
  EXPECT_EQ(opts.back(), "--user=1000:100");
  EXPECT_EQ(opts[opts.size() - 2], "--group-add=2001");
  EXPECT_TRUE(Has(opts, "--security-opt=no-new-privileges"));
  EXPECT_TRUE(Has(opts, "--cap-drop=ALL"));
  EXPECT_FALSE(HasPrefix(argv, "--privileged"));
  EXPECT_FALSE(HasPrefix(argv, "--cap-add"));
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--"), 1);
  auto dashes = std::find(argv.begin(), argv.end(), "--");
  ASSERT_NE(dashes, argv.end());
  EXPECT_EQ(*(dashes + 1), image);
  for (const auto& o : opts) {
    EXPECT_EQ(o.rfind("--", 0), 0u) << o;
    if (o == "--rm") continue;
    EXPECT_NE(o.find('='), std::string::npos) << "one argument per option: " << o;
  }
  EXPECT_EQ(std::count_if(opts.begin(), opts.end(),
                          [](const std::string& o) { return o.rfind("--user=", 0) == 0; }),
            1);
}

TEST(ContainerTest, HostileImagesNamesMountsAndVariablesCannotBecomeOptions) {
  for (const std::string rt : {"podman", "docker"}) {
    ContainerConfig config{.runtime = rt, .extra_args = {"--network=host"}};
    auto ok = Build(config, Launch());
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    ExpectLockedDown(ok->argv, "docker.io/library/ubuntu:24.04");

    for (const std::string image :
         {"--user=0:0", "-v/:/host", "--privileged", "ubuntu --privileged",
          "oci-archive:/etc/shadow", "/images/x.sqsh", "oras://ghcr.io/x/y:1",
          "docker-archive:/root/x.tar"}) {
      ContainerLaunch l = Launch();
      l.spec.image = image;
      auto c = Build(config, l);
      ASSERT_FALSE(c.has_value()) << rt << " took image " << image;
      EXPECT_EQ(c.error().code, ErrorCode::kInvalidArgument) << image;
    }
    for (const std::string mount : {"/:/host", "/etc/../:/x", "/data:/x:U", "/data:/x:ro:z",
                                    "/data:/x,/etc:/y", "/data:/x:rw+ro"}) {
      ContainerLaunch l = Launch();
      l.spec.mounts = {mount};
      EXPECT_FALSE(Build(config, l).has_value()) << rt << " took mount " << mount;
    }
    ContainerLaunch named = Launch();
    named.spec.name = "--rm";  // pyxis' --container-name is never the runtime's name
    EXPECT_FALSE(Build(config, named).has_value());
    named.spec.name = "other-users-container";
    auto n = Build(config, named);
    ASSERT_TRUE(n.has_value()) << n.error().message;
    EXPECT_EQ(n->name, Launch().name);
    EXPECT_EQ(n->cleanup.back(), Launch().name);

    // Variables that podman's and docker's env-file readers would misread are dropped (and
    // named), never moved to argv: a newline would start a new variable, a '#' a comment, a
    // blank is refused, a name ending in '*' would import the runtime's own environment.
    ContainerLaunch hostile = Launch();
    hostile.env = {"MULTI=line1\nINJECTED=1",    "#COMMENT=x",     "SPACE NAME=x", "PREFIX*=",
                   "BASH_FUNC_f%%=() { echo; }", "GOOD=fine value"};
    auto h = Build(config, hostile);
    ASSERT_TRUE(h.has_value()) << h.error().message;
    ExpectLockedDown(h->argv, "docker.io/library/ubuntu:24.04");
    EXPECT_TRUE(Has(h->env_file, "GOOD=fine value"));
    EXPECT_TRUE(Has(h->env_file, "BASH_FUNC_f%%=() { echo; }"));
    EXPECT_TRUE(Has(h->env_file, "PREFIX*="));  // with '=': a plain (odd) name
    for (const auto& line : h->env_file) {
      EXPECT_EQ(line.find('\n'), std::string::npos) << line;
      EXPECT_NE(line[0], '#') << line;
    }
    EXPECT_TRUE(Has(h->dropped_env, "MULTI"));
    EXPECT_TRUE(Has(h->dropped_env, "#COMMENT"));
    EXPECT_TRUE(Has(h->dropped_env, "SPACE NAME"));
    EXPECT_FALSE(HasPrefix(h->argv, "--env="));
  }
}

TEST(ContainerTest, RootlessPodmanRunsAsTheUserInsideTheJobsCgroup) {
  ContainerLaunch l = Launch();
  l.rootless = true;
  auto c = Build({.runtime = "podman", .rootless = "auto"}, l);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_TRUE(c->runs_as_user);
  EXPECT_TRUE(Has(c->argv, "--userns=keep-id"));
  EXPECT_TRUE(Has(c->argv, "--cgroups=disabled"));
  EXPECT_FALSE(HasPrefix(c->argv, "--memory"));  // the job's cgroup holds it
  EXPECT_FALSE(HasPrefix(c->argv, "--pids-limit"));
  ExpectLockedDown(c->argv, "docker.io/library/ubuntu:24.04");
}

TEST(ContainerTest, DockerApptainerEnrootAndDeviceModes) {
  auto d = Build({.runtime = "docker"}, Launch());
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(Has(d->argv, "--gpus=\"device=GPU-2222,GPU-5555\""));
  EXPECT_EQ(d->cleanup, (std::vector<std::string>{"docker", "rm", "--force", Launch().name}));
  auto devices = Build({.runtime = "podman", .gpus = "devices"}, Launch());
  EXPECT_TRUE(Has(devices->argv, "--device=/dev/nvidia2"));
  EXPECT_FALSE(Has(devices->argv, "--device=nvidia.com/gpu=GPU-2222"));

  auto a = Build({.runtime = "apptainer", .runtime_path = "/opt/bin/apptainer"}, Launch());
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->runs_as_user);
  EXPECT_EQ(a->argv[0], "/opt/bin/apptainer");
  EXPECT_EQ(a->argv[1], "exec");
  EXPECT_TRUE(Has(a->argv, "--nv"));
  EXPECT_TRUE(Has(a->argv, "--bind=/datasets:/data:ro"));
  EXPECT_TRUE(Has(a->argv, "--pwd=/home/alice/run"));
  EXPECT_EQ(*(std::find(a->argv.begin(), a->argv.end(), "--") + 1),
            "docker://docker.io/library/ubuntu:24.04");
  // Values with commas travel in APPTAINERENV_ variables; --nv keeps host indices.
  EXPECT_TRUE(Has(a->env, "APPTAINERENV_WITH_COMMA=a,b"));
  EXPECT_TRUE(Has(a->env, "APPTAINERENV_CUDA_VISIBLE_DEVICES=2,5"));
  for (const auto& arg : a->argv) EXPECT_EQ(arg.find("s3cr3t"), std::string::npos) << arg;

  auto e = Build({.runtime = "enroot"}, Launch());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->argv[1], "start");
  EXPECT_TRUE(e->runs_as_user);
  EXPECT_TRUE(Has(e->env, "NVIDIA_VISIBLE_DEVICES=GPU-2222,GPU-5555"));
  EXPECT_TRUE(Has(e->argv, "--mount=/home/alice/run:/home/alice/run"));
  // enroot takes each value from its own environment: names only in argv.
  EXPECT_TRUE(Has(e->argv, "--env=SECRET_TOKEN"));
  EXPECT_TRUE(Has(e->env, "SECRET_TOKEN=s3cr3t"));
  for (const auto& arg : e->argv) EXPECT_EQ(arg.find("s3cr3t"), std::string::npos) << arg;
}

TEST(ContainerTest, ApptainerAndEnrootRefuseHostileInputToo) {
  for (const std::string rt : {"apptainer", "enroot"}) {
    for (const std::string image : {"--user=0:0", "-x", "ubuntu\n--nv", "file:///etc/shadow"}) {
      ContainerLaunch l = Launch();
      l.spec.image = image;
      EXPECT_FALSE(Build({.runtime = rt}, l).has_value()) << rt << " took " << image;
    }
    ContainerLaunch comma = Launch();
    comma.spec.mounts = {"/data,/etc:/x"};  // apptainer would bind /etc too
    EXPECT_FALSE(Build({.runtime = rt}, comma).has_value()) << rt;
    // The image always follows "--".
    auto ok = Build({.runtime = rt}, Launch());
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    auto dashes = std::find(ok->argv.begin(), ok->argv.end(), "--");
    ASSERT_NE(dashes, ok->argv.end()) << rt;
    EXPECT_NE((dashes + 1)->find("ubuntu"), std::string::npos) << rt;
  }
  // A working directory with a blank: enroot splits its mounts at blanks.
  ContainerLaunch blank = Launch();
  blank.workdir = "/home/alice/my run";
  EXPECT_FALSE(Build({.runtime = "enroot"}, blank).has_value());
  EXPECT_TRUE(Build({.runtime = "podman"}, blank).has_value());
  // enroot accepts only shell names; others are dropped, never passed.
  ContainerLaunch odd = Launch();
  odd.env = {"BASH_FUNC_f%%=() { :; }", "OK=1"};
  auto e = Build({.runtime = "enroot"}, odd);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(Has(e->dropped_env, "BASH_FUNC_f%%"));
  EXPECT_TRUE(Has(e->argv, "--env=OK"));
}

// srun --container-image: a step task runs its own command, in a container of its own, with
// only its GPUs and its environment (ranks included).
TEST(ContainerTest, StepTaskRunsItsCommandWithOnlyItsGpusAndRanks) {
  ContainerLaunch l = Launch();
  l.script.clear();
  l.command = {"python", "train.py", "--lr", "0.1"};
  l.name = "corral-alice-42-1-0-3-gpu01-0a1b2c3d";
  l.gpus.resize(1);  // --gpus-per-task=1: the task's own GPU 5
  l.gpus[0].index = 5;
  l.gpus[0].uuid = "GPU-5555";
  l.device_files = {"/dev/nvidia5"};
  l.env = {"CUDA_VISIBLE_DEVICES=5", "RANK=3",
           "LOCAL_RANK=1",           "WORLD_SIZE=4",
           "MASTER_ADDR=gpu01",      "MASTER_PORT=29542",
           "SLURM_PROCID=3",         "PATH=/usr/bin"};
  l.spec.name = "train";  // pyxis' name is not the runtime's
  l.spec.mounts = {"/datasets:/data:ro+rprivate"};
  auto c = Build({.runtime = "podman"}, l);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const auto& a = c->argv;
  EXPECT_EQ(c->name, "corral-alice-42-1-0-3-gpu01-0a1b2c3d");
  EXPECT_EQ(c->cleanup, (std::vector<std::string>{"podman", "rm", "--force", "--ignore",
                                                  "corral-alice-42-1-0-3-gpu01-0a1b2c3d"}));
  EXPECT_FALSE(HasPrefix(a, "--volume=/var/lib/corral/agent/jobs/42:"));  // no script
  EXPECT_TRUE(Has(a, "--volume=/datasets:/data:ro,rprivate"));            // pyxis' '+'
  EXPECT_TRUE(Has(a, "--device=nvidia.com/gpu=GPU-5555"));
  EXPECT_FALSE(Has(a, "--device=nvidia.com/gpu=GPU-2222"));
  EXPECT_TRUE(Has(c->env_file, "CUDA_VISIBLE_DEVICES=0"));
  EXPECT_TRUE(Has(c->env_file, "NVIDIA_VISIBLE_DEVICES=GPU-5555"));
  for (const char* kv : {"RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=4", "MASTER_ADDR=gpu01",
                         "MASTER_PORT=29542", "SLURM_PROCID=3"}) {
    EXPECT_TRUE(Has(c->env_file, kv)) << kv;
  }
  EXPECT_FALSE(Has(c->env_file, "PATH=/usr/bin"));
  // The image, then the command as given (found in the image's PATH).
  auto image = std::find(a.begin(), a.end(), "docker.io/library/ubuntu:24.04");
  ASSERT_NE(image, a.end());
  EXPECT_EQ(*(image - 1), "--");
  EXPECT_EQ(std::vector<std::string>(image + 1, a.end()),
            (std::vector<std::string>{"python", "train.py", "--lr", "0.1"}));

  auto a2 = Build({.runtime = "apptainer"}, l);
  ASSERT_TRUE(a2.has_value());
  EXPECT_EQ(std::vector<std::string>(a2->argv.end() - 5, a2->argv.end()),
            (std::vector<std::string>{"docker://docker.io/library/ubuntu:24.04", "python",
                                      "train.py", "--lr", "0.1"}));
  EXPECT_TRUE(Has(a2->env, "APPTAINERENV_RANK=3"));

  // enroot: the working directory and the command are arguments of sh, never quoted into it.
  l.workdir = "/home/alice/it's-here";
  auto e = Build({.runtime = "enroot"}, l);
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_EQ(std::vector<std::string>(e->argv.end() - 9, e->argv.end()),
            (std::vector<std::string>{"docker.io/library/ubuntu:24.04", "/bin/sh", "-c",
                                      "cd \"$0\" && exec \"$@\"", "/home/alice/it's-here", "python",
                                      "train.py", "--lr", "0.1"}));
  EXPECT_TRUE(Has(e->argv, "--env=RANK"));
  EXPECT_TRUE(Has(e->env, "RANK=3"));
}

TEST(ContainerTest, NamesAreTheAgentsOwn) {
  EXPECT_EQ(ContainerName("alice", JobId(42), Generation(3), std::nullopt, "gpu01-0a1b2c3d"),
            "corral-alice-42-3-batch-gpu01-0a1b2c3d");
  EXPECT_EQ(ContainerName("bob", JobId(7), Generation(1), std::make_pair(2u, 5u), "n1-ff"),
            "corral-bob-7-1-2-5-n1-ff");
  // A user name is never more than a label: anything outside [A-Za-z0-9_.-] becomes '_'.
  std::string odd = ContainerName("--rm x/../y$(id)", JobId(1), Generation(1), std::nullopt, "n");
  EXPECT_EQ(odd, "corral---rm_x_.._y__id_-1-1-batch-n");
  EXPECT_EQ(
      odd.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"),
      std::string::npos);
  EXPECT_EQ(ContainerName(std::string(100, 'a'), JobId(1), Generation(1), std::nullopt, "n"),
            "corral-" + std::string(32, 'a') + "-1-1-batch-n");
}

TEST(ContainerTest, PyxisImagesAreTranslatedForEachRuntime) {
  const std::string digest = "sha256:" + std::string(64, 'a');
  EXPECT_EQ(*RuntimeImage("enroot", "nvcr.io#nvidia/pytorch:24.01-py3"),
            "nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_EQ(*RuntimeImage("podman", "nvcr.io#nvidia/pytorch:24.01-py3"),
            "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(*RuntimeImage("docker", "alice@nvcr.io#nvidia/pytorch:24.01-py3"),
            "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(*RuntimeImage("podman", "ubuntu@" + digest), "ubuntu@" + digest);  // not a user
  EXPECT_EQ(*RuntimeImage("podman", "localhost/busybox:1"), "localhost/busybox:1");
  EXPECT_EQ(*RuntimeImage("podman", "docker://ubuntu:24.04"), "ubuntu:24.04");
  EXPECT_EQ(*RuntimeImage("apptainer", "nvcr.io#nvidia/pytorch:24.01-py3"),
            "docker://nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(*RuntimeImage("singularity", "ubuntu:24.04"), "docker://ubuntu:24.04");
  EXPECT_EQ(*RuntimeImage("apptainer", "/images/pytorch.sif"), "/images/pytorch.sif");
  EXPECT_EQ(*RuntimeImage("apptainer", "oras://ghcr.io/x/y:1"), "oras://ghcr.io/x/y:1");
  EXPECT_FALSE(RuntimeImage("podman", "/images/pytorch.sif").has_value());
  EXPECT_FALSE(RuntimeImage("docker", "library://x/y:1").has_value());
}

TEST(ContainerTest, RefusesWhatItCannotRun) {
  auto none = Build({}, Launch());
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().message,
            "job 42: containers are not set up on node gpu01 ([container] runtime in agent.toml)");
  ContainerLaunch bad = Launch();
  bad.spec.mounts = {"relative:/x"};
  EXPECT_EQ(Build({.runtime = "podman"}, bad).error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(FindRuntime({.runtime = "no-such-runtime-here"}).has_value());
  auto sh = FindRuntime({.runtime = "sh"});
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->substr(sh->size() - 3), "/sh");
}

}  // namespace
}  // namespace corral::agent
