#include "api/scrape_token.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace corral::api {
namespace {

class ScrapeTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/scrape-token-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ScrapeTokenTest, CreatedTokenReadsBackAndMatchesOnlyItsBearer) {
  auto made = ScrapeToken::CreateFile(dir_ + "/t");
  ASSERT_TRUE(made.has_value()) << made.error().message;
  struct stat st {};
  ASSERT_EQ(stat((dir_ + "/t").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto read = ScrapeToken::FromFile(dir_ + "/t");
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(read->value(), made->value());
  EXPECT_GE(read->value().size(), kMinScrapeTokenBytes);
  EXPECT_TRUE(read->Matches("Bearer " + made->value()));
  EXPECT_FALSE(read->Matches(made->value()));
  EXPECT_FALSE(read->Matches("Bearer " + made->value() + "x"));
  EXPECT_FALSE(read->Matches("Bearer " + made->value().substr(1)));
  EXPECT_FALSE(ScrapeToken().Matches("Bearer "));
  // Never over an existing file.
  EXPECT_EQ(ScrapeToken::CreateFile(dir_ + "/t").error().code, ErrorCode::kAlreadyExists);
}

TEST_F(ScrapeTokenTest, RefusesShortTokensAndReadableFiles) {
  std::ofstream(dir_ + "/short") << "abc\n";
  chmod((dir_ + "/short").c_str(), 0600);
  auto s = ScrapeToken::FromFile(dir_ + "/short");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("at least 32"), std::string::npos) << s.error().message;
  std::ofstream(dir_ + "/open") << std::string(40, 'a') << "\n";
  chmod((dir_ + "/open").c_str(), 0644);
  auto o = ScrapeToken::FromFile(dir_ + "/open");
  ASSERT_FALSE(o.has_value());
  EXPECT_EQ(o.error().code, ErrorCode::kFailedPrecondition) << o.error().message;
}

}  // namespace
}  // namespace corral::api
