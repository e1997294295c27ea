#include "controller/internal/partitions.h"

#include <gtest/gtest.h>

namespace corral::controller::internal {
namespace {

TEST(PartitionsTest, NoneConfiguredGivesOneDefaultPartitionHoldingEveryNode) {
  Partitions p({});
  ASSERT_EQ(p.all().size(), 1u);
  EXPECT_EQ(p.Default().name, "main");
  EXPECT_TRUE(p.Default().is_default);
  EXPECT_EQ(p.Of("anything"), (std::vector<std::string>{"main"}));
}

TEST(PartitionsTest, HostListsAreExpandedOnce) {
  Partitions p({Partition{.name = "gpu", .nodes = {"gpu[01-03]", "big"}}, Partition{.name = "all"},
                Partition{.name = "cpu", .nodes = {"cpu[1-2]"}}});
  EXPECT_EQ(p.Find("gpu")->nodes, (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "big"}));
  EXPECT_TRUE(Partitions::Holds(*p.Find("gpu"), "gpu02"));
  EXPECT_FALSE(Partitions::Holds(*p.Find("gpu"), "gpu04"));
  EXPECT_EQ(p.Of("big"), (std::vector<std::string>{"gpu", "all"}));
  EXPECT_EQ(p.Of("cpu2"), (std::vector<std::string>{"all", "cpu"}));
}

TEST(PartitionsTest, TheDefaultIsTheMarkedOneElseTheFirst) {
  EXPECT_EQ(Partitions({Partition{.name = "a"}, Partition{.name = "b", .is_default = true}})
                .Default()
                .name,
            "b");
  EXPECT_EQ(Partitions({Partition{.name = "a"}, Partition{.name = "b"}}).Default().name, "a");
  EXPECT_EQ(Partitions({Partition{.name = "a"}}).Find("nope"), nullptr);
}

}  // namespace
}  // namespace corral::controller::internal
