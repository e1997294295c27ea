// OpenStore: URL schemes.
#include "store/store.h"

#include <gtest/gtest.h>

#include "store/testing/temp_dir.h"

namespace corral::store {
namespace {

TEST(OpenStoreTest, PicksTheImplementationFromTheUrl) {
  testing::TempDir dir;
  struct Case {
    std::string url;
    std::string_view kind;
  };
  const Case cases[] = {
      {"memory:", "memory"},
      {"sqlite::memory:", "sqlite"},
      {":memory:", "sqlite"},
      {"sqlite:" + dir.File("a.db"), "sqlite"},
      {dir.File("b.db"), "sqlite"},
      {dir.File("c:d.db"), "sqlite"},  // a colon after a '/' is part of a path
  };
  for (const Case& c : cases) {
    auto s = OpenStore(c.url);
    ASSERT_TRUE(s.has_value()) << c.url << ": " << s.error().message;
    EXPECT_EQ((*s)->kind(), c.kind) << c.url;
  }
}

TEST(OpenStoreTest, UnknownSchemeIsInvalidArgument) {
  auto s = OpenStore("mysql://root:hunter2@db/corral");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(s.error().message.find("unknown store scheme \"mysql\""), std::string::npos);
  EXPECT_EQ(s.error().message.find("hunter2"), std::string::npos);

  EXPECT_EQ(OpenStore("").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("sqlite:").error().code, ErrorCode::kInvalidArgument);
}

TEST(OpenStoreTest, PostgresUrlGoesToPostgres) {
  // Nothing listens there: the error is the connection's, not an unknown scheme.
  auto s = OpenStore("postgresql:///corral?host=/nonexistent-corral-dir&connect_timeout=1");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(s.error().message.starts_with("postgresql store")) << s.error().message;
}

}  // namespace
}  // namespace corral::store
