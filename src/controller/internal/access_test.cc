#include "controller/internal/access.h"

#include <gtest/gtest.h>

#include "controller/testing/requests.h"

namespace corral::controller::internal {
namespace {

using testing::kAlice;
using testing::kBob;

TEST(AccessTest, AdminsAreTheAdminRoleTheControllerRootAndTheNamedUsers) {
  Access access({"bob"});
  EXPECT_FALSE(access.IsAdmin(kAlice));
  EXPECT_TRUE(access.IsAdmin(kBob));
  EXPECT_TRUE(access.IsAdmin({.user = "x", .uid = 5, .gid = 5, .role = api::Role::kAdmin}));
  EXPECT_TRUE(access.IsAdmin({.user = "x", .uid = 5, .gid = 5, .role = api::Role::kController}));
  EXPECT_TRUE(access.IsAdmin({.user = "x", .uid = 0, .gid = 0, .role = api::Role::kUser}));
  EXPECT_FALSE(access.IsAdmin({.user = "x", .uid = 5, .gid = 5, .role = api::Role::kAgent}));
}

TEST(AccessTest, OwnersAndAdminsMayActOnAJob) {
  Access access({});
  Job job;
  job.id = JobId(7);
  job.spec.user = "alice";
  EXPECT_TRUE(access.CheckOwner(kAlice, job).has_value());
  auto denied = access.CheckOwner(kBob, job);
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(denied.error().message, "job 7: owned by alice, not bob");
  auto not_admin = access.RequireAdmin(kAlice, "drain");
  ASSERT_FALSE(not_admin.has_value());
  EXPECT_EQ(not_admin.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(not_admin.error().message, "drain: alice is not an administrator");
  EXPECT_TRUE(Access({"alice"}).RequireAdmin(kAlice, "drain").has_value());
}

}  // namespace
}  // namespace corral::controller::internal
