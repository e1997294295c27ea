// Both journals keep the same entries; the file one across instances (an agent restart).
#include "agent/run_journal.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace corral::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class RunJournalTest : public ::testing::TestWithParam<bool> {
 protected:
  RunJournalTest() {
    char tmpl[] = "/tmp/corral-journal-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~RunJournalTest() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<RunJournal> Open() {
    if (GetParam()) return std::make_unique<FileRunJournal>(dir_);
    return std::make_unique<MemoryRunJournal>();
  }

  std::string dir_;
};

TEST_P(RunJournalTest, PutReplaceRemoveAndList) {
  auto j = Open();
  EXPECT_THAT(j->List(), IsEmpty());
  ASSERT_TRUE(j->Put({"7.1", 100, "555"}).has_value());
  ASSERT_TRUE(j->Put({"7.1.0.2", 101, "556"}).has_value());
  ASSERT_TRUE(j->Put({"12.3", 102, "557"}).has_value());
  ASSERT_TRUE(j->Put({"7.1", 200, "600"}).has_value());  // replaced
  EXPECT_THAT(j->List(),
              ElementsAre(JournalEntry{"12.3", 102, "557"}, JournalEntry{"7.1", 200, "600"},
                          JournalEntry{"7.1.0.2", 101, "556"}));
  j->Remove("7.1.0.2");
  j->Remove("no-such-entry");
  EXPECT_THAT(j->List(),
              ElementsAre(JournalEntry{"12.3", 102, "557"}, JournalEntry{"7.1", 200, "600"}));
}

INSTANTIATE_TEST_SUITE_P(FileAndMemory, RunJournalTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "File" : "Memory"; });

TEST(FileRunJournalTest, SurvivesARestartAndListsWhatItCannotRead) {
  char tmpl[] = "/tmp/corral-journal-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  ASSERT_TRUE(FileRunJournal(dir).Put({"7.1", 100, "555"}).has_value());
  std::ofstream(dir + "/junk") << "not a pid\n";
  EXPECT_THAT(FileRunJournal(dir).List(),
              ElementsAre(JournalEntry{"7.1", 100, "555"}, JournalEntry{"junk", 0, ""}));
  EXPECT_FALSE(FileRunJournal(dir + "/missing").Put({"7.1", 1, "2"}).has_value());
  EXPECT_THAT(FileRunJournal(dir + "/missing").List(), IsEmpty());
  std::filesystem::remove_all(dir);
}

TEST(ProcessStartTimeTest, TellsAProcessFromOneThatIsGone) {
  std::string mine = ProcessStartTime(getpid());
  EXPECT_FALSE(mine.empty());
  EXPECT_EQ(mine.find_first_not_of("0123456789"), std::string::npos) << mine;
  EXPECT_EQ(ProcessStartTime(getpid()), mine);
  EXPECT_EQ(ProcessStartTime(0x3fffffff), "");
}

}  // namespace
}  // namespace corral::agent
