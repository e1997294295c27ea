#include "agent/exec/container.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace corral::agent {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

ContainerLaunch Launch() {
  ContainerLaunch l;
  l.job = JobId(42);
  l.node = "gpu01";
  l.image = "docker.io/library/ubuntu:24.04";
  l.script = "/var/lib/corral/agent/jobs/42/script";
  l.workdir = "/home/alice/run";
  l.output_dirs = {"/home/alice/run", "/scratch/logs"};
  l.env = {"CUDA_VISIBLE_DEVICES=2,5", "PATH=/usr/bin", "CORRAL_JOB_ID=42", "WITH_COMMA=a,b"};
  l.uid = 1000;
  l.gid = 100;
  l.home = "/home/alice";
  l.gpus.resize(2);
  l.gpus[0].index = 2;
  l.gpus[0].uuid = "GPU-2222";
  l.gpus[1].index = 5;
  l.gpus[1].uuid = "GPU-5555";
  l.device_files = {"/dev/nvidia2", "/dev/nvidia5"};
  l.memory_mb = 4096;
  l.cpus = {4, 5};
  l.spec.image = l.image;
  l.spec.mounts = {"/datasets:/data:ro"};
  return l;
}

TEST(ContainerTest, PodmanGetsOnlyTheJobsGpusMountsAndEnvironment) {
  auto c = BuildContainerCommand({.runtime = "podman"}, Launch());
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const auto& a = c->argv;
  EXPECT_EQ(a[0], "podman");
  EXPECT_EQ(a[1], "run");
  EXPECT_FALSE(c->runs_as_user);
  EXPECT_EQ(c->name, "corral-gpu01-42");
  EXPECT_TRUE(Has(a, "--user=1000:100"));
  EXPECT_TRUE(Has(a, "--memory=4096m"));
  EXPECT_TRUE(Has(a, "--cpuset-cpus=4,5"));
  EXPECT_TRUE(Has(a, "--volume=/home/alice/run:/home/alice/run"));
  EXPECT_TRUE(Has(a, "--volume=/var/lib/corral/agent/jobs/42:/corral/job:ro"));
  EXPECT_TRUE(Has(a, "--volume=/scratch/logs:/scratch/logs"));
  EXPECT_TRUE(Has(a, "--volume=/datasets:/data:ro"));
  EXPECT_TRUE(Has(a, "--volume=/home/alice:/home/alice"));
  EXPECT_TRUE(Has(a, "--workdir=/home/alice/run"));
  EXPECT_TRUE(Has(a, "--device=nvidia.com/gpu=GPU-2222"));
  EXPECT_TRUE(Has(a, "--device=nvidia.com/gpu=GPU-5555"));
  EXPECT_TRUE(Has(a, "--env=CUDA_VISIBLE_DEVICES=0,1"));  // renumbered inside
  EXPECT_TRUE(Has(a, "--env=NVIDIA_VISIBLE_DEVICES=GPU-2222,GPU-5555"));
  EXPECT_TRUE(Has(a, "--env=CORRAL_JOB_ID=42"));
  EXPECT_FALSE(Has(a, "--env=PATH=/usr/bin"));  // the image's own PATH
  EXPECT_EQ(a[a.size() - 2], "docker.io/library/ubuntu:24.04");
  EXPECT_EQ(a.back(), "/corral/job/script");
  EXPECT_EQ(c->cleanup,
            (std::vector<std::string>{"podman", "rm", "--force", "--ignore", "corral-gpu01-42"}));
}

TEST(ContainerTest, DockerApptainerEnrootAndDeviceModes) {
  auto d = BuildContainerCommand({.runtime = "docker"}, Launch());
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(Has(d->argv, "--gpus=\"device=GPU-2222,GPU-5555\""));
  auto devices = BuildContainerCommand({.runtime = "podman", .gpus = "devices"}, Launch());
  EXPECT_TRUE(Has(devices->argv, "--device=/dev/nvidia2"));
  EXPECT_FALSE(Has(devices->argv, "--device=nvidia.com/gpu=GPU-2222"));

  auto a = BuildContainerCommand({.runtime = "apptainer", .runtime_path = "/opt/bin/apptainer"},
                                 Launch());
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->runs_as_user);
  EXPECT_EQ(a->argv[0], "/opt/bin/apptainer");
  EXPECT_EQ(a->argv[1], "exec");
  EXPECT_TRUE(Has(a->argv, "--nv"));
  EXPECT_TRUE(Has(a->argv, "--bind=/datasets:/data:ro"));
  EXPECT_TRUE(Has(a->argv, "--pwd=/home/alice/run"));
  // Values with commas travel in APPTAINERENV_ variables; --nv keeps host indices.
  EXPECT_TRUE(Has(a->env, "APPTAINERENV_WITH_COMMA=a,b"));
  EXPECT_TRUE(Has(a->env, "APPTAINERENV_CUDA_VISIBLE_DEVICES=2,5"));

  auto e = BuildContainerCommand({.runtime = "enroot"}, Launch());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->argv[1], "start");
  EXPECT_TRUE(Has(e->env, "NVIDIA_VISIBLE_DEVICES=GPU-2222,GPU-5555"));
  EXPECT_TRUE(Has(e->argv, "--mount=/home/alice/run:/home/alice/run"));
}

// srun --container-image: a step task runs its own command, in a container of its own, with
// only its GPUs and its environment (ranks included).
TEST(ContainerTest, StepTaskRunsItsCommandWithOnlyItsGpusAndRanks) {
  ContainerLaunch l = Launch();
  l.script.clear();
  l.command = {"python", "train.py", "--lr", "0.1"};
  l.instance = "corral-gpu01-42-1-0-3";
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
  auto c = BuildContainerCommand({.runtime = "podman"}, l);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const auto& a = c->argv;
  EXPECT_EQ(c->name, "corral-gpu01-42-1-0-3");
  EXPECT_EQ(c->cleanup, (std::vector<std::string>{"podman", "rm", "--force", "--ignore",
                                                  "corral-gpu01-42-1-0-3"}));
  EXPECT_FALSE(Has(a, "--volume=/var/lib/corral/agent/jobs/42:/corral/job:ro"));  // no script
  EXPECT_TRUE(Has(a, "--volume=/datasets:/data:ro,rprivate"));                    // pyxis' '+'
  EXPECT_TRUE(Has(a, "--device=nvidia.com/gpu=GPU-5555"));
  EXPECT_FALSE(Has(a, "--device=nvidia.com/gpu=GPU-2222"));
  EXPECT_TRUE(Has(a, "--env=CUDA_VISIBLE_DEVICES=0"));
  EXPECT_TRUE(Has(a, "--env=NVIDIA_VISIBLE_DEVICES=GPU-5555"));
  for (const char* kv : {"RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=4", "MASTER_ADDR=gpu01",
                         "MASTER_PORT=29542", "SLURM_PROCID=3"}) {
    EXPECT_TRUE(Has(a, std::string("--env=") + kv)) << kv;
  }
  EXPECT_FALSE(Has(a, "--env=PATH=/usr/bin"));
  // The image, then the command as given (found in the image's PATH).
  auto image = std::find(a.begin(), a.end(), "docker.io/library/ubuntu:24.04");
  ASSERT_NE(image, a.end());
  EXPECT_EQ(std::vector<std::string>(image + 1, a.end()),
            (std::vector<std::string>{"python", "train.py", "--lr", "0.1"}));

  auto a2 = BuildContainerCommand({.runtime = "apptainer"}, l);
  ASSERT_TRUE(a2.has_value());
  EXPECT_EQ(std::vector<std::string>(a2->argv.end() - 5, a2->argv.end()),
            (std::vector<std::string>{"docker://docker.io/library/ubuntu:24.04", "python",
                                      "train.py", "--lr", "0.1"}));
  EXPECT_TRUE(Has(a2->env, "APPTAINERENV_RANK=3"));

  // enroot: the working directory and the command are arguments of sh, never quoted into it.
  l.workdir = "/home/alice/it's here";
  auto e = BuildContainerCommand({.runtime = "enroot"}, l);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(std::vector<std::string>(e->argv.end() - 9, e->argv.end()),
            (std::vector<std::string>{"docker.io/library/ubuntu:24.04", "/bin/sh", "-c",
                                      "cd \"$0\" && exec \"$@\"", "/home/alice/it's here", "python",
                                      "train.py", "--lr", "0.1"}));
  EXPECT_TRUE(Has(e->argv, "--env=RANK=3"));
}

TEST(ContainerTest, PyxisImagesAreTranslatedForEachRuntime) {
  EXPECT_EQ(RuntimeImage("enroot", "nvcr.io#nvidia/pytorch:24.01-py3"),
            "nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_EQ(RuntimeImage("podman", "nvcr.io#nvidia/pytorch:24.01-py3"),
            "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(RuntimeImage("docker", "alice@nvcr.io#nvidia/pytorch:24.01-py3"),
            "nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(RuntimeImage("podman", "ubuntu@sha256:abcd"),
            "ubuntu@sha256:abcd");  // a digest, not a user
  EXPECT_EQ(RuntimeImage("podman", "localhost/busybox:1"), "localhost/busybox:1");
  EXPECT_EQ(RuntimeImage("apptainer", "nvcr.io#nvidia/pytorch:24.01-py3"),
            "docker://nvcr.io/nvidia/pytorch:24.01-py3");
  EXPECT_EQ(RuntimeImage("singularity", "ubuntu:24.04"), "docker://ubuntu:24.04");
  EXPECT_EQ(RuntimeImage("apptainer", "/images/pytorch.sif"), "/images/pytorch.sif");
  EXPECT_EQ(RuntimeImage("apptainer", "oras://ghcr.io/x/y:1"), "oras://ghcr.io/x/y:1");
}

TEST(ContainerTest, RefusesWhatItCannotRun) {
  auto none = BuildContainerCommand({}, Launch());
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().message,
            "job 42: containers are not set up on node gpu01 ([container] runtime in agent.toml)");
  ContainerLaunch bad = Launch();
  bad.spec.mounts = {"relative:/x"};
  EXPECT_EQ(BuildContainerCommand({.runtime = "podman"}, bad).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(FindRuntime({.runtime = "no-such-runtime-here"}).has_value());
  auto sh = FindRuntime({.runtime = "sh"});
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->substr(sh->size() - 3), "/sh");
}

}  // namespace
}  // namespace corral::agent
