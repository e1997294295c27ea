#include "cli/slurm/job_ids.h"

#include <gtest/gtest.h>

namespace corral::slurm {
namespace {

TEST(JobIdsTest, ParsesSlurmForms) {
  auto r = ParseJobIdList("12,13_3,14_[1-3,7],15_*");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, (std::vector<JobIdSpec>{
                    {12, false, {}}, {13, false, {3}}, {14, false, {1, 2, 3, 7}}, {15, true, {}}}));
  EXPECT_EQ(ParseJobIdList("12_1-2")->front().array_tasks, (std::vector<uint32_t>{1, 2}));
  for (std::string_view bad : {"", "x", "12_", "12_[1-", "12_a", "-1", "12_[1-3%2]", ","}) {
    EXPECT_FALSE(ParseJobIdList(bad).has_value()) << bad;
  }
  EXPECT_EQ(ParseJobIdList("12_a").error().message, "Invalid job id specified: 12_a");
}

TEST(JobIdsTest, SubmittedMessages) {
  EXPECT_EQ(SubmittedMessage(218, false), "Submitted batch job 218\n");
  EXPECT_EQ(SubmittedMessage(218, true), "218\n");
  EXPECT_EQ(SubmittedMessage(218, true, "anchor"), "218;anchor\n");
}

}  // namespace
}  // namespace corral::slurm
