// #SBATCH directives (directives.h), as sbatch reads them, through ParseSbatch and alone.
#include "cli/slurm/directives.h"

#include <gtest/gtest.h>

#include "cli/slurm/testing/sbatch_cases.h"

namespace corral::slurm {
namespace {

using testing::Case;
using testing::Min;
using testing::RunCases;
using testing::Script;

// Where a comment names a job, the same script was submitted to a real Slurm 22.05.8 and
// `scontrol show job` showed the values checked.
TEST(SbatchDirectivesTest, ReadAsSlurmReadsThem) {
  const std::vector<Case> cases = {
      {"inline comment ends the directive",
       {"#SBATCH --job-name=a2 # comment -t 5"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "a2");
         EXPECT_FALSE(r.spec.time_limit.has_value());
       }},
      {"##SBATCH is disabled",
       {"##SBATCH -J b3"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.name, "job.sh"); }},
      {"several options on one line",
       {"#SBATCH -J c4 -p debug -t 7"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "c4");
         EXPECT_EQ(r.spec.partitions, (std::vector<std::string>{"debug"}));
         EXPECT_EQ(r.spec.time_limit, Min(7));
       }},
      {"#SBATCH--opt without a space",
       {"#SBATCH--job-name=d5"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.name, "d5"); }},
      {"directives after the first command are ignored",
       {"echo hi", "#SBATCH -J e6"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.name, "job.sh"); }},
      {"indented #SBATCH is a comment; scanning goes on",
       {" #SBATCH -J f7", "#SBATCH -t 3"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "job.sh");
         EXPECT_EQ(r.spec.time_limit, Min(3));
       }},
      {"blank lines and comments between directives",
       {"#SBATCH -J one", "   ", "  # indented comment", "", "#!/bin/sh", "#SBATCH -t 9"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "one");
         EXPECT_EQ(r.spec.time_limit, Min(9));
       }},
      {"quotes group words",
       {"#SBATCH -J 'g8 g' --comment=\"hello world\""},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "g8 g");
         EXPECT_EQ(r.spec.comment, "hello world");
       }},
      {"$VAR and ~ are not expanded",
       {"#SBATCH -J $USER -o ~/logs/$SLURM_JOB_ID.out"},
       {},
       {{"USER", "alice"}},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "$USER");
         EXPECT_EQ(r.spec.stdout_path, "~/logs/$SLURM_JOB_ID.out");
       }},
      {"lower-case #sbatch is not a directive",
       {"#sbatch -J h9"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.name, "job.sh"); }},
      {"#SLURM is an old spelling Slurm still reads",
       {"#SLURM -J x1"},
       {},
       {},
       [](const SubmitRequest& r) { EXPECT_EQ(r.spec.name, "x1"); }},
      {"unescaped # ends a word, escaped # does not",
       {"#SBATCH -J x#y", "#SBATCH --comment=a\\#b"},
       {},
       {},
       [](const SubmitRequest& r) {
         EXPECT_EQ(r.spec.name, "x");
         EXPECT_EQ(r.spec.comment, "a#b");
       }},
  };
  RunCases(cases);
}

TEST(ExtractDirectivesTest, WordsAsSlurmSplitsThem) {
  auto w = ExtractDirectives(Script({"#SBATCH -J 'a b' --comment=\"x y\"z -o o\\ p",
                                     "#SBATCH \"\" -t 5", "cmd", "#SBATCH -N 2"}));
  ASSERT_TRUE(w.has_value());
  // A backslash before a blank does not join words, and "" ends the line (real sbatch: "o\ p"
  // gives "Invalid directive found in batch script: p"; `-J "" -t 5` a missing -J argument).
  EXPECT_EQ(*w, (std::vector<std::string>{"-J", "a b", "--comment=x yz", "-o", "o", "p"}));
}

}  // namespace
}  // namespace corral::slurm
