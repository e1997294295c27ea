#include "store/internal/record_codec.h"

#include <random>
#include <string>

#include <gtest/gtest.h>

#include "store/internal/schema.h"
#include "store/testing/populated_records.h"

namespace corral::store::internal {
namespace {

using testing::PopulatedJob;
using testing::PopulatedNode;

JobSpec SpecRoundTrip(const JobSpec& in) {
  std::string blob;
  EncodeJobSpec(in, &blob);
  JobSpec out;
  out.name = in.name;  // columns, not in the blob
  out.user = in.user;
  out.account = in.account;
  Status s = DecodeJobSpec(blob, &out);
  EXPECT_TRUE(s.has_value()) << s.error().message;
  return out;
}

TEST(RecordCodecTest, JobSpecRoundTrips) {
  for (uint32_t v = 0; v < 4; ++v) {
    JobSpec spec = PopulatedJob(1, v).spec;
    EXPECT_EQ(SpecRoundTrip(spec), spec) << v;
  }
  EXPECT_EQ(SpecRoundTrip(JobSpec{}), JobSpec{});
}

TEST(RecordCodecTest, ZeroIsKeptWhereTheDefaultIsNot) {
  JobSpec spec;
  spec.resources.nodes = 0;  // default 1
  spec.resources.ntasks = 0;
  spec.container.mount_home = false;  // default true
  spec.time_limit = Duration(0);      // set, even though zero
  EXPECT_EQ(SpecRoundTrip(spec), spec);
}

TEST(RecordCodecTest, AllocationAndNodeRoundTrip) {
  Allocation alloc = PopulatedJob(1, 2).allocation;
  std::string blob;
  EncodeAllocation(alloc, &blob);
  Allocation a;
  ASSERT_TRUE(DecodeAllocation(blob, &a).has_value());
  EXPECT_EQ(a, alloc);

  for (const Node& node : {PopulatedNode(7, 1), Node{}}) {
    EncodeNodeBody(node, &blob);
    Node n;
    n.id = node.id;
    n.inventory.name = node.inventory.name;
    Status s = DecodeNodeBody(blob, &n);
    ASSERT_TRUE(s.has_value()) << s.error().message;
    EXPECT_EQ(n, node);
  }
}

TEST(RecordCodecTest, UnknownFieldsAreSkipped) {
  JobSpec spec = PopulatedJob(1, 0).spec;
  std::string blob;
  EncodeJobSpec(spec, &blob);
  // Field 1000 as a varint, field 1001 as bytes, field 1002 as fixed64: a newer writer's.
  blob += std::string("\xc0\x3e\x05", 3);
  blob += std::string(
      "\xca\x3e\x03"
      "abc",
      6);
  blob += std::string(
      "\xd1\x3e"
      "12345678",
      10);
  JobSpec out;
  out.name = spec.name;
  out.user = spec.user;
  out.account = spec.account;
  Status s = DecodeJobSpec(blob, &out);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(out, spec);
}

TEST(RecordCodecTest, BadInputIsAnErrorNeverACrash) {
  std::string blob;
  EncodeJobSpec(PopulatedJob(1, 0).spec, &blob);
  JobSpec out;
  EXPECT_EQ(DecodeJobSpec("", &out).error().message, "empty encoding");
  EXPECT_EQ(DecodeJobSpec("\x07", &out).error().message,
            "unknown encoding version 7 (this binary reads 1)");
  // Every truncation either fails with a message or (at a field boundary) decodes.
  int failures = 0;
  for (size_t n = 1; n < blob.size(); ++n) {
    JobSpec partial;
    Status s = DecodeJobSpec(std::string_view(blob).substr(0, n), &partial);
    if (!s.has_value()) {
      ++failures;
      EXPECT_EQ(s.error().code, ErrorCode::kInternal);
      EXPECT_NE(s.error().message.find("byte"), std::string::npos) << s.error().message;
    }
  }
  EXPECT_GT(failures, 0);
  // Random damage: no crash, no sanitizer report.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string damaged = blob;
    for (int k = 0; k < 3; ++k)
      damaged[1 + rng() % (damaged.size() - 1)] = static_cast<char>(rng());
    JobSpec d;
    (void)DecodeJobSpec(damaged, &d);
    Allocation a;
    (void)DecodeAllocation(damaged, &a);
    Node n;
    (void)DecodeNodeBody(damaged, &n);
  }
}

TEST(RecordCodecTest, WrongWireTypeNamesTheField) {
  // Version, then field 5 (script) as a varint instead of bytes.
  std::string blob = std::string("\x01\x28\x01", 3);
  JobSpec out;
  Status s = DecodeJobSpec(blob, &out);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().message, "wire type 0, expected 2 (field 5, byte 2)");
}

TEST(RecordCodecTest, StateNamesMapBothWays) {
  for (int i = 0; i <= static_cast<int>(JobState::kPreempted); ++i) {
    JobState s;
    ASSERT_TRUE(JobStateFromName(JobStateName(static_cast<JobState>(i)), &s));
    EXPECT_EQ(s, static_cast<JobState>(i));
  }
  JobState s;
  EXPECT_FALSE(JobStateFromName("running", &s));
  EXPECT_FALSE(JobStateFromName("", &s));
}

// A reminder, not a proof: when a field is added to a record, the codec (record_codec.cc),
// the columns (schema.h) and the populating helpers (testing/populated_records.cc) must learn
// it too; then update these sizes. (x86-64, libstdc++.)
TEST(RecordCodecTest, RecordLayoutsAreKnown) {
  EXPECT_EQ(sizeof(Job), 1392u) << "Job changed: update the store's codec, schema and helpers";
  EXPECT_EQ(sizeof(JobSpec), 1024u) << "JobSpec changed: update the store codec";
  EXPECT_EQ(sizeof(ResourceRequest), 184u) << "ResourceRequest changed: update the store codec";
  EXPECT_EQ(sizeof(ContainerSpec), 152u) << "ContainerSpec changed: update the store codec";
  EXPECT_EQ(sizeof(Dependency), 40u) << "Dependency changed: update the store codec";
  EXPECT_EQ(sizeof(SignalSpec), 24u) << "SignalSpec changed: update the store codec";
  EXPECT_EQ(sizeof(Allocation), 64u) << "Allocation changed: update the store codec";
  EXPECT_EQ(sizeof(NodeAllocation), 64u) << "NodeAllocation changed: update the store codec";
  EXPECT_EQ(sizeof(JobUsage), 56u) << "JobUsage changed: update the store schema";
  EXPECT_EQ(sizeof(Node), 336u) << "Node changed: update the store codec";
  EXPECT_EQ(sizeof(NodeInventory), 264u) << "NodeInventory changed: update the store codec";
  EXPECT_EQ(sizeof(GpuInfo), 112u) << "GpuInfo changed: update the store codec";
}

}  // namespace
}  // namespace corral::store::internal
