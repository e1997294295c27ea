// Idempotent submission (internal/submit_keys.h): a repeated key returns the original job,
// across a restart too; keys are per user; a different body is refused; keys expire.
#include "controller/internal/submit_keys.h"

#include <gtest/gtest.h>

#include "controller/controller.h"
#include "controller/testing/controller_test_base.h"
#include "controller/testing/requests.h"

namespace corral::controller {
namespace {

using testing::BatchJob;
using testing::kAlice;
using testing::kBob;

class SubmitKeyTest : public testing::ControllerTestBase {
 protected:
  SubmitKeyTest() { Restart(); }
  void Restart() {
    StartController(TestConfig(), {Partition{.name = "main", .is_default = true}});
    Flush();  // what recovery recorded
  }
  Result<api::SubmitResponse> Send(const api::Identity& who, const std::string& key,
                                   const std::string& digest, JobSpec spec = BatchJob()) {
    if (spec.user.empty()) spec.user = who.user;
    return controller_->Submit(who, std::move(spec), SubmitKey{key, digest});
  }
};

TEST_F(SubmitKeyTest, RepeatReturnsTheOriginalJobAndCreatesNoOther) {
  auto first = Send(kAlice, "k-1", "d1");
  ASSERT_TRUE(first) << first.error().message;
  Flush();
  auto again = Send(kAlice, "k-1", "d1");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->job_id, first->job_id);
  EXPECT_EQ(controller_->job_count(), 1u);
  EXPECT_FALSE(controller_->HasPendingWrites());  // a repeat writes nothing
}

TEST_F(SubmitKeyTest, KeyIsStoredWithTheJobAndSurvivesARestart) {
  JobSpec array = BatchJob();
  array.array = "0-2";
  auto first = Send(kAlice, "array-key", "d", array);
  ASSERT_TRUE(first) << first.error().message;
  Flush();
  Restart();
  auto again = Send(kAlice, "array-key", "d", array);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, *first);  // the array's every task id
  EXPECT_EQ(again->task_ids.size(), 3u);
  EXPECT_EQ(controller_->job_count(), 3u);
}

TEST_F(SubmitKeyTest, KeysAreScopedPerUser) {
  auto a = Send(kAlice, "same", "d");
  auto b = Send(kBob, "same", "d");
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->job_id, b->job_id);
}

TEST_F(SubmitKeyTest, DifferentBodyUnderAUsedKeyIsRefusedNamingTheJob) {
  auto first = Send(kAlice, "k", "d1");
  ASSERT_TRUE(first);
  Flush();
  auto other = Send(kAlice, "k", "d2");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(other.error().message.find("job " + first->job_id.ToString()), std::string::npos)
      << other.error().message;
  EXPECT_EQ(controller_->job_count(), 1u);
}

TEST_F(SubmitKeyTest, BadKeyIsRefusedAndChangesNothing) {
  for (std::string bad : {std::string(), std::string(129, 'a'), std::string("a/b"),
                          std::string("a b"), std::string("k\n")}) {
    auto r = Send(kAlice, bad, "d");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find("Idempotency-Key"), std::string::npos);
  }
  EXPECT_EQ(controller_->job_count(), 0u);
  EXPECT_FALSE(controller_->HasPendingWrites());
}

TEST_F(SubmitKeyTest, RefusedSubmissionRemembersNoKey) {
  JobSpec bad = BatchJob();
  bad.script = "";  // no script
  ASSERT_FALSE(Send(kAlice, "k", "d", bad));
  auto good = Send(kAlice, "k", "d2");
  ASSERT_TRUE(good) << good.error().message;
}

TEST_F(SubmitKeyTest, KeysExpireAfterTheRetention) {
  auto first = Send(kAlice, "k", "d");
  ASSERT_TRUE(first);
  Flush();
  clock_.Advance(TestConfig().submit_key_retention + Seconds(61));
  controller_->Tick();
  Flush();
  Restart();  // pruned from the store as well
  auto again = Send(kAlice, "k", "d");
  ASSERT_TRUE(again);
  EXPECT_NE(again->job_id, first->job_id);
}

}  // namespace
}  // namespace corral::controller
