#include "api/private_file.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "store/testing/temp_dir.h"

namespace corral::api {
namespace {

using store::testing::TempDir;

void Write(const std::string& path, const std::string& content, mode_t mode) {
  std::ofstream(path) << content;
  ASSERT_EQ(chmod(path.c_str(), mode), 0);
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  closedir(d);
  return out;
}

TEST(PrivateFileTest, ReadsAPrivateFile) {
  TempDir dir;
  for (mode_t mode : {0600, 0400}) {
    std::string path = dir.File("key" + std::to_string(mode));
    Write(path, "secret\n", mode);
    Result<std::string> r = ReadPrivateFile(path, "key file");
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(*r, "secret\n");
    EXPECT_TRUE(CheckPrivateFile(path, "key file").has_value());
  }
}

TEST(PrivateFileTest, RefusesAFileItsGroupOrOthersMayReadOrWrite) {
  TempDir dir;
  std::string path = dir.File("key");
  for (mode_t mode : {0640, 0604, 0620, 0602, 0644, 0666, 0610}) {
    Write(path, "secret", mode);
    for (const Status& r : {Status(ReadPrivateFile(path, "key file").transform([](auto&&) {})),
                            CheckPrivateFile(path, "key file")}) {
      ASSERT_FALSE(r.has_value()) << std::oct << mode;
      EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
      char octal[8];
      snprintf(octal, sizeof octal, "%04o", mode);
      EXPECT_NE(r.error().message.find("key file " + path + ": mode " + octal), std::string::npos)
          << r.error().message;
      EXPECT_NE(r.error().message.find("chmod 600 " + path), std::string::npos);
    }
  }
}

TEST(PrivateFileTest, RefusesAFileOwnedBySomeoneElse) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  TempDir dir;
  std::string path = dir.File("key");
  Write(path, "secret", 0600);
  ASSERT_EQ(chown(path.c_str(), 54321, 54321), 0);
  // Root reads it only when root owns it: a key another user could have replaced is refused.
  Result<std::string> r = ReadPrivateFile(path, "key file");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.error().message.find("key file " + path + ": owned by uid 54321"), std::string::npos)
      << r.error().message;
}

TEST(PrivateFileTest, RefusesWhatIsNotARegularFile) {
  TempDir dir;
  Result<std::string> r = ReadPrivateFile(dir.path(), "key file");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("is a directory"), std::string::npos);
  // A FIFO is refused at once instead of blocking the reader.
  std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  r = ReadPrivateFile(fifo, "key file");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos);

  std::string big = dir.File("big");
  Write(big, std::string(100, 'x'), 0600);
  r = ReadPrivateFile(big, "key file", 99);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);

  r = ReadPrivateFile(dir.File("missing"), "key file");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_NE(r.error().message.find(dir.File("missing")), std::string::npos);
}

TEST(PrivateFileTest, WritesAtomicallyWithTheModeGiven) {
  TempDir dir;
  std::string path = dir.File("out");
  ASSERT_TRUE(WriteFileAtomically(path, "one", WriteMode::kCreateNew, 0600, "f").has_value());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(*ReadPrivateFile(path, "f"), "one");

  // Never overwritten by kCreateNew; replaced by kReplace.
  Status again = WriteFileAtomically(path, "two", WriteMode::kCreateNew, 0600, "f");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(again.error().message.find(path), std::string::npos);
  EXPECT_EQ(*ReadPrivateFile(path, "f"), "one");
  ASSERT_TRUE(WriteFileAtomically(path, "two", WriteMode::kReplace, 0644, "f").has_value());
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "two");
  // No temporary file is left behind.
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{"out"});

  Status missing =
      WriteFileAtomically(dir.File("no/such/dir"), "x", WriteMode::kCreateNew, 0600, "f");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find(dir.File("no/such/dir")), std::string::npos);
}

}  // namespace
}  // namespace corral::api
