#include "cli/slurm/submit.h"

#include <gtest/gtest.h>

#include "cli/slurm/environment.h"
#include "cli/slurm/testing/sbatch_cases.h"
#include "core/slurm_env.h"

namespace corral::slurm {
namespace {

using testing::Case;
using testing::Context;
using testing::Env;
using testing::Min;
using testing::RunCases;
using testing::Script;

// The shapes real GPU batch scripts take (issue #6, section 5), and every option form.
// Where a comment names a job, the same script was submitted to a real Slurm 22.05.8 and
// `scontrol show job` showed the values checked.
TEST(SbatchTest, TableOfOptionsAndEnvironment) {
  const std::vector<Case> cases = {
      {"getopt abbreviations",
       {"#SBATCH --out=o_%j.txt --err=e_%j.txt --tasks=2 --nodes=2"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.stdout_path, "o_%j.txt");
         EXPECT_EQ(r.spec.stderr_path, "e_%j.txt");
         EXPECT_EQ(r.spec.resources.ntasks_per_node, 2u);
         EXPECT_EQ(r.spec.resources.nodes, 2u);
         EXPECT_EQ(r.spec.resources.ntasks, 4u);
       }},
      {"repeated options: the last wins",
       {"#SBATCH -J a -J b", "#SBATCH -t 5", "#SBATCH -t 10"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "b");
         EXPECT_EQ(r.spec.time_limit, Min(10));
       }},
      // As the peer printed (tests/slurm_diff): directives BEGIN, FAIL and the command line's
      // END give MailType=BEGIN,END,FAIL; NONE adds nothing; ALL is Slurm's six.
      {"repeated --mail-type: they add up across sources",
       {"#SBATCH --mail-type=FAIL", "#SBATCH --mail-type=begin --mail-type=NONE"},
       {"--mail-type=END"},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.mail_type, "BEGIN,END,FAIL"); }},
      {"--mail-type=ALL and ARRAY_TASKS, in Slurm's order",
       {"#SBATCH --mail-type=TIME_LIMIT_90,ARRAY_TASKS", "#SBATCH --mail-type=ALL"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.mail_type,
                   "ARRAY_TASKS,INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT,TIME_LIMIT_90");
       }},
      {"command line > SBATCH_* > directives",
       {"#SBATCH -J dir -p dirpart -t 5 -A diracct"},
       {"-J", "cli"},
       {{"SBATCH_JOB_NAME", "env"}, {"SBATCH_PARTITION", "envpart"}},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "cli");
         EXPECT_EQ(r.spec.partitions, (std::vector<std::string>{"envpart"}));
         EXPECT_EQ(r.spec.time_limit, Min(5));
         EXPECT_EQ(r.spec.account, "diracct");
       }},
      {"SBATCH_TIMELIMIT and flag variables",
       {},
       {},
       {{"SBATCH_TIMELIMIT", "1:00:00"}, {"SBATCH_REQUEUE", "1"}, {"SBATCH_EXCLUSIVE", ""}},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.time_limit, Min(60));
         EXPECT_TRUE(r.spec.requeue);
         EXPECT_TRUE(r.spec.resources.exclusive);
       }},
      {"--export=ALL (the default) copies the environment",
       {},
       {},
       {{"FOO", "1"}, {"PATH", "/bin"}},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.environment->at("FOO"), "1");
         EXPECT_EQ(r.spec.environment->count("SLURM_EXPORT_ENV"), 0u);
       }},
      {"--export=NONE keeps SLURM_* only (job 57)",
       {"#SBATCH --export=NONE"},
       {},
       {{"FOO", "1"}, {"SLURM_CONF", "/etc/slurm.conf"}},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.environment->count("FOO"), 0u);
         EXPECT_EQ(r.spec.environment->at("SLURM_CONF"), "/etc/slurm.conf");
         EXPECT_EQ(r.spec.environment->at("SLURM_EXPORT_ENV"), "NONE");
         EXPECT_EQ(r.spec.environment->at("SLURM_GET_USER_ENV"), "1");
       }},
      {"--export=VAR,VAR=val (job 58)",
       {},
       {"--export=FOO,BAZ=qux"},
       {{"FOO", "bar"}, {"OTHER", "x"}},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.environment->at("FOO"), "bar");
         EXPECT_EQ(r.spec.environment->at("BAZ"), "qux");
         EXPECT_EQ(r.spec.environment->count("OTHER"), 0u);
         EXPECT_EQ(r.spec.environment->at("SLURM_EXPORT_ENV"), "FOO,BAZ=qux");
       }},
      {"--export=ALL,VAR=val",
       {},
       {"--export=ALL,MASTER_PORT=29500"},
       {{"OTHER", "x"}},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.environment->at("OTHER"), "x");
         EXPECT_EQ(r.spec.environment->at("MASTER_PORT"), "29500");
       }},
      {"--open-mode=append (job 57: SLURM_OPEN_MODE=a)",
       {"#SBATCH --open-mode=append"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_TRUE(r.spec.append_output);
         EXPECT_EQ(r.spec.environment->at("SLURM_OPEN_MODE"), "a");
       }},
      {"-D relative to the current directory",
       {"#SBATCH -D run"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.working_dir, "/home/alice/proj/run");
         EXPECT_EQ(r.spec.submit_dir, "/home/alice/proj");
       }},
      {"submit facts",
       {},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.user, "alice");
         EXPECT_EQ(r.spec.uid, 1000u);
         EXPECT_EQ(r.spec.submit_host, "login1");
         EXPECT_EQ(r.spec.working_dir, "/home/alice/proj");
         EXPECT_EQ(r.spec.environment->at("SLURM_PRIO_PROCESS"), "0");
       }},
      {"--nice without a value is 100",
       {"#SBATCH --nice"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.nice, 100); }},
      {"--nice=-5",
       {},
       {"--nice=-5"},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.nice, -5); }},
      {"stored settings",
       {"#SBATCH -H --comment=c --reservation=maint --mail-type=END,FAIL --mail-user=a@b -q high "
        "-A proj -p a100,h100 --exclusive -C ib&h100"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_TRUE(r.spec.hold);
         EXPECT_EQ(r.spec.comment, "c");
         EXPECT_EQ(r.spec.reservation, "maint");
         EXPECT_EQ(r.spec.mail_type, "END,FAIL");
         EXPECT_EQ(r.spec.mail_user, "a@b");
         EXPECT_EQ(r.spec.qos, "high");
         EXPECT_EQ(r.spec.account, "proj");
         EXPECT_EQ(r.spec.partitions, (std::vector<std::string>{"a100", "h100"}));
         EXPECT_TRUE(r.spec.resources.exclusive);
         EXPECT_EQ(r.spec.resources.constraint, "ib&h100");
       }},
      {"--begin",
       {"#SBATCH --begin=now+1hour"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.begin_time, Context().now + std::chrono::hours(1));
       }},
      {"pyxis container options",
       {"#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.01-py3",
        "#SBATCH --container-mounts=/data:/data,/scratch:/scratch:ro",
        "#SBATCH --container-workdir=/workspace --container-name=train",
        "#SBATCH --no-container-mount-home --container-env=NCCL_DEBUG,HF_HOME"},
       {},
       {},
       [](const SubmitRequest& r) {
         // The image's '#' is a comment in a directive, as in Slurm: quote it there.
         EXPECT_EQ(r.spec.container.image, "nvcr.io");
         EXPECT_EQ(r.spec.container.mounts,
                   (std::vector<std::string>{"/data:/data", "/scratch:/scratch:ro"}));
         EXPECT_EQ(r.spec.container.workdir, "/workspace");
         EXPECT_EQ(r.spec.container.name, "train");
         EXPECT_FALSE(r.spec.container.mount_home);
         EXPECT_EQ(r.spec.container.env, (std::vector<std::string>{"NCCL_DEBUG", "HF_HOME"}));
       }},
      {"quoted container image",
       {"#SBATCH --container-image='nvcr.io#nvidia/pytorch:24.01-py3'"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.container.image, "nvcr.io#nvidia/pytorch:24.01-py3");
       }},
      {"accepted options without effect are listed",
       {"#SBATCH --hint=nomultithread"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.client.ignored, (std::vector<std::string>{"--hint=nomultithread"}));
       }},
      {"client settings",
       {"#SBATCH --parsable"},
       {"-W", "--test-only"},
       {},
       [](const SubmitRequest& r) {
         EXPECT_TRUE(r.client.parsable);
         EXPECT_TRUE(r.client.wait);
         EXPECT_TRUE(r.client.test_only);
         EXPECT_EQ(r.client.script_path, "job.sh");
       }},
      {"--wrap in a directive is ignored with a warning",
       {"#SBATCH --wrap=hostname"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.client.wrap, "");
         EXPECT_EQ(r.warnings.size(), 1u);
       }},
  };
  RunCases(cases);
}

TEST(SbatchTest, CredentialsAreNeverExported) {
  const std::map<std::string, std::string> env = {{"CORRAL_TOKEN", "t"},
                                                  {"CORRAL_KEY_FILE", "/home/a/.corral/k"},
                                                  {"CORRAL_JOB_CREDENTIAL", "j"},
                                                  {"FOO", "bar"}};
  for (const char* mode : {"ALL", "CORRAL_TOKEN,CORRAL_KEY_FILE,FOO", "ALL,CORRAL_TOKEN=x"}) {
    auto r = ResolveExport(mode, env);
    ASSERT_TRUE(r.has_value()) << mode;
    EXPECT_EQ(*r, (std::map<std::string, std::string>{{"FOO", "bar"}})) << mode;
  }
}

TEST(SbatchTest, ScriptArgumentsAndTheScriptItself) {
  auto r = ParseSbatch({"-J", "x", "train.sh", "--lr", "0.1"}, "#!/bin/bash -l\necho\n", Context());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->client.script_path, "train.sh");
  EXPECT_EQ(r->client.script_args, (std::vector<std::string>{"--lr", "0.1"}));
  EXPECT_EQ(r->spec.script, "#!/bin/bash -l\necho\n");  // the interpreter line is kept
  // From stdin the job is called "sbatch" (Slurm: JobName=sbatch).
  r = ParseSbatch({}, "#!/bin/sh\ntrue\n", Context());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->spec.name, "sbatch");
  // The script name is its base name.
  r = ParseSbatch({"/home/alice/jobs/run.slurm"}, "#!/bin/sh\n", Context());
  EXPECT_EQ(r->spec.name, "run.slurm");
}

// sbatch rounds a limit up to whole minutes, as Slurm does; `corral submit` keeps seconds.
TEST(SbatchTest, CorralSubmitKeepsTheSecondsOfATimeLimit) {
  SubmitContext ctx = Context();
  auto r = ParseSbatch({"-t", "0:03", "job.sh"}, "#!/bin/sh\n", ctx);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->spec.time_limit, Min(1));
  ctx.exact_time_limits = true;
  r = ParseSbatch({"-t", "0:03", "job.sh"}, "#!/bin/sh\n", ctx);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->spec.time_limit, std::chrono::duration_cast<Duration>(std::chrono::seconds(3)));
  r = ParseSbatch({"--time=1-2:03:04", "job.sh"}, "#!/bin/sh\n", ctx);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->spec.time_limit, std::chrono::duration_cast<Duration>(
                                    std::chrono::seconds(86400 + 2 * 3600 + 3 * 60 + 4)));
  r = ParseSbatch({"--time=UNLIMITED", "job.sh"}, "#!/bin/sh\n", ctx);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->spec.time_limit, kUnlimited);
  EXPECT_FALSE(ParseSbatch({"--time=soon", "job.sh"}, "#!/bin/sh\n", ctx).has_value());
}

TEST(SbatchTest, WrapBuildsSlurmsScript) {
  auto r = ParseSbatch({"--wrap", "echo \"a b\"; hostname"}, "", Context());
  ASSERT_TRUE(r.has_value());
  // Byte for byte what `scontrol write batch_script` showed for job 211.
  EXPECT_EQ(r->spec.script,
            "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho \"a b\"; hostname\n");
  EXPECT_EQ(r->spec.name, "wrap");
  EXPECT_EQ(r->client.wrap, "echo \"a b\"; hostname");
  auto bad = ParseSbatch({"--wrap", "true", "extra_arg"}, "", Context());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "sbatch: error: Script arguments not permitted with --wrap option");
}

// Each message is what the real sbatch 22.05.8 printed (first line where it printed several).
TEST(SbatchTest, ErrorsNameTheProblem) {
  auto err = [](std::vector<std::string> lines, std::vector<std::string> args = {}, Env env = {}) {
    args.push_back("s.sh");
    auto r = ParseSbatch(args, Script(lines), Context(env));
    return r.has_value() ? std::string("accepted") : r.error().message;
  };
  EXPECT_EQ(err({"#SBATCH :"}), "sbatch: fatal: s.sh: line 2: Unexpected `:` in [:]");
  EXPECT_EQ(err({"#SBATCH -J \"un"}), "sbatch: fatal: s.sh: line 2: Unmatched `\"` in [ -J \"un]");
  EXPECT_EQ(err({"#SBATCH -J"}), "sbatch: option requires an argument -- 'J'");
  EXPECT_EQ(err({"#SBATCHX -J y"}), "sbatch: error: Invalid directive found in batch script: X");
  EXPECT_EQ(err({"#SBATCH --tim=4"}),
            "sbatch: option '--tim=4' is ambiguous; possibilities: '--time' '--time-min'");
  EXPECT_EQ(err({"#SBATCH --mem=4G"}, {"--mem-per-cpu=1G"}),
            "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  EXPECT_EQ(err({}, {"-t", "1:2:3:4"}), "sbatch: error: Invalid --time specification");
  EXPECT_EQ(err({}, {"-N", "3-1"}), "sbatch: error: invalid node count `3-1'");

  auto r = ParseSbatch({}, "", Context());
  EXPECT_EQ(r.error().message, "sbatch: error: Batch script is empty!");
  r = ParseSbatch({}, "echo hi\n", Context());
  EXPECT_NE(r.error().message.find("This does not look like a batch script"), std::string::npos);
  r = ParseSbatch({}, "#!/bin/bash\r\n#SBATCH -J x\r\necho\r\n", Context());
  EXPECT_NE(r.error().message.find("DOS line breaks"), std::string::npos);
}

TEST(SbatchTest, UnsupportedOptionsAreRefusedByName) {
  auto r = ParseSbatch({"s.sh"}, Script({"#SBATCH --threads-per-core=1"}), Context());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnimplemented);
  EXPECT_EQ(r.error().message,
            "sbatch: error: option --threads-per-core (in a #SBATCH directive) is not supported by "
            "Corral");
  r = ParseSbatch({"--licenses=matlab", "s.sh"}, Script({}), Context());
  EXPECT_EQ(r.error().message, "sbatch: error: option --licenses is not supported by Corral");
  r = ParseSbatch({"s.sh"}, Script({}), Context({{"SBATCH_WCKEY", "x"}}));
  EXPECT_EQ(r.error().message,
            "sbatch: error: option --wckey (from the environment variable SBATCH_WCKEY) is not "
            "supported by Corral");
  r = ParseSbatch({"--gres=shard:1", "s.sh"}, Script({}), Context());
  EXPECT_EQ(r.error().code, ErrorCode::kUnimplemented);
  EXPECT_NE(r.error().message.find("\"shard\""), std::string::npos);
  r = ParseSbatch({"--exclusive=user", "s.sh"}, Script({}), Context());
  EXPECT_EQ(r.error().code, ErrorCode::kUnimplemented);
  r = ParseSbatch({"--signal=R:USR1", "s.sh"}, Script({}), Context());
  EXPECT_EQ(r.error().code, ErrorCode::kUnimplemented);
}

TEST(SbatchTest, BadValues) {
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{"--array=0-1001"},
                                             {"--array=3-1"},
                                             {"--mem=lots"},
                                             {"-n", "0"},
                                             {"-n", "x"},
                                             {"-c", "-1"},
                                             {"--gres=gpu:a:b:2"},
                                             {"-G", "x"},
                                             {"--open-mode=x"},
                                             {"--signal=FOO"},
                                             {"--signal=USR1@x"},
                                             {"--mail-type=SOMETIMES"},
                                             {"-w", "n[1-"},
                                             {"--begin=soon"},
                                             {"-d", "afterok:x"},
                                             {"--export=NONE,FOO"},
                                             {"--nice=x"},
                                             {"-v", "-Q"}}) {
    args.push_back("s.sh");
    auto r = ParseSbatch(args, Script({}), Context());
    EXPECT_FALSE(r.has_value()) << args[0];
    if (!r.has_value()) {
      EXPECT_EQ(r.error().message.rfind("sbatch: ", 0), 0u) << r.error().message;
    }
  }
}

// A typical multi-node torchrun script.
TEST(SbatchTest, TypicalTorchrunScript) {
  std::string script = R"(#!/bin/bash -l
#SBATCH --job-name=llama-ft        # name
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=96
#SBATCH --mem=0
#SBATCH --time=2-00:00:00
#SBATCH --partition=h100
#SBATCH --output=logs/%x-%j.out
#SBATCH --exclusive
##SBATCH --qos=high
#SBATCH --signal=B:USR1@120 --requeue

export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
#SBATCH --time=1:00:00
srun torchrun --nnodes=$SLURM_NNODES train.py
)";
  auto r = ParseSbatch({"train.sbatch"}, script, Context());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const JobSpec& s = r->spec;
  EXPECT_EQ(s.name, "llama-ft");
  EXPECT_EQ(s.resources.nodes, 2u);
  EXPECT_EQ(s.resources.ntasks, 2u);
  EXPECT_EQ(s.resources.ntasks_per_node, 1u);
  EXPECT_EQ(s.resources.gpus_per_node, 8u);
  EXPECT_EQ(s.resources.cpus_per_task, 96u);
  EXPECT_EQ(s.resources.mem_per_node_mb, kWholeNodeMemory);
  EXPECT_EQ(s.time_limit, Min(2 * 24 * 60));
  EXPECT_EQ(s.partitions, (std::vector<std::string>{"h100"}));
  EXPECT_EQ(s.stdout_path, "logs/%x-%j.out");
  EXPECT_TRUE(s.resources.exclusive);
  EXPECT_EQ(s.qos, "");
  EXPECT_TRUE(s.requeue);
  EXPECT_EQ(s.signal.signal, 10);
  EXPECT_EQ(s.environment->at("SLURM_NTASKS"), "2");
}

TEST(SrunTest, InsideAnAllocationTheJobsVariablesAreDefaults) {
  Env env = {{"SLURM_JOB_ID", "77"},         {"SLURM_NTASKS", "4"},
             {"SLURM_NNODES", "2"},          {"SLURM_JOB_NUM_NODES", "2"},
             {"SLURM_MEM_PER_NODE", "1024"}, {"SLURM_JOB_NAME", "outer"}};
  auto r = ParseSrun({"-l", "--cpu-bind=cores", "--mpi=pmix", "python", "train.py", "-n", "3"},
                     Context(env));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->client.jobid, 77u);
  EXPECT_EQ(r->spec.resources.ntasks, 4u);
  EXPECT_EQ(r->spec.resources.nodes, 2u);
  EXPECT_TRUE(r->client.label);
  EXPECT_EQ(r->client.command, (std::vector<std::string>{"python", "train.py", "-n", "3"}));
  EXPECT_EQ(r->spec.name, "python");
  EXPECT_EQ(r->client.ignored, (std::vector<std::string>{"--cpu-bind=cores", "--mpi=pmix"}));
  // Options on the command line beat the allocation's variables, memory included.
  r = ParseSrun({"-n", "8", "--mem-per-cpu=1G", "--gpus-per-task=1", "-K", "hostname"},
                Context(env));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->spec.resources.ntasks, 8u);
  EXPECT_EQ(r->spec.resources.mem_per_cpu_mb, 1024u);
  EXPECT_EQ(r->spec.resources.mem_per_node_mb, 0u);
  EXPECT_EQ(r->spec.resources.gpus_per_task, 1u);
  EXPECT_EQ(r->client.kill_on_bad_exit, true);
}

TEST(SrunTest, OutsideAnAllocationAndErrors) {
  auto r = ParseSrun({"-N2", "--gres=gpu:4", "bash"}, Context());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_FALSE(r->client.jobid.has_value());
  // --pty: task 0 in a terminal (the step's client side); salloc and sbatch have no --pty.
  auto pty = ParseSrun({"--pty", "bash", "-i"}, Context());
  ASSERT_TRUE(pty.has_value()) << pty.error().message;
  EXPECT_TRUE(pty->client.pty);
  EXPECT_EQ(pty->client.command, (std::vector<std::string>{"bash", "-i"}));
  EXPECT_FALSE(ParseSrun({"bash"}, Context())->client.pty);
  EXPECT_EQ(r->spec.resources.ntasks, 2u);
  EXPECT_EQ(r->spec.resources.gpus_per_node, 4u);
  EXPECT_EQ(r->spec.name, "bash");
  auto bad = ParseSrun({"-n2"}, Context());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "srun: fatal: No command given to execute.");
  bad = ParseSrun({"--multi-prog", "conf"}, Context());
  EXPECT_EQ(bad.error().code, ErrorCode::kUnimplemented);
  EXPECT_TRUE(ParseSrun({"--help"}, Context()).has_value());
}

// pyxis: a job's options reach its steps through Slurm's SPANK variables; srun's own
// options beat them (mounts and variable names add up), and PYXIS_CONTAINER_* are defaults.
TEST(SrunTest, PyxisOptionsAreInheritedFromTheJob) {
  auto job = ParseSbatch(
      {"--container-image=nvcr.io#nvidia/pytorch:24.01-py3", "--container-mounts=/data:/data",
       "--container-name=train", "--no-container-mount-home", "job.sh"},
      Script({"srun python train.py"}), Context());
  ASSERT_TRUE(job.has_value()) << job.error().message;
  Env env = {{"SLURM_JOB_ID", "77"}, {"SLURM_NTASKS", "2"}};
  for (const auto& [k, v] : job->spec.environment) {
    if (k.rfind("SLURM_SPANK_", 0) == 0) env[k] = v;
  }
  EXPECT_EQ(env["SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_image"],
            "nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_EQ(env["SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_mounts"], "/data:/data");
  EXPECT_EQ(env["SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_name"], "train");
  EXPECT_TRUE(env.contains("SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_no_container_mount_home"));
  EXPECT_FALSE(env.contains("SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_workdir"));

  auto r = ParseSrun({"python", "train.py"}, Context(env));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->spec.container.image, "nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_EQ(r->spec.container.mounts, (std::vector<std::string>{"/data:/data"}));
  EXPECT_EQ(r->spec.container.name, "train");
  EXPECT_FALSE(r->spec.container.mount_home);

  r = ParseSrun({"--container-image=ubuntu:24.04", "--container-mounts=/ckpt:/ckpt,/data:/data",
                 "--container-mount-home", "--container-workdir=/w", "true"},
                Context(env));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->spec.container.image, "ubuntu:24.04");
  EXPECT_EQ(r->spec.container.mounts, (std::vector<std::string>{"/data:/data", "/ckpt:/ckpt"}));
  EXPECT_TRUE(r->spec.container.mount_home);
  EXPECT_EQ(r->spec.container.workdir, "/w");

  // pyxis' own variables, below the job's options.
  r = ParseSrun({"true"}, Context({{"PYXIS_CONTAINER_IMAGE", "alpine:3"},
                                   {"PYXIS_CONTAINER_MOUNT_HOME", "0"},
                                   {"PYXIS_CONTAINER_ENV", "NCCL_DEBUG"}}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->spec.container.image, "alpine:3");
  EXPECT_FALSE(r->spec.container.mount_home);
  EXPECT_EQ(r->spec.container.env, (std::vector<std::string>{"NCCL_DEBUG"}));
  env["PYXIS_CONTAINER_IMAGE"] = "alpine:3";
  EXPECT_EQ(ParseSrun({"true"}, Context(env))->spec.container.image,
            "nvcr.io#nvidia/pytorch:24.01-py3");
  auto bad = ParseSrun({"true"}, Context({{"PYXIS_CONTAINER_MOUNT_HOME", "maybe"}}));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "srun: error: invalid PYXIS_CONTAINER_MOUNT_HOME value \"maybe\": expected 1 or 0");
  bad = ParseSrun({"--container-image=", "true"}, Context());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "srun: error: --container-image: argument required");

  // salloc and sbatch read neither (their options are their own).
  auto s = ParseSbatch({"job.sh"}, Script({"true"}), Context(env));
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->spec.container.image.empty());
}

TEST(SallocTest, AllocatesWithAShellOrACommand) {
  auto r = ParseSalloc({"-N2", "--gres=gpu:8", "-t", "60"}, Context());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->spec.name, "interactive");  // as Slurm names salloc jobs
  EXPECT_TRUE(r->client.command.empty());
  EXPECT_EQ(r->spec.resources.nodes, 2u);
  EXPECT_EQ(r->spec.time_limit, Min(60));
  r = ParseSalloc({"-p", "debug", "--no-shell"}, Context({{"SALLOC_PARTITION", "other"}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->client.no_shell);
  EXPECT_EQ(r->spec.partitions, (std::vector<std::string>{"debug"}));
  r = ParseSalloc({"srun", "hostname"}, Context({{"SALLOC_PARTITION", "other"}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->spec.partitions, (std::vector<std::string>{"other"}));
  EXPECT_EQ(r->client.command, (std::vector<std::string>{"srun", "hostname"}));
}

}  // namespace
}  // namespace corral::slurm
