// The CLI's TLS session cache (api/tls_session_cache.h): a private file of the user, refused
// when it is not, ignored and replaced when it is corrupt or expired.
#include "api/tls_session_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace corral::api {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kNow = 1'800'000'000;

class TlsSessionCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/corral-tls-cache-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/corral";
  }
  void TearDown() override { fs::remove_all(root_); }

  static TlsSessionTicket Ticket(std::string der, int64_t expires) {
    return TlsSessionTicket{.der = std::move(der), .expires_unix_s = expires};
  }
  static mode_t Mode(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

  std::string root_;
  std::string dir_;
};

TEST_F(TlsSessionCacheTest, StoresAPrivateFileAndReadsItBack) {
  TlsSessionCache cache(dir_);
  const std::string key = TlsSessionCache::Key("https://ctl:6900", "CA PEM");
  auto none = cache.Load(key, kNow);
  ASSERT_TRUE(none.has_value()) << none.error().message;  // no file: no entry, no error
  EXPECT_FALSE(none->has_value());

  ASSERT_TRUE(cache.Store(key, Ticket(std::string("\x30\x01\x00\xff", 4), kNow + 60), kNow));
  EXPECT_EQ(Mode(dir_), 0700u);
  EXPECT_EQ(Mode(cache.path()), 0600u);
  EXPECT_EQ(cache.path(), dir_ + "/tls-sessions");
  auto got = cache.Load(key, kNow);
  ASSERT_TRUE(got.has_value()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->der, std::string("\x30\x01\x00\xff", 4));
  EXPECT_EQ((*got)->expires_unix_s, kNow + 60);

  // Keys differ by URL and by CA: a session is never offered to another controller or under
  // another CA. Other keys' entries are kept by a store.
  const std::string other_ca = TlsSessionCache::Key("https://ctl:6900", "ANOTHER CA");
  const std::string other_url = TlsSessionCache::Key("https://ctl2:6900", "CA PEM");
  EXPECT_NE(key, other_ca);
  EXPECT_NE(key, other_url);
  EXPECT_FALSE(cache.Load(other_ca, kNow)->has_value());
  ASSERT_TRUE(cache.Store(other_url, Ticket("b", kNow + 90), kNow));
  EXPECT_EQ((*cache.Load(key, kNow))->der, std::string("\x30\x01\x00\xff", 4));
  EXPECT_EQ((*cache.Load(other_url, kNow))->der, "b");
}

TEST_F(TlsSessionCacheTest, ExpiredEntriesAreNotOfferedAndDroppedOnTheNextStore) {
  TlsSessionCache cache(dir_);
  const std::string a = TlsSessionCache::Key("https://a", "");
  const std::string b = TlsSessionCache::Key("https://b", "");
  ASSERT_TRUE(cache.Store(a, Ticket("old", kNow + 10), kNow));
  EXPECT_TRUE(cache.Load(a, kNow + 9)->has_value());
  EXPECT_FALSE(cache.Load(a, kNow + 10)->has_value());
  ASSERT_TRUE(cache.Store(b, Ticket("new", kNow + 100), kNow + 20));
  EXPECT_EQ(Read(cache.path()).find(a), std::string::npos);
  // An expired ticket is not stored at all.
  ASSERT_TRUE(cache.Store(a, Ticket("gone", kNow), kNow + 30));
  EXPECT_FALSE(cache.Load(a, kNow + 30)->has_value());
  // At most 16 entries: the soonest to expire go first.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(cache.Store(TlsSessionCache::Key("https://n" + std::to_string(i), ""),
                            Ticket("t", kNow + 1000 + i), kNow));
  }
  EXPECT_FALSE(cache.Load(TlsSessionCache::Key("https://n0", ""), kNow)->has_value());
  EXPECT_TRUE(cache.Load(TlsSessionCache::Key("https://n19", ""), kNow)->has_value());
}

TEST_F(TlsSessionCacheTest, ACorruptFileIsIgnoredAndReplaced) {
  TlsSessionCache cache(dir_);
  const std::string key = TlsSessionCache::Key("https://ctl", "");
  ASSERT_TRUE(cache.Store(key, Ticket("x", kNow + 60), kNow));
  for (const std::string& garbage :
       {std::string("not a cache\n"), std::string("corral-tls-sessions 1\n") + key + " zz qq\n",
        std::string("corral-tls-sessions 1\n") + key + " 1900000000 abc\n",
        std::string("corral-tls-sessions 1\nshort 1900000000 00\n"), std::string()}) {
    {
      std::ofstream out(cache.path(), std::ios::trunc);
      out << garbage;
    }
    auto got = cache.Load(key, kNow);
    ASSERT_TRUE(got.has_value()) << got.error().message;
    EXPECT_FALSE(got->has_value()) << garbage;
  }
  ASSERT_TRUE(cache.Store(key, Ticket("y", kNow + 60), kNow));
  EXPECT_EQ((*cache.Load(key, kNow))->der, "y");
}

TEST_F(TlsSessionCacheTest, AFileOthersMayReadIsRefusedAndReplacedPrivate) {
  TlsSessionCache cache(dir_);
  const std::string key = TlsSessionCache::Key("https://ctl", "");
  ASSERT_TRUE(cache.Store(key, Ticket("x", kNow + 60), kNow));
  ASSERT_EQ(chmod(cache.path().c_str(), 0644), 0);
  auto got = cache.Load(key, kNow);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(got.error().message.find(cache.path()), std::string::npos) << got.error().message;
  EXPECT_NE(got.error().message.find("0644"), std::string::npos) << got.error().message;
  // The next store writes a private file (without what the refused one held).
  ASSERT_TRUE(cache.Store(TlsSessionCache::Key("https://b", ""), Ticket("b", kNow + 60), kNow));
  EXPECT_EQ(Mode(cache.path()), 0600u);
  EXPECT_FALSE(cache.Load(key, kNow)->has_value());

  // A directory others may write in is refused for reading and writing.
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  EXPECT_EQ(cache.Load(key, kNow).error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(cache.Store(key, Ticket("x", kNow + 60), kNow).error().code,
            ErrorCode::kFailedPrecondition);
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);

  // A symbolic link in its place is not followed.
  const std::string elsewhere = root_ + "/elsewhere";
  ASSERT_TRUE(TlsSessionCache(elsewhere).Store(key, Ticket("e", kNow + 60), kNow));
  fs::remove(cache.path());
  fs::create_symlink(elsewhere + "/tls-sessions", cache.path());
  EXPECT_FALSE(cache.Load(key, kNow).has_value());
}

TEST_F(TlsSessionCacheTest, AnotherUsersFileIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  TlsSessionCache cache(dir_);
  const std::string key = TlsSessionCache::Key("https://ctl", "");
  ASSERT_TRUE(cache.Store(key, Ticket("x", kNow + 60), kNow));
  ASSERT_EQ(chown(cache.path().c_str(), 65534, 65534), 0);
  auto got = cache.Load(key, kNow);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(got.error().message.find("owned by uid 65534"), std::string::npos)
      << got.error().message;
  // The same for a directory of another user.
  ASSERT_EQ(chown(cache.path().c_str(), 0, 0), 0);
  ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
  EXPECT_EQ(cache.Load(key, kNow).error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(cache.Store(key, Ticket("x", kNow + 60), kNow).error().code,
            ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace corral::api
