// sreport, sshare and sprio renderers against the text a real Slurm 22.05.8 printed for the same
// shapes (the peer of /work/shared/peers/slurm, with priority/multifactor for sprio).
#include <gtest/gtest.h>

#include "cli/slurm/sreport.h"
#include "cli/slurm/sshare.h"

namespace corral::slurm {
namespace {

const Timestamp kDay = Timestamp(Seconds(1'764'547'200));  // 2025-12-01T00:00:00Z

api::UsageReport Report() {
  api::UsageReport r;
  r.start = kDay;
  r.end = kDay + Seconds(86400);
  r.cluster_cpus = 64;
  r.cluster_gpus = 8;
  r.reported_cpu_seconds = 64.0 * 86400;
  r.reported_gpu_seconds = 8.0 * 86400;
  r.total = {.jobs = 3, .cpu_seconds = 3 * 3600 + 59, .gpu_seconds = 7200, .energy_joules = 9000};
  r.accounts = {{.account = "chem", .jobs = 1, .cpu_seconds = 3600, .energy_joules = 1000},
                {.account = "physics", .jobs = 2, .cpu_seconds = 7259, .gpu_seconds = 7200,
                 .energy_joules = 8000}};
  r.users = {{.account = "chem", .user = "bob", .jobs = 1, .cpu_seconds = 3600,
              .energy_joules = 1000},
             {.account = "physics", .user = "alice", .jobs = 2, .cpu_seconds = 7259,
              .gpu_seconds = 7200, .energy_joules = 8000}};
  r.jobs = {{.account = "chem", .user = "bob", .job = JobId(1), .cpus = 64, .jobs = 1,
             .cpu_seconds = 3600},
            {.account = "physics", .user = "alice", .job = JobId(2), .cpus = 2, .gpus = 2,
             .jobs = 1, .cpu_seconds = 7259, .gpu_seconds = 7200}};
  return r;
}

TEST(SreportTest, ClusterUtilizationAsSlurmPrintsIt) {
  SreportOptions o;
  o.cluster = "anchor";
  std::string text = RenderSreport(Report(), o);
  EXPECT_EQ(text,
            "--------------------------------------------------------------------------------\n"
            "Cluster Utilization 2025-12-01T00:00:00 - 2025-12-01T23:59:59\n"
            "Usage reported in CPU Minutes\n"
            "--------------------------------------------------------------------------------\n"
            "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n"
            "--------- -------- -------- -------- -------- -------- -------- \n"
            "   anchor      180        0        0    91979        0    92160 \n");
  o.parsable2 = true;
  o.unit = ReportUnit::kPercent;
  o.tres = {"gres/gpu"};
  text = RenderSreport(Report(), o);
  EXPECT_NE(text.find("Usage reported in Percentage of Total\n"), std::string::npos);
  EXPECT_NE(text.find("Cluster|TRES Name|Allocated|Down|PLND Down|Idle|Planned|Reported\n"
                      "anchor|gres/gpu|1.04%|0.00%|0.00%|98.96%|0.00%|100.00%\n"),
            std::string::npos)
      << text;
  o.no_header = true;
  o.unit = ReportUnit::kHours;
  EXPECT_EQ(RenderSreport(Report(), o), "anchor|gres/gpu|2|0|0|190|0|192\n");
}

TEST(SreportTest, AccountAndUserReports) {
  SreportOptions o;
  o.cluster = "anchor";
  o.report = SreportReport::kAccountUtilizationByUser;
  o.proper_name = [](const std::string& u) { return u == "alice" ? "Alice A" : ""; };
  std::string text = RenderSreport(Report(), o);
  EXPECT_NE(text.find("Cluster/Account/User Utilization 2025-12-01T00:00:00 - "
                      "2025-12-01T23:59:59 (86400 secs)\nUsage reported in CPU Minutes\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Cluster         Account     Login     Proper Name     Used   Energy \n"
                      "--------- --------------- --------- --------------- -------- -------- \n"
                      "   anchor            root                                180     9000 \n"
                      "   anchor            chem                                 60     1000 \n"
                      "   anchor            chem       bob                       60     1000 \n"
                      "   anchor         physics                                120     8000 \n"
                      "   anchor         physics     alice         Alice A      120     8000 \n"),
            std::string::npos)
      << text;
  o.report = SreportReport::kUserTopUsage;
  o.top_count = 1;
  o.parsable2 = true;
  o.tres = {"cpu", "gres/gpu"};
  text = RenderSreport(Report(), o);
  EXPECT_NE(text.find("Top 1 Users "), std::string::npos);
  EXPECT_NE(text.find("Usage reported in TRES Minutes\n"), std::string::npos);
  EXPECT_NE(text.find("Cluster|Login|Proper Name|Account|TRES Name|Used\n"
                      "anchor|alice|Alice A|physics|cpu|120\n"
                      "anchor|alice|Alice A|physics|gres/gpu|120\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("bob"), std::string::npos);
}

TEST(SreportTest, JobSizesByAccountBinsJobsBySize) {
  SreportOptions o;
  o.cluster = "anchor";
  o.report = SreportReport::kJobSizesByAccount;
  o.grouping = {2, 4};
  o.parsable2 = true;
  std::string text = RenderSreport(Report(), o);
  EXPECT_NE(text.find("Job Sizes 2025-12-01T00:00:00 - 2025-12-01T23:59:59 (86400 secs)\n"
                      "Time reported in Minutes\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Cluster|Account|0-1 CPUs|2-3 CPUs|>= 4 CPUs|% of cluster\n"
                      "anchor|chem|0|0|60|33.15%\n"
                      "anchor|physics|0|120|0|66.85%\n"),
            std::string::npos)
      << text;
  // As the peer printed `-t hourper` (20-wide columns, shares of the total used).
  o.parsable2 = false;
  o.grouping = {50, 250, 500, 1000};
  o.unit = ReportUnit::kHourPer;
  text = RenderSreport(Report(), o);
  EXPECT_NE(text.find("Time reported in Hours/Percentage of Total\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  Cluster   Account            0-49 CPUs          50-249 CPUs         "
                      "250-499 CPUs         500-999 CPUs         >= 1000 CPUs % of cluster \n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("   anchor   physics            2(66.85%)             0(0.00%)"),
            std::string::npos)
      << text;
}

// With the account tree, sub-accounts roll up into their parents and come in tree order, as
// Slurm's sreport prints them; `tree` indents them by depth.
TEST(SreportTest, AccountUtilizationRollsSubAccountsUpIntoTheirParents) {
  SreportOptions o;
  o.cluster = "anchor";
  o.report = SreportReport::kAccountUtilizationByUser;
  o.parsable2 = true;
  o.no_header = true;
  o.parents = {{"science", ""}, {"chem", "science"}, {"physics", "science"}, {"idle", ""}};
  EXPECT_EQ(RenderSreport(Report(), o),
            "anchor|root|||180|9000\n"
            "anchor|science|||180|9000\n"
            "anchor|chem|||60|1000\n"
            "anchor|chem|bob||60|1000\n"
            "anchor|physics|||120|8000\n"
            "anchor|physics|alice||120|8000\n");
  o.tree = true;
  o.parents["physics"] = "chem";
  EXPECT_EQ(RenderSreport(Report(), o),
            "anchor|root|||180|9000\n"
            "anchor| science|||180|9000\n"
            "anchor|  chem|||180|9000\n"
            "anchor|chem|bob||60|1000\n"
            "anchor|   physics|||120|8000\n"
            "anchor|physics|alice||120|8000\n");
}

TEST(SreportTest, ParsesReportNamesUnitsAndTres) {
  EXPECT_EQ(*ParseSreportReport("cluster", "utilization"), SreportReport::kClusterUtilization);
  EXPECT_EQ(*ParseSreportReport("Cluster", "AccountUtilizationByUser"),
            SreportReport::kAccountUtilizationByUser);
  EXPECT_EQ(*ParseSreportReport("cluster", "UserUtilizationByAccount"),
            SreportReport::kUserUtilizationByAccount);
  EXPECT_EQ(*ParseSreportReport("user", "topusage"), SreportReport::kUserTopUsage);
  EXPECT_EQ(*ParseSreportReport("job", "SizesByAccount"), SreportReport::kJobSizesByAccount);
  EXPECT_FALSE(ParseSreportReport("reservation", "utilization").has_value());
  EXPECT_EQ(*ParseReportUnit("hours"), ReportUnit::kHours);
  EXPECT_EQ(*ParseReportUnit("Percent"), ReportUnit::kPercent);
  EXPECT_EQ(*ParseReportUnit("hourper"), ReportUnit::kHourPer);
  EXPECT_EQ(*ParseReportUnit("m"), ReportUnit::kMinutes);
  EXPECT_FALSE(ParseReportUnit("days").has_value());
  EXPECT_EQ(*ParseReportTres("cpu,gpu"), (std::vector<std::string>{"cpu", "gres/gpu"}));
  auto bad = ParseReportTres("mem");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("mem"), std::string::npos);
}

std::vector<api::ShareRow> Tree() {
  return {{.account = "root", .depth = 0, .norm_shares = 1, .raw_usage = 400, .effective_usage = 1,
           .level_fairshare = -1},
          {.account = "root", .user = "root", .depth = 1, .raw_shares = 1, .norm_shares = 0.5,
           .level_fairshare = -1, .fairshare = 1},
          {.account = "physics", .depth = 1, .raw_shares = 1, .norm_shares = 0.5, .raw_usage = 400,
           .effective_usage = 1, .level_fairshare = 0.5},
          {.account = "physics", .user = "root", .depth = 2, .raw_shares = 1, .norm_shares = 1,
           .raw_usage = 400, .effective_usage = 1, .level_fairshare = 1, .fairshare = 0.5}};
}

TEST(SshareTest, DefaultLongAndParsableAsSlurmPrintsThem) {
  auto text = RenderSshare(Tree(), 400, {});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text,
            "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  "
            "FairShare \n"
            "-------------------- ---------- ---------- ----------- ----------- ------------- "
            "---------- \n"
            "root                                          0.000000         400      1.000000  "
            "          \n"
            " root                      root          1    0.500000           0      0.000000   "
            "1.000000 \n"
            " physics                                 1    0.500000         400      1.000000  "
            "          \n"
            "  physics                  root          1    1.000000         400      1.000000   "
            "0.500000 \n");
  text = RenderSshare(Tree(), 400, {.long_list = true, .parsable2 = true});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text,
            "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|"
            "GrpTRESMins|TRESRunMins\n"
            "root|||0.000000|400||1.000000||||\n"
            " root|root|1|0.500000|0|0.000000|0.000000|1.000000|inf||\n"
            " physics||1|0.500000|400||1.000000||0.500000||\n"
            "  physics|root|1|1.000000|400|1.000000|1.000000|0.500000|1.000000||\n");
  text = RenderSshare(Tree(), 400, {.format = "Account%30,RawShares", .no_header = true});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->substr(0, 43), "                          root            \n");
  auto bad = RenderSshare(Tree(), 400, {.format = "Account,Bogus"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "Invalid field requested: \"Bogus\"");
}

std::vector<api::PriorityInfo> Pending() {
  return {{.job = JobId(2), .user = "root", .age = 0, .fairshare = 1, .job_size = 0.5078125,
           .partition = 1, .age_points = 0, .fairshare_points = 10000, .job_size_points = 508,
           .partition_points = 1000, .priority = 11508, .job_partition = "debug"},
          {.job = JobId(4), .user = "root", .fairshare = 1, .job_size = 0.515625, .partition = 1,
           .fairshare_points = 10000, .job_size_points = 516, .partition_points = 1000,
           .nice = 100, .priority = 11416, .job_partition = "debug"}};
}

const api::PriorityWeights kWeights{
    .age = 1000, .fairshare = 10000, .job_size = 1000, .partition = 1000, .qos = 2000};

TEST(SprioTest, DefaultLongWeightsAndNormalizedAsSlurmPrintsThem) {
  auto text = RenderSprio(Pending(), kWeights, {});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text,
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
            "PARTITION        QOS\n"
            "              2 debug          11508          0          0      10000        508  "
            "     1000          0\n"
            "              4 debug          11416          0          0      10000        516  "
            "     1000          0\n");
  text = RenderSprio(Pending(), kWeights, {.weights = true});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->substr(text->find('\n') + 1),
            "        Weights                               1       1000      10000       1000  "
            "     1000       2000\n");
  text = RenderSprio(Pending(), kWeights, {.long_list = true, .no_header = true});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->substr(text->find('\n') + 1),
            "              4 debug         root      11416          0          0          0      "
            "10000        516       1000          0         100                     \n");
  text = RenderSprio(Pending(), kWeights, {.normalized = true});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text,
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION  "
            "QOS       \n"
            "              2 debug     0.00000267 0.0000000  1.0000000  0.5078125  1.0000000  "
            "0.0000000 \n"
            "              4 debug     0.00000265 0.0000000  1.0000000  0.5156250  1.0000000  "
            "0.0000000 \n");
}

TEST(SprioTest, ZeroWeightsDropTheirColumnsAndUnknownLettersAreRefused) {
  api::PriorityWeights w{.age = 1000};
  EXPECT_EQ(SprioDefaultFormat({}, w), "%.15i %9r %.10Y %.10S %.10A");
  EXPECT_EQ(SprioDefaultFormat({.users_given = true}, w), "%.15i %9r %.8u %.10Y %.10S %.10A");
  auto text = RenderSprio(Pending(), w, {.format = "%i %Y"});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "JOBID PRIORITY\n2 11508\n4 11416\n");
  auto bad = RenderSprio(Pending(), w, {.format = "%i %o"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "Invalid job format specification: o");
}

}  // namespace
}  // namespace corral::slurm
