// PostgresStore behaviour that needs no server; the conformance suite covers the rest.
#include "store/postgres_store.h"

#include <string>

#include <gtest/gtest.h>

#include "store/internal/libpq.h"

namespace corral::store {
namespace {

TEST(PostgresStoreTest, MissingLibpqIsUnavailableAndSaysWhy) {
  auto s = PostgresStore::Open("postgresql://localhost/corral",
                               {.libpq = "libcorral-missing-libpq.so.5"});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(
      s.error().message.starts_with("postgresql store: cannot load libcorral-missing-libpq.so.5: "))
      << s.error().message;
}

TEST(PostgresStoreTest, UnreachableServerIsUnavailableWithoutThePassword) {
  if (!internal::LoadLibpq().has_value()) GTEST_SKIP() << "libpq.so.5 is not installed";
  auto s = PostgresStore::Open(
      "postgresql://corral:s3cret@/corral?host=/nonexistent-corral-dir&port=5999"
      "&connect_timeout=2");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(s.error().message.starts_with(
      "postgresql store \"postgresql://corral@/corral\": cannot connect: "))
      << s.error().message;
  EXPECT_EQ(s.error().message.find("s3cret"), std::string::npos) << s.error().message;
  EXPECT_EQ(s.error().message.find('\n'), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace corral::store
