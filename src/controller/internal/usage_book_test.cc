#include "controller/internal/usage_book.h"

#include <variant>

#include <gtest/gtest.h>

namespace corral::controller::internal {
namespace {

const Timestamp kT0 = Timestamp(Seconds(1'700'000'000));
const MonoTime kM0 = MonoTime(Seconds(1000));

sched::RunningJobView TwoGpuJob(Timestamp start) {
  sched::RunningJobView v;
  v.id = JobId(1);
  v.user = "alice";
  v.account = "nlp";
  v.start_time = start;
  v.allocation.nodes.push_back({.node_name = "n1", .gpus = GpuSet(0b11)});
  return v;
}

std::map<std::string, std::string> Meta(const Outputs& out) {
  std::map<std::string, std::string> meta;
  for (const auto& op : out.writes.ops()) {
    if (auto* put = std::get_if<store::WriteBatch::PutMetaOp>(&op)) meta[put->key] = put->value;
  }
  return meta;
}

TEST(UsageBookTest, TheLedgerIsRecordedAtMostOnceAMinuteAndRecovered) {
  sched::SchedulerConfig config = sched::DefaultSchedulerConfig();
  Outputs out;
  UsageBook usage(config, out);
  usage.Advance(kT0, {});
  usage.ChargeEnded(TwoGpuJob(kT0), kT0 + Seconds(100));
  ASSERT_EQ(usage.ledger().Entries().size(), 1u);
  EXPECT_DOUBLE_EQ(usage.ledger().Entries()[0].period_gpu_seconds, 200);
  usage.PersistIfDue(kM0);
  EXPECT_EQ(out.writes.size(), 2u);
  usage.PersistIfDue(kM0 + Seconds(59));
  EXPECT_EQ(out.writes.size(), 2u) << "less than a minute later: not again";
  usage.PersistIfDue(kM0 + Seconds(60));
  EXPECT_EQ(out.writes.size(), 4u);

  std::map<std::string, std::string> meta = Meta(out);
  EXPECT_EQ(meta.at("sched.usage").rfind("nlp\talice\t", 0), 0u) << meta.at("sched.usage");
  Outputs out2;
  UsageBook recovered(config, out2);
  recovered.Recover(meta);
  EXPECT_EQ(recovered.ledger().Entries(), usage.ledger().Entries());
  EXPECT_EQ(recovered.ledger().last_update(), usage.ledger().last_update());
  // Nothing stored: an empty ledger.
  UsageBook empty(config, out2);
  empty.Recover({});
  EXPECT_TRUE(empty.ledger().Entries().empty());
}

}  // namespace
}  // namespace corral::controller::internal
