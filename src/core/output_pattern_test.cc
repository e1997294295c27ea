#include "core/output_pattern.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

// Values of a plain batch job: job 7 "myname" of root on node "vm".
OutputPatternValues Plain(uint64_t job_id) {
  OutputPatternValues v;
  v.job_id = job_id;
  v.job_name = "myname";
  v.user = "root";
  v.node_name = "vm";
  return v;
}

struct Case {
  std::string_view pattern;
  uint64_t job_id;
  std::string_view want;
};

// Every expected string below is the file name a real Slurm 22.05.8 created for the pattern
// (sbatch -J myname -o PATTERN --wrap true, as root, on node "vm").
TEST(OutputPatternTest, MatchesSlurmForPlainBatchJobs) {
  const Case cases[] = {
      {"p1_%j_%J_%A_%a.out", 1, "p1_1_1_1_4294967294.out"},
      {"p2_%x_%u_%N_%n_%t_%s.out", 2, "p2_myname_root_vm_0_0_batch.out"},
      {"p3_%3a_%5j_%10j_%12j.out", 3, "p3_4294967294_00003_0000000003_0000000003.out"},
      {"p4_%%_%q_%_end%.out", 4, "p4_%_%q_%_end%.out"},
      {"p5_%b.out", 5, "p5_%b.out"},  // %b is not a field in 22.05
      {"p6\\_%j.out", 6, "p6_%j.out"},
      {"p7_%3x_%3N_%0j_%03j.out", 7, "p7_myname_vm_7_007.out"},
      {"p8_%2%_%j_%1_z", 8, "p8_2%_8_1_z"},
      {"p9_%j%", 9, "p9_9%"},
      {"p10_%99j_%123j.out", 10, "p10_0000000010_0000000010.out"},
      {"p11_%3%%j", 11, "p11_3%j"},
      {"q1_%12_x", 20, "q1_2_x"},
      {"q2_%12q", 21, "q2_2q"},
      {"q3_%%j", 22, "q3_%j"},
      {"q4_%5%j", 23, "q4_523"},
      {"q5_%3t_%3n_%3s_%3u_%2J", 24, "q5_000_000_batch_root_24"},
      {"q6_a\\\\b_%j", 25, "q6_a\\b_%j"},
      {"q7_%j\\", 26, "q7_%j"},
      {"q8_%", 27, "q8_%"},
      {"q9_%%%j", 28, "q9_%28"},
      {"q10_%0000003j", 29, "q10_029"},
      {"q11_%-3j", 30, "q11_%-3j"},
      {"o_%j.out", 15, "o_15.out"},
      {"$HOME/~/%j", 15, "$HOME/~/15"},  // no shell expansion
      {"", 1, ""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ExpandOutputPattern(c.pattern, Plain(c.job_id)), c.want) << c.pattern;
  }
}

TEST(OutputPatternTest, MatchesSlurmForArrayTasks) {
  // sbatch -J myname -a 1-3,7 -o 'arr_%A_%a_%3a_%j_%J_%s_%b.out': array 12, tasks 16,17,18,12.
  OutputPatternValues v = Plain(16);
  v.array_job_id = 12;
  v.array_task_id = 1;
  EXPECT_EQ(ExpandOutputPattern("arr_%A_%a_%3a_%j_%J_%s_%b.out", v),
            "arr_12_1_001_16_16_batch_%b.out");
  v.job_id = 12;
  v.array_task_id = 7;
  EXPECT_EQ(ExpandOutputPattern("arr_%A_%a_%3a_%j_%J_%s_%b.out", v),
            "arr_12_7_007_12_12_batch_%b.out");
  // sbatch -a 5 -o 'q15_%0a_%1a_%2a.out'
  v.array_task_id = 5;
  EXPECT_EQ(ExpandOutputPattern("q15_%0a_%1a_%2a.out", v), "q15_5_5_05.out");
  EXPECT_EQ(ExpandOutputPattern("%12A", v), "0000000012");
}

TEST(OutputPatternTest, StepsNameTheirStepAndTask) {
  OutputPatternValues v = Plain(42);
  v.step_id = 3;
  v.node_index = 1;
  v.task_id = 5;
  v.node_name = "gpu-02";
  EXPECT_EQ(ExpandOutputPattern("%J_%s_%2n_%3t_%N", v), "42.3_3_01_005_gpu-02");
  EXPECT_EQ(ExpandOutputPattern("%4J", v), "0042.3");
  // srun -n2 -o "st_%J_%s_%t_%n_%4J_%3s.out" inside batch job 36 (real Slurm 22.05.8).
  OutputPatternValues s = Plain(36);
  s.step_id = 0;
  s.task_id = 1;
  EXPECT_EQ(ExpandOutputPattern("st_%J_%s_%t_%n_%4J_%3s.out", s), "st_36.0_0_1_0_0036.0_000.out");
  EXPECT_EQ(ExpandOutputPattern("r1_%12", s), "r1_2");
}

TEST(OutputPatternTest, EmptyJobNameGivesEmptyField) {
  OutputPatternValues v = Plain(32);
  v.job_name = "";
  EXPECT_EQ(ExpandOutputPattern("q13_[%x].out", v), "q13_[].out");
}

TEST(OutputPatternTest, DefaultsFollowSlurm) {
  EXPECT_EQ(DefaultOutputPattern(false), "slurm-%j.out");
  EXPECT_EQ(DefaultOutputPattern(true), "slurm-%A_%a.out");
  OutputPatternValues v = Plain(13);
  EXPECT_EQ(ResolveOutputPath("", v, "/home/u"), "/home/u/slurm-13.out");
  v.job_id = 15;
  v.array_job_id = 14;
  v.array_task_id = 1;
  EXPECT_EQ(ResolveOutputPath("", v, "/home/u/"), "/home/u/slurm-14_1.out");
  EXPECT_EQ(ResolveOutputPath("/abs/%j.log", v, "/home/u"), "/abs/15.log");
  EXPECT_EQ(ResolveOutputPath("logs/%x-%j.log", v, "/w"), "/w/logs/myname-15.log");
  EXPECT_EQ(ResolveOutputPath("logs/%j.log", v, ""), "logs/15.log");
}

}  // namespace
}  // namespace corral
