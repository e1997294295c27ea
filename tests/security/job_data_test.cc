// What a request may contain and what a reader may see (issue 15 items 4, 6 and 8), over
// HTTP against a real controller on loopback: uid binding, privacy of scripts and
// environments, [privacy] private_data, field limits with a 400 naming the field and nothing
// stored, signals outside 1-64, max_submitted_jobs counting array tasks, and the memory an
// array costs (a figure, printed).
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "api/json_codec.h"
#include "store/sqlite_store.h"
#include "tests/security/security_harness.h"

namespace corral::security {
namespace {

api::JobInfo Get(SecurityCluster& c, const std::string& caller, JobId id) {
  api::HttpResponse r = c.Send(caller, "GET", "/api/v1/jobs/" + id.ToString());
  EXPECT_EQ(r.status, 200) << r.body;
  auto info = api::DecodeJobInfo(r.body);
  EXPECT_TRUE(info.has_value()) << r.body;
  return info ? *info : api::JobInfo{};
}

std::vector<api::JobInfo> List(SecurityCluster& c, const std::string& caller) {
  api::HttpResponse r = c.Send(caller, "GET", "/api/v1/jobs?state=all");
  EXPECT_EQ(r.status, 200) << r.body;
  auto list = api::DecodeJobInfoList(r.body);
  EXPECT_TRUE(list.has_value()) << r.body;
  return list ? *list : std::vector<api::JobInfo>{};
}

JobSpec Secret() {
  JobSpec s = TestJob(0, /*hold=*/true);
  s.script = "#!/bin/sh\necho the-secret-script\n";
  // A caller's own credential variable never reaches a job (the controller drops it); others'
  // secrets of the environment are hidden from other users.
  s.environment = {{"CORRAL_TOKEN", "a-token"}, {"AWS_SECRET_ACCESS_KEY", "stolen"}};
  s.script_args = {"--password", "hunter2"};
  return s;
}

TEST(JobDataTest, TheControllerBindsTheUidAndNeverTakesItFromTheBody) {
  SecurityCluster c;
  JobSpec s = TestJob();
  s.uid = 0;  // asks for root
  s.gid = 0;
  JobId own = c.Submit("alice", s);
  EXPECT_EQ(Get(c, "alice", own).job.spec.uid, 1000u);
  s.user = "bob";
  JobId for_bob = c.Submit("root", s);
  api::JobInfo bobs = Get(c, "root", for_bob);
  EXPECT_EQ(bobs.job.spec.user, "bob");
  EXPECT_EQ(bobs.job.spec.uid, 1001u) << "bob's uid from the user database, not root's";
  EXPECT_EQ(bobs.job.spec.gid, 1001u);
  api::HttpResponse as_other = c.Send("alice", "POST", "/api/v1/jobs", api::EncodeJobSpec(s));
  EXPECT_EQ(as_other.status, 403) << as_other.body;
  s.user = "nobody-known";
  api::HttpResponse unknown = c.Send("root", "POST", "/api/v1/jobs", api::EncodeJobSpec(s));
  EXPECT_EQ(unknown.status, 400) << unknown.body;
  EXPECT_NE(unknown.body.find("user: "), std::string::npos) << unknown.body;
}

TEST(JobDataTest, OtherUsersNeverSeeTheScriptEnvironmentOrArguments) {
  SecurityCluster c;
  JobId id = c.Submit("alice", Secret());
  api::JobInfo bobs_view = Get(c, "bob", id);
  EXPECT_EQ(bobs_view.job.spec.user, "alice") << "metadata is public by default";
  EXPECT_EQ(bobs_view.job.spec.script, "");
  EXPECT_TRUE(bobs_view.job.spec.environment.empty());
  EXPECT_TRUE(bobs_view.job.spec.script_args.empty());
  for (const api::JobInfo& j : List(c, "bob")) {
    EXPECT_EQ(j.job.spec.script, "") << "job " << j.job.id.ToString();
    EXPECT_TRUE(j.job.spec.environment.empty());
  }
  api::HttpResponse raw = c.Send("bob", "GET", "/api/v1/jobs?state=all");
  EXPECT_EQ(raw.body.find("the-secret-script"), std::string::npos);
  EXPECT_EQ(raw.body.find("stolen"), std::string::npos);
  EXPECT_EQ(raw.body.find("hunter2"), std::string::npos);
  for (const std::string who : {"alice", "olga", "root"}) {
    api::JobInfo view = Get(c, who, id);
    EXPECT_EQ(view.job.spec.script, Secret().script) << who;
    EXPECT_EQ(view.job.spec.environment->at("AWS_SECRET_ACCESS_KEY"), "stolen") << who;
    EXPECT_FALSE(view.job.spec.environment->contains("CORRAL_TOKEN")) << who;
  }
  EXPECT_EQ(Get(c, "job:" + id.ToString(), id).job.spec.script, Secret().script)
      << "the job's own credential reads what its user may";
}

TEST(JobDataTest, PrivateDataJobsHidesOtherUsersJobs) {
  controller::ControllerConfig config;
  config.privacy = {.jobs = true, .usage = true};
  SecurityCluster c(config);
  JobId alices = c.Submit("alice", Secret());
  JobId bobs = c.Submit("bob", TestJob());
  api::HttpResponse r = c.Send("bob", "GET", "/api/v1/jobs/" + alices.ToString());
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(c.Send("bob", "GET", "/api/v1/jobs/" + alices.ToString() + "/steps").status, 403);
  EXPECT_EQ(c.Send("bob", "GET", "/api/v1/jobs/" + alices.ToString() + "/why").status, 403);
  EXPECT_EQ(c.Send("bob", "GET", "/api/v1/jobs/" + alices.ToString() + "/gpustats").status, 403);
  for (const std::string who : {"alice", "olga", "root"}) {
    EXPECT_EQ(c.Send(who, "GET", "/api/v1/jobs/" + alices.ToString() + "/gpustats").status, 200)
        << who;
  }
  std::vector<api::JobInfo> seen = List(c, "bob");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].job.id, bobs);
  EXPECT_EQ(List(c, "olga").size(), 2u) << "operators see every job";
  EXPECT_EQ(List(c, "root").size(), 2u);
  EXPECT_EQ(Get(c, "alice", alices).job.spec.script, Secret().script);
}

// A job's GPU statistics are its usage: "usage" alone hides them from other users (who still
// see the job), as it hides the usage in the job's record.
TEST(JobDataTest, PrivateDataUsageHidesOtherUsersGpuStatistics) {
  controller::ControllerConfig config;
  config.privacy = {.jobs = false, .usage = true};
  SecurityCluster c(config);
  JobId alices = c.Submit("alice", TestJob());
  const std::string path = "/api/v1/jobs/" + alices.ToString() + "/gpustats";
  EXPECT_EQ(c.Send("bob", "GET", "/api/v1/jobs/" + alices.ToString()).status, 200);
  api::HttpResponse r = c.Send("bob", "GET", path);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body.find("GPU statistics of job " + alices.ToString()), std::string::npos) << r.body;
  for (const std::string& who :
       std::vector<std::string>{"alice", "olga", "root", "job:" + alices.ToString()}) {
    EXPECT_EQ(c.Send(who, "GET", path).status, 200) << who;
  }
  EXPECT_EQ(c.Send("alice", "GET", "/api/v1/jobs/999999/gpustats").status, 404);
}

TEST(JobDataTest, OversizedFieldsNulBytesAndBadSignalsGet400NamingTheFieldAndNothingIsStored) {
  SecurityCluster c;
  auto refused = [&](JobSpec s, const std::string& field) {
    api::HttpResponse r = c.Send("alice", "POST", "/api/v1/jobs", api::EncodeJobSpec(s));
    EXPECT_EQ(r.status, 400) << field << ": " << r.body;
    EXPECT_NE(r.body.find(field + ": "), std::string::npos) << r.body;
  };
  JobSpec s = TestJob();
  s.comment = std::string(64 * 1024, 'c');
  refused(s, "comment");
  s = TestJob();
  s.environment.Mutable()["X"] = std::string(256 * 1024, 'x');
  refused(s, "environment.X");
  s = TestJob();
  s.script_args = std::vector<std::string>(5000, "arg");
  refused(s, "script_args");
  s = TestJob();
  s.partitions = std::vector<std::string>(1000, "gpu");
  refused(s, "partition");
  s = TestJob();
  s.stdout_path = std::string("/tmp/a\0b", 8);
  refused(s, "stdout_path");
  s = TestJob();
  s.working_dir = std::string("/tmp\0/x", 7);
  refused(s, "working_dir");
  EXPECT_TRUE(List(c, "root").empty()) << "nothing stored";

  JobId id = c.Submit("alice", TestJob());
  for (const char* sig : {"0", "65", "999", "-9"}) {
    api::HttpResponse r = c.Send("alice", "POST", "/api/v1/jobs/" + id.ToString() + "/signal",
                                 std::string(R"({"signal":")") + sig + "\"}");
    EXPECT_EQ(r.status, 400) << sig << ": " << r.body;
    EXPECT_NE(r.body.find("signal"), std::string::npos) << r.body;
  }
}

// The resident memory of this process (the controller runs in it), in KiB.
long RssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// The bytes of a SQLite database file and its write-ahead log.
long FileBytes(const std::string& path) {
  struct stat st {};
  long total = 0;
  for (const std::string& p : {path, path + "-wal"}) {
    if (stat(p.c_str(), &st) == 0) total += static_cast<long>(st.st_size);
  }
  return total;
}

TEST(JobDataTest, MaxSubmittedJobsCountsArrayTasksAndAnArraysCostIsMeasured) {
  controller::ControllerConfig config;
  config.max_submitted_jobs = 1500;
  char dir[] = "/tmp/corral_job_data_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  struct RemoveDir {
    std::string path;
    ~RemoveDir() { std::filesystem::remove_all(path); }
  } cleanup{dir};  // after the cluster has stopped
  std::string db = std::string(dir) + "/state.db";
  auto store = store::SqliteStore::Open(db);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  SecurityCluster c(config, std::move(*store));
  JobSpec s = TestJob();
  s.script = "#!/bin/sh\n" + std::string(64 * 1024, '#') + "\ntrue\n";
  long before = RssKib();
  long db_before = FileBytes(db);
  s.array = "0-1000";
  c.Submit("alice", s);
  long after = RssKib();
  long db_after = FileBytes(db);
  std::printf(
      "[ figure ] controller RSS before/after a 1,001-task array with a 64 KiB script: "
      "%ld KiB -> %ld KiB (+%ld KiB); SQLite store %ld KiB -> %ld KiB (+%ld KiB)\n",
      before, after, after - before, db_before / 1024, db_after / 1024,
      (db_after - db_before) / 1024);
  // The store keeps the spec once (1,001 copies were 66 MB); the WAL holds each page written.
  EXPECT_LT(db_after - db_before, 4L * 1024 * 1024);
  // So does the controller's memory: the tasks share the script (1,001 copies were 130 MB).
  EXPECT_LT(after - before, 32L * 1024) << "KiB";
  ASSERT_EQ(List(c, "root").size(), 1001u);
  s.array = "0-600";
  api::HttpResponse over = c.Send("alice", "POST", "/api/v1/jobs", api::EncodeJobSpec(s));
  EXPECT_EQ(over.status, 429) << "1,001 + 601 tasks are over 1,500: " << over.body;
  EXPECT_NE(over.body.find("max_submitted_jobs"), std::string::npos) << over.body;
  EXPECT_EQ(List(c, "root").size(), 1001u) << "nothing stored";
  EXPECT_EQ(c.Send("bob", "POST", "/api/v1/jobs", api::EncodeJobSpec(s)).status, 201)
      << "the limit is per user";
}

}  // namespace
}  // namespace corral::security
