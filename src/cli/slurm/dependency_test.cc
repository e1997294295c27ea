#include "cli/slurm/dependency.h"

#include <gtest/gtest.h>

namespace corral::slurm {
namespace {

Dependency D(DependencyType t, std::vector<uint64_t> ids, int delay_min = 0) {
  Dependency d{.type = t};
  for (auto id : ids) d.jobs.push_back(JobId(id));
  d.delay = std::chrono::duration_cast<Duration>(std::chrono::minutes(delay_min));
  return d;
}

TEST(DependencyTest, ParsesListsAndTypes) {
  auto r = ParseDependencySpec("afterok:12:13,afterany:14");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_FALSE(r->any);
  EXPECT_EQ(r->dependencies, (std::vector<Dependency>{D(DependencyType::kAfterOk, {12, 13}),
                                                      D(DependencyType::kAfterAny, {14})}));
  r = ParseDependencySpec("afternotok:5?afterok:6");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->any);
  EXPECT_EQ(r->dependencies.size(), 2u);
  r = ParseDependencySpec("singleton");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->dependencies,
            (std::vector<Dependency>{Dependency{.type = DependencyType::kSingleton}}));
  r = ParseDependencySpec("after:7+5:8,aftercorr:9,AFTEROK:10");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->dependencies,
            (std::vector<Dependency>{
                D(DependencyType::kAfter, {7}, 5), D(DependencyType::kAfter, {8}),
                D(DependencyType::kAfterCorr, {9}), D(DependencyType::kAfterOk, {10})}));
  // A job resubmitting itself: sbatch --dependency=afterok:$SLURM_JOB_ID $0
  EXPECT_TRUE(ParseDependencySpec("afterok:4294967296").has_value());
}

TEST(DependencyTest, RejectsMalformed) {
  for (std::string_view bad :
       {"afterok", "afterok:", "afterok:x", "before:1", "afterok:1,afterany:2?after:3",
        "afterok:1+5", "singleton:3", "", "afterok:1,,afterok:2"}) {
    auto r = ParseDependencySpec(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseDependencySpec("afterok:12_3").error().code, ErrorCode::kUnimplemented);
  // Found by the fuzzer: a delay too large for a duration.
  EXPECT_FALSE(ParseDependencySpec("after:7+5129666666966").has_value());
  EXPECT_EQ(ParseDependencySpec("expand:12").error().code, ErrorCode::kUnimplemented);
}

TEST(DependencyTest, FormatsAsSlurmShowsThem) {
  auto r = ParseDependencySpec("afterok:12:13,after:7+5");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(FormatDependencies(r->dependencies, r->any), "afterok:12:13,after:7+5");
  r = ParseDependencySpec("afterok:1?afterany:2");
  EXPECT_EQ(FormatDependencies(r->dependencies, r->any), "afterok:1?afterany:2");
}

}  // namespace
}  // namespace corral::slurm
