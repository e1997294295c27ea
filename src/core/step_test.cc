#include "core/step.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

// A running job on `nodes` nodes with `cpus` CPUs and `gpus` GPUs (from index `first_gpu`)
// on each.
Job RunningJob(uint32_t nodes, uint32_t cpus, uint32_t gpus, uint32_t first_gpu = 0) {
  Job j;
  j.id = JobId(42);
  j.state = JobState::kRunning;
  j.spec.name = "train";
  j.spec.user = "alice";
  j.spec.working_dir = "/home/alice/run";
  j.spec.resources.nodes = nodes;
  j.allocation.generation = Generation(7);
  for (uint32_t i = 0; i < nodes; ++i) {
    NodeAllocation na;
    na.node_name = "node0" + std::to_string(i + 1);
    na.cpus = cpus;
    for (uint32_t g = 0; g < gpus; ++g) na.gpus.insert(first_gpu + g);
    j.allocation.nodes.push_back(na);
  }
  return j;
}

StepSpec Cmd() {
  StepSpec s;
  s.argv = {"hostname"};
  return s;
}

TEST(PlanStepTest, DefaultIsOneTaskPerNodeWithAllTheNodesGpus) {
  auto l = PlanStep(RunningJob(2, 8, 4), Cmd());
  ASSERT_TRUE(l.has_value()) << l.error().message;
  EXPECT_EQ(l->nodes, (std::vector<std::string>{"node01", "node02"}));
  EXPECT_EQ(l->tasks_per_node, (std::vector<uint32_t>{1, 1}));
  ASSERT_EQ(l->tasks.size(), 2u);
  EXPECT_EQ(l->tasks[1].rank, 1u);
  EXPECT_EQ(l->tasks[1].node_rank, 1u);
  EXPECT_EQ(l->tasks[1].local_rank, 0u);
  EXPECT_EQ(l->tasks[1].node, "node02");
  EXPECT_EQ(l->tasks[1].gpus.ToString(), "0,1,2,3");
  EXPECT_EQ(l->cpus_per_task, 1u);
}

TEST(PlanStepTest, InheritsTheJobsTasksPerNode) {
  Job j = RunningJob(2, 8, 4);
  j.spec.resources.ntasks_per_node = 4;
  auto l = PlanStep(j, Cmd());
  ASSERT_TRUE(l.has_value()) << l.error().message;
  EXPECT_EQ(l->tasks.size(), 8u);
  EXPECT_EQ(l->tasks_per_node, (std::vector<uint32_t>{4, 4}));
  // A step on fewer nodes does not inherit the job's task count.
  StepSpec one = Cmd();
  one.nodes = 1;
  EXPECT_EQ(PlanStep(j, one)->tasks.size(), 1u);
}

TEST(PlanStepTest, BlockDistributionSpreadsRemainderOverFirstNodes) {
  StepSpec s = Cmd();
  s.ntasks = 5;
  auto l = PlanStep(RunningJob(2, 8, 0), s);
  ASSERT_TRUE(l.has_value()) << l.error().message;
  EXPECT_EQ(l->tasks_per_node, (std::vector<uint32_t>{3, 2}));
  EXPECT_EQ(l->tasks[2].node, "node01");
  EXPECT_EQ(l->tasks[2].local_rank, 2u);
  EXPECT_EQ(l->tasks[3].node, "node02");
  EXPECT_EQ(l->tasks[3].local_rank, 0u);
  EXPECT_EQ(l->tasks[4].rank, 4u);
}

TEST(PlanStepTest, FewerTasksThanNodesUsesFewerNodes) {
  StepSpec s = Cmd();
  s.ntasks = 1;
  auto l = PlanStep(RunningJob(3, 8, 0), s);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->nodes, (std::vector<std::string>{"node01"}));
  s.nodes = 2;
  auto bad = PlanStep(RunningJob(3, 8, 0), s);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message,
            "ntasks: 1 tasks cannot run on 2 nodes (each node runs at least one)");
}

TEST(PlanStepTest, NtasksPerNodeChoosesTheNodeCount) {
  StepSpec s = Cmd();
  s.ntasks = 3;
  s.ntasks_per_node = 2;
  auto l = PlanStep(RunningJob(4, 8, 0), s);
  ASSERT_TRUE(l.has_value()) << l.error().message;
  EXPECT_EQ(l->tasks_per_node, (std::vector<uint32_t>{2, 1}));
  s.nodes = 1;
  EXPECT_EQ(PlanStep(RunningJob(4, 8, 0), s).error().message,
            "ntasks: 3 tasks do not fit 1 nodes at 2 per node");
  s.nodes = 3;
  EXPECT_EQ(PlanStep(RunningJob(4, 8, 0), s).error().message,
            "nodes: 3 nodes are more than 3 tasks at 2 per node need");
}

TEST(PlanStepTest, GpusPerTaskBindsDisjointGpusInIndexOrder) {
  StepSpec s = Cmd();
  s.ntasks_per_node = 2;
  s.gpus_per_task = 2;
  auto l = PlanStep(RunningJob(2, 8, 4, /*first_gpu=*/2), s);
  ASSERT_TRUE(l.has_value()) << l.error().message;
  ASSERT_EQ(l->tasks.size(), 4u);
  EXPECT_EQ(l->tasks[0].gpus.ToString(), "2,3");
  EXPECT_EQ(l->tasks[1].gpus.ToString(), "4,5");
  EXPECT_EQ(l->tasks[2].gpus.ToString(), "2,3");
  EXPECT_EQ(l->tasks[3].gpus.ToString(), "4,5");
  s.gpus_per_task = 3;
  auto bad = PlanStep(RunningJob(2, 8, 4, 2), s);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "gpus_per_task: 2 tasks x 3 GPUs exceed the 4 GPUs job 42 holds on node node01");
}

TEST(PlanStepTest, CpusAreCheckedUnlessOvercommitted) {
  StepSpec s = Cmd();
  s.ntasks_per_node = 4;
  s.cpus_per_task = 2;
  auto bad = PlanStep(RunningJob(1, 4, 0), s);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "cpus_per_task: 4 tasks x 2 CPUs exceed the 4 CPUs job 42 holds on node node01");
  s.overcommit = true;
  EXPECT_TRUE(PlanStep(RunningJob(1, 4, 0), s).has_value());
}

TEST(PlanStepTest, Errors) {
  StepSpec s = Cmd();
  s.nodes = 3;
  EXPECT_EQ(PlanStep(RunningJob(2, 8, 0), s).error().message,
            "nodes: 3 requested, but job 42 holds only 2");
  EXPECT_EQ(PlanStep(RunningJob(2, 8, 0), StepSpec{}).error().message, "argv: no program to run");
  Job pending = RunningJob(1, 1, 0);
  pending.allocation.nodes.clear();
  EXPECT_EQ(PlanStep(pending, Cmd()).error().code, ErrorCode::kFailedPrecondition);
}

TEST(StepTest, MasterPortCandidateIsDeterministicInRange) {
  EXPECT_EQ(MasterPortCandidate(JobId(42), 29500, 30499), 29542u);
  EXPECT_EQ(MasterPortCandidate(JobId(1042), 29500, 30499), 29542u);
  EXPECT_EQ(MasterPortCandidate(JobId(7), 40000, 40000), 40000u);
  EXPECT_EQ(MasterPortCandidate(JobId(7), 1, 65535), 8u);
}

TEST(StepTest, CheckpointDirectoryIsStablePerJob) {
  Job j = RunningJob(2, 8, 0);
  EXPECT_EQ(CheckpointDirectory(j, ""), "/home/alice/run/.corral/checkpoints/42");
  EXPECT_EQ(CheckpointDirectory(j, "/shared/ckpt/"), "/shared/ckpt/42");
  j.spec.working_dir = "/";
  EXPECT_EQ(CheckpointDirectory(j, ""), "/.corral/checkpoints/42");
}

TEST(StepTest, RendezvousHostIsTheAgentsHost) {
  EXPECT_EQ(RendezvousHost("http://127.0.0.1:6901", "node01"), "127.0.0.1");
  EXPECT_EQ(RendezvousHost("http://gpu-07:6901/", "gpu-07"), "gpu-07");
  EXPECT_EQ(RendezvousHost("http://0.0.0.0:6901", "gpu-07"), "gpu-07");
  EXPECT_EQ(RendezvousHost("http://[fe80::1]:6901", "n"), "fe80::1");
  EXPECT_EQ(RendezvousHost("", "n"), "n");
}

// srun -w/-x/-r inside an allocation: the step lands where asked, or is refused by name.
TEST(PlanStepTest, NodelistPlacesTheStepOnTheNamedNodes) {
  Job j = RunningJob(4, 8, 2);
  StepSpec s = Cmd();
  s.nodelist = {"node03"};
  auto l = PlanStep(j, s);
  ASSERT_TRUE(l.has_value()) << l.error().message;
  EXPECT_EQ(l->nodes, (std::vector<std::string>{"node03"}));
  ASSERT_EQ(l->tasks.size(), 1u);
  EXPECT_EQ(l->tasks[0].node, "node03");
  // With -N larger than the list, the other nodes are the first candidates, in job order.
  s.nodes = 2;
  s.nodelist = {"node04"};
  EXPECT_EQ(PlanStep(j, s)->nodes, (std::vector<std::string>{"node01", "node04"}));
  s.nodes = 1;
  s.nodelist = {"node02", "node04"};
  EXPECT_EQ(PlanStep(j, s).error().message, "nodes: 1 nodes are fewer than the 2 of --nodelist");
  s.nodes = 0;
  s.nodelist = {"node09"};
  EXPECT_EQ(PlanStep(j, s).error().message, "nodelist: node node09 is not in job 42's allocation");
}

TEST(PlanStepTest, ExcludeAndRelativeNarrowTheCandidates) {
  Job j = RunningJob(4, 8, 2);
  StepSpec s = Cmd();
  s.exclude = {"node01", "node03"};
  EXPECT_EQ(PlanStep(j, s)->nodes, (std::vector<std::string>{"node02", "node04"}));
  s.nodes = 3;
  EXPECT_EQ(PlanStep(j, s).error().message,
            "nodes: 3 requested, but job 42 has only 2 nodes left by --exclude/--relative");
  s = Cmd();
  s.relative = 2;
  s.nodes = 1;
  auto l = PlanStep(j, s);
  ASSERT_TRUE(l.has_value()) << l.error().message;
  EXPECT_EQ(l->nodes, (std::vector<std::string>{"node03"}));
  s.relative = 4;
  EXPECT_EQ(PlanStep(j, s).error().message, "relative: node index 4 is past job 42's 4 nodes");
  s.relative = 1;
  s.nodelist = {"node01"};
  EXPECT_EQ(PlanStep(j, s).error().message,
            "nodelist: node node01 is excluded (--exclude, or before node index 1 of --relative)");
  s = Cmd();
  s.exclude = {"node01", "node02", "node03", "node04"};
  EXPECT_EQ(PlanStep(j, s).error().message,
            "exclude: --exclude/--relative leave none of job 42's 4 nodes for the step");
  s = Cmd();
  s.exclude = {"nodeX"};
  EXPECT_EQ(PlanStep(j, s).error().message, "exclude: node nodeX is not in job 42's allocation");
}

}  // namespace
}  // namespace corral
