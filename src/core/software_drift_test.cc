#include "core/software_drift.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

NodeSoftware N(std::string name, std::vector<std::string> parts, std::string driver,
               std::string cuda, std::string nccl = "") {
  return {std::move(name), std::move(parts), std::move(driver), std::move(cuda), std::move(nccl)};
}

TEST(SoftwareDriftTest, FlagsTheNodesThatDifferFromTheirPartitionsCommonStack) {
  std::vector<NodeSoftware> nodes = {
      N("a1", {"gpu"}, "550.54", "12.4"),         N("a2", {"gpu"}, "550.54", "12.4"),
      N("a3", {"gpu", "debug"}, "535.1", "12.2"), N("b1", {"debug"}, "535.1", "12.2"),
      N("b2", {"debug"}, "535.1", "12.2"),
  };
  auto drift = FindSoftwareDrift(nodes);
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_EQ(drift.at("a3"), std::vector<std::string>{"gpu"});  // debug's common stack is its
}

TEST(SoftwareDriftTest, ComparesNcclTooAndSkipsNodesWithoutVersions) {
  std::vector<NodeSoftware> nodes = {
      N("a1", {"gpu"}, "550", "12.4", "2.21"),
      N("a2", {"gpu"}, "550", "12.4", "2.21"),
      N("a3", {"gpu"}, "550", "12.4", "2.18"),
      N("a4", {"gpu"}, "", ""),
  };
  auto drift = FindSoftwareDrift(nodes);
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_TRUE(drift.contains("a3"));
}

TEST(SoftwareDriftTest, UniformPartitionsHaveNoDriftAndTiesAreDeterministic) {
  EXPECT_TRUE(
      FindSoftwareDrift(std::vector<NodeSoftware>{N("a", {"p"}, "1", "2"), N("b", {"p"}, "1", "2")})
          .empty());
  // One each: the smaller stack is the common one, so "b" (version 2) differs.
  auto drift = FindSoftwareDrift(
      std::vector<NodeSoftware>{N("b", {"p"}, "2", "12"), N("a", {"p"}, "1", "12")});
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_TRUE(drift.contains("b"));
}

TEST(SoftwareDriftTest, DescribesVersions) {
  EXPECT_EQ(DescribeSoftware(N("a", {}, "550.54", "12.4", "2.21")),
            "driver 550.54, CUDA 12.4, NCCL 2.21");
  EXPECT_EQ(DescribeSoftware(N("a", {}, "", "12.4")), "driver ?, CUDA 12.4");
}

}  // namespace
}  // namespace corral
