// Accounts, users and QOS as data on a running cluster (issue 16 item 1, "Show"): a fresh
// cluster without accounts takes everyone's jobs; accounts and users added with `corral
// account|user` take effect at once; a job pending with AssocGrpGRES starts once the limit is
// raised, without a restart; bad changes exit non-zero naming the problem and change nothing;
// only admins change them, everyone reads them; every change leaves an audit record; the
// records survive a restart of the controller.
#include <gtest/gtest.h>

#include "api/auth.h"
#include "api/governance_codec.h"
#include "api/http.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

std::string Me() { return api::CurrentProcessIdentity().user; }

TEST(GovernanceTest, AccountsAndLimitsChangeLiveAndBadChangesChangeNothing) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 4});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();

  // Without accounts, a job without one runs (a fresh `corral dev` works for everyone).
  JobSpec plain = cluster.ShellJob("true");
  auto first = cluster.Submit(plain);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  auto done = cluster.WaitJob(first->job_id);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->job.state, JobState::kCompleted);

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"account", "add", "research"},
        {"account", "add", "nlp", "--parent", "research", "--max-gpus", "1"},
        {"user", "add", Me(), "--account", "nlp"}}) {
    CliResult r = cluster.Cli(args);
    ASSERT_EQ(r.status, 0) << args[0] << " " << args[1] << ": " << r.err;
  }
  CliResult shown = cluster.Cli({"user", "show", Me(), "--json"});
  ASSERT_EQ(shown.status, 0) << shown.err;
  auto me = api::DecodeUser(shown.out);
  ASSERT_TRUE(me.has_value()) << shown.out;
  EXPECT_EQ(me->accounts, std::vector<std::string>{"nlp"});
  EXPECT_EQ(me->user.default_account, "nlp");

  // Two 1-GPU jobs of nlp (the default account): one runs, one waits at the account's limit.
  JobSpec gpu_job = cluster.ShellJob("sleep 60");
  gpu_job.resources.gpus_per_node = 1;
  auto a = cluster.Submit(gpu_job);
  auto b = cluster.Submit(gpu_job);
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto ja = cluster.GetJob(a->job_id);
        auto jb = cluster.GetJob(b->job_id);
        return ja && jb && ja->job.state == JobState::kRunning && jb->job.reason == "AssocGrpGRES";
      },
      std::chrono::seconds(20)))
      << cluster.ControllerLog();
  EXPECT_EQ(cluster.GetJob(b->job_id)->job.spec.account, "nlp");

  // Bad changes: each refused naming the problem; the accounts are as they were.
  CliResult before = cluster.Cli({"account", "list", "--json"});
  ASSERT_EQ(before.status, 0) << before.err;
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Bad& bad : std::vector<Bad>{
           {{"account", "add", "x", "--parent", "nope"}, "\"nope\""},
           {{"account", "modify", "research", "--parent", "nlp"}, "loop"},
           {{"account", "modify", "nlp", "--max-gpus", "20000000"}, "limits.max_gpus"},
           {{"account", "delete", "research"}, "sub-account \"nlp\""},
           {{"account", "delete", "nlp"}, "user"},
           {{"user", "add", "carol", "--account", "nope"}, "\"nope\""},
           {{"qos", "delete", "normal"}, "default_qos"},
       }) {
    CliResult r = cluster.Cli(bad.args);
    EXPECT_NE(r.status, 0) << bad.args[0] << " " << bad.args[1] << " " << bad.args[2];
    EXPECT_NE(r.err.find(bad.says), std::string::npos)
        << bad.args[1] << " " << bad.args[2] << ": " << r.err;
  }
  EXPECT_EQ(cluster.Cli({"account", "list", "--json"}).out, before.out);

  // Only admins change them; everyone reads them.
  auto http = api::HttpClient::Create(cluster.url(), cluster.client_options());
  ASSERT_TRUE(http.has_value());
  auto as_alice = [&](const std::string& method, const std::string& path, const std::string& body) {
    auto r = (*http)->Send(method, path, body, {{"authorization", cluster.Token("alice")}}, false);
    return r.has_value() ? r->status : 0;
  };
  EXPECT_EQ(as_alice("GET", "/api/v1/accounts/nlp", ""), 200);
  EXPECT_EQ(as_alice("PUT", "/api/v1/accounts/nlp", R"({"name":"nlp","parent":"research"})"), 403);

  // The limit raised live: the waiting job starts at the next pass, no restart.
  CliResult raised = cluster.Cli({"account", "modify", "nlp", "--max-gpus", "2"});
  ASSERT_EQ(raised.status, 0) << raised.err;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto jb = cluster.GetJob(b->job_id);
        return jb && jb->job.state == JobState::kRunning;
      },
      std::chrono::seconds(20)))
      << cluster.GetJob(b->job_id)->job.reason;

  // Every change was audited, the refused ones too.
  CliResult audit = cluster.Cli({"audit", "--json"});
  ASSERT_EQ(audit.status, 0) << audit.err;
  EXPECT_NE(audit.out.find(R"("method":"POST","route":"/api/v1/accounts")"), std::string::npos)
      << audit.out;
  EXPECT_NE(audit.out.find(R"("method":"PUT","route":"/api/v1/accounts/{name}")"),
            std::string::npos);
  EXPECT_NE(audit.out.find(R"("status":403)"), std::string::npos);
  EXPECT_NE(audit.out.find(R"("status":412)"), std::string::npos);

  // The store holds them: a restarted controller has them.
  cluster.KillController();
  ASSERT_TRUE(cluster.StartController().has_value()) << cluster.ControllerLog();
  CliResult after = cluster.Cli({"account", "show", "nlp", "--json"});
  ASSERT_EQ(after.status, 0) << after.err;
  auto nlp = api::DecodeAccount(after.out);
  ASSERT_TRUE(nlp.has_value());
  EXPECT_EQ(nlp->limits.max_gpus, std::optional<uint32_t>(2));
  EXPECT_EQ(nlp->parent, "research");

  // Limits of one (user, account) association (issue 16), set live with sacctmgr as on Slurm:
  // they hold this user's jobs of nlp, with Slurm's reason, and a lifted one lets the job run.
  for (JobId id : {a->job_id, b->job_id}) {
    EXPECT_EQ(cluster.Cli({"cancel", id.ToString()}).status, 0);
    ASSERT_TRUE(cluster.WaitJob(id).has_value());  // ended: holds nothing any more
  }
  ASSERT_EQ(cluster.Cli({"account", "modify", "nlp", "--max-gpus", "4"}).status, 0);
  CliResult limited = cluster.CliAs(
      "sacctmgr", {"-i", "modify", "user", "where", "name=" + Me(), "account=nlp", "set",
                   "GrpTRES=gres/gpu=1", "MaxSubmitJobs=2"});
  ASSERT_EQ(limited.status, 0) << limited.err;
  EXPECT_NE(limited.out.find(" Modified user associations...\n  C = "), std::string::npos)
      << limited.out;
  EXPECT_NE(limited.out.find(" A = nlp                  U = " + Me()), std::string::npos)
      << limited.out;
  CliResult assoc = cluster.CliAs(
      "sacctmgr", {"-nP", "show", "assoc", "where", "user=" + Me(),
                   "format=account,user,grptres,maxjobs,maxsubmit"});
  EXPECT_EQ(assoc.out, "nlp|" + Me() + "|gres/gpu=1||2\n") << assoc.err;
  auto c = cluster.Submit(gpu_job);
  auto d = cluster.Submit(gpu_job);
  ASSERT_TRUE(c.has_value() && d.has_value());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto jc = cluster.GetJob(c->job_id);
        auto jd = cluster.GetJob(d->job_id);
        return jc && jd && jc->job.state == JobState::kRunning && jd->job.reason == "AssocGrpGRES";
      },
      std::chrono::seconds(20)))
      << cluster.GetJob(d->job_id)->job.reason;
  CliResult why = cluster.Cli({"why", d->job_id.ToString()});
  EXPECT_NE(why.out.find("account nlp for user " + Me() + " at its GPU limit 1/1"),
            std::string::npos)
      << why.out << why.err;
  // A third job of the association is refused at submit, in Slurm's words.
  auto third = cluster.Submit(gpu_job);
  ASSERT_FALSE(third.has_value());
  EXPECT_NE(third.error().message.find("Job violates accounting/QOS policy (job submit limit, "
                                       "user's size and/or time limits): AssocMaxSubmitJobLimit"),
            std::string::npos)
      << third.error().message;
  // Lifted (-1 clears, as in Slurm): the waiting job starts at the next pass.
  CliResult lifted = cluster.CliAs(
      "sacctmgr", {"-i", "modify", "user", Me(), "where", "account=nlp", "set", "GrpTRES=gres/gpu=-1"});
  ASSERT_EQ(lifted.status, 0) << lifted.err;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto jd = cluster.GetJob(d->job_id);
        return jd && jd->job.state == JobState::kRunning;
      },
      std::chrono::seconds(20)))
      << cluster.GetJob(d->job_id)->job.reason;
  for (JobId id : {c->job_id, d->job_id}) cluster.Cli({"cancel", id.ToString()});
}

// sacctmgr round trips: what `add` and `modify` set, `show` prints as Slurm's sacctmgr does;
// `delete` removes it; a refused change exits 1 naming the problem.
TEST(GovernanceTest, SacctmgrRoundTrips) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 4});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  auto sacctmgr = [&](std::vector<std::string> args) { return cluster.CliAs("sacctmgr", args); };
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-i", "add", "account", "research", "Description=r"},
        {"-i", "add", "account", "nlp", "parent=research", "fairshare=3",
         "GrpTRES=gres/gpu=8,cpu=64,mem=100G", "GrpTRESMins=gres/gpu=6000", "GrpJobs=10",
         "MaxWall=2-00:00:00", "MaxTRES=gres/gpu=4"},
        {"-i", "add", "user", "alice", "account=nlp", "MaxJobs=4"},
        {"-i", "add", "qos", "high", "priority=100", "MaxWall=1:00:00", "MaxTRESPU=gres/gpu=2"}}) {
    CliResult r = sacctmgr(args);
    ASSERT_EQ(r.status, 0) << args[1] << " " << args[2] << " " << args[3] << ": " << r.err;
  }
  CliResult assoc = sacctmgr({"-nP", "show", "assoc", "where", "account=nlp",
                              "format=account,user,share,grptres,grptresmins,grpjobs,maxjobs,"
                              "maxwall,maxtres"});
  ASSERT_EQ(assoc.status, 0) << assoc.err;
  // As the Slurm peer prints the same associations (the user's row shows its own limits).
  EXPECT_EQ(assoc.out,
            "nlp||3|cpu=64,gres/gpu=8,mem=100G|gres/gpu=6000|10||2-00:00:00|gres/gpu=4\n"
            "nlp|alice|1||||4||\n");
  CliResult qos = sacctmgr({"-P", "show", "qos", "high",
                            "format=name,priority,maxwall,maxtrespu,preemptmode,usagefactor"});
  ASSERT_EQ(qos.status, 0) << qos.err;
  EXPECT_EQ(qos.out,
            "Name|Priority|MaxWall|MaxTRESPU|PreemptMode|UsageFactor\n"
            "high|100|01:00:00|gres/gpu=2|REQUEUE|1.000000\n");
  CliResult users = sacctmgr({"show", "user", "alice"});
  ASSERT_EQ(users.status, 0) << users.err;
  EXPECT_EQ(users.out,
            "      User   Def Acct     Admin \n"
            "---------- ---------- --------- \n"
            "     alice        nlp      None \n");

  CliResult modified =
      sacctmgr({"-i", "modify", "account", "where", "name=nlp", "set", "GrpTRES=gres/gpu=16"});
  ASSERT_EQ(modified.status, 0) << modified.err;
  CliResult after = sacctmgr({"-nP", "show", "assoc", "account=nlp", "format=grptres"});
  EXPECT_EQ(after.out.substr(0, after.out.find('\n')), "cpu=64,gres/gpu=16,mem=100G");

  CliResult refused = sacctmgr({"-i", "add", "account", "x", "parent=nope"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("\"nope\""), std::string::npos) << refused.err;
  CliResult in_use = sacctmgr({"-i", "delete", "account", "research"});
  EXPECT_EQ(in_use.status, 1);
  EXPECT_NE(in_use.err.find("sub-account"), std::string::npos) << in_use.err;

  // Without -i it asks, and "n" changes nothing.
  CliResult asked = cluster.CliAs("sacctmgr", {"delete", "qos", "high"}, "", {}, "n\n");
  EXPECT_NE(asked.out.find("Would you like to commit changes?"), std::string::npos) << asked.out;
  EXPECT_EQ(sacctmgr({"-nP", "show", "qos", "high", "format=name"}).out, "high\n");

  ASSERT_EQ(sacctmgr({"-i", "delete", "user", "alice", "where", "account=nlp"}).status, 0);
  EXPECT_EQ(sacctmgr({"-nP", "show", "assoc", "where", "user=alice", "format=account"}).out, "");
  ASSERT_EQ(sacctmgr({"-i", "delete", "qos", "high"}).status, 0);
  EXPECT_EQ(sacctmgr({"-nP", "show", "qos", "high", "format=name"}).out, "");
}

// Account coordinators and partitions restricted to accounts (issue 16 item 2): carol, made
// coordinator of nlp by the admin, manages nlp's sub-accounts, users and jobs with `corral`,
// `sacctmgr` and `scancel` under her own credential, and is refused on the neighbour account
// vision, above her level, and on QOS; a partition with AllowAccounts refuses bob's job of
// vision in Slurm's words and records nothing. The users are the harness's: tokens minted
// with the cluster's key (verified credentials), one Unix process each.
TEST(GovernanceTest, ACoordinatorManagesHerAccountOnlyAndAPartitionRefusesOtherAccounts) {
  TestCluster cluster({.nodes = 1, .gpus_per_node = 2, .extra_controller_toml = R"(
[[partition]]
name = "main"
default = true
[[partition]]
name = "nlp_only"
AllowAccounts = ["nlp"]
[[account]]
name = "research"
[[account]]
name = "nlp"
parent = "research"
users = ["alice", "carol"]
[[account]]
name = "vision"
parent = "research"
users = ["bob"]
)"});
  ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
  auto sacctmgr = [&](std::vector<std::string> args) { return cluster.CliAs("sacctmgr", args); };
  // The admin (this process's user) makes carol coordinator of nlp.
  CliResult made = sacctmgr({"-i", "add", "coordinator", "account=nlp", "names=carol"});
  ASSERT_EQ(made.status, 0) << made.out << made.err;
  EXPECT_NE(made.out.find(" Adding Coordinator User(s)\n  carol\n To Account(s) and all "
                          "sub-accounts\n  nlp\n"),
            std::string::npos)
      << made.out;

  const std::string bearer = cluster.Token("carol");
  const std::map<std::string, std::string> as_carol = {{"CORRAL_TOKEN", bearer.substr(7)}};
  auto carol = [&](const std::string& program, const std::vector<std::string>& args) {
    return cluster.CliAs(program, args, "", as_carol);
  };
  // Her account's sub-accounts and users.
  CliResult sub = carol("corral", {"account", "add", "nlp_sub", "--parent", "nlp"});
  ASSERT_EQ(sub.status, 0) << sub.err;
  CliResult user = carol("sacctmgr", {"-i", "add", "user", "dave", "account=nlp_sub"});
  ASSERT_EQ(user.status, 0) << user.err;
  CliResult limited =
      carol("sacctmgr", {"-i", "modify", "account", "nlp_sub", "set", "GrpTRES=gres/gpu=1"});
  ASSERT_EQ(limited.status, 0) << limited.err;
  CliResult coords = sacctmgr({"-nP", "show", "account", "withcoord", "format=account,coord"});
  ASSERT_EQ(coords.status, 0) << coords.err;
  EXPECT_EQ(coords.out, "nlp|carol\nnlp_sub|carol\nresearch|\nvision|\n");
  // The neighbour's account, her own account's limits, above her level, QOS: refused, naming
  // what; nothing changed.
  CliResult before = cluster.Cli({"account", "list", "--json"});
  struct Refused {
    std::string program;
    std::vector<std::string> args;
    std::string says;
  };
  for (const Refused& r : std::vector<Refused>{
           {"corral", {"account", "modify", "vision", "--max-gpus", "1"}, "\"vision\""},
           {"corral", {"account", "modify", "nlp", "--max-gpus", "1"}, "\"nlp\""},
           {"corral", {"account", "add", "rogue", "--parent", "research"}, "\"rogue\""},
           {"corral", {"user", "add", "erin", "--account", "vision"}, "\"erin\""},
           {"corral", {"qos", "add", "fast"}, "carol"},
           {"sacctmgr",
            {"-i", "add", "coordinator", "account=research", "names=carol"},
            "Access/permission denied"},
           {"corral", {"account", "coordinator", "add", "vision", "carol"}, "\"vision\""},
       }) {
    CliResult got = carol(r.program, r.args);
    EXPECT_NE(got.status, 0) << r.args[0] << " " << r.args[1] << " " << r.args[2];
    EXPECT_NE(got.err.find(r.says), std::string::npos)
        << r.args[0] << " " << r.args[1] << " " << r.args[2] << ": " << got.err;
  }
  EXPECT_EQ(cluster.Cli({"account", "list", "--json"}).out, before.out);

  // Jobs: alice's (nlp) she may cancel; bob's (vision) not.
  JobSpec held = cluster.ShellJob("true");
  held.hold = true;
  held.account = "nlp";
  auto alices = cluster.Submit(held, "alice");
  held.account = "vision";
  auto bobs = cluster.Submit(held, "bob");
  ASSERT_TRUE(alices.has_value() && bobs.has_value());
  CliResult cancel = carol("scancel", {alices->job_id.ToString()});
  EXPECT_EQ(cancel.status, 0) << cancel.err;
  EXPECT_EQ(cluster.GetJob(alices->job_id)->job.state, JobState::kCancelled);
  CliResult neighbour = carol("scancel", {bobs->job_id.ToString()});
  EXPECT_NE(neighbour.status, 0);
  EXPECT_EQ(cluster.GetJob(bobs->job_id)->job.state, JobState::kPending);

  // AllowAccounts: bob's job of vision may not use nlp_only; nothing is recorded.
  auto jobs_before = cluster.ListJobs();
  ASSERT_TRUE(jobs_before.has_value());
  JobSpec wrong = cluster.ShellJob("true");
  wrong.partitions = {"nlp_only"};
  wrong.account = "vision";
  auto refused = cluster.Submit(wrong, "bob");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("Invalid account or account/partition combination "
                                         "specified: Job's account not permitted to use this "
                                         "partition (nlp_only allows nlp not vision)"),
            std::string::npos)
      << refused.error().message;
  EXPECT_EQ(cluster.ListJobs()->size(), jobs_before->size());
  CliResult shown = cluster.CliAs("scontrol", {"show", "partition", "nlp_only"});
  EXPECT_NE(shown.out.find("AllowGroups=ALL AllowAccounts=nlp AllowQos=ALL"), std::string::npos)
      << shown.out;

  // The refusals are in the audit log under carol's name.
  CliResult audit = cluster.Cli({"audit", "--user", "carol", "--json"});
  ASSERT_EQ(audit.status, 0) << audit.err;
  EXPECT_NE(audit.out.find(R"("route":"/api/v1/accounts/{name}/coordinators")"), std::string::npos)
      << audit.out;
  EXPECT_NE(audit.out.find(R"("status":403)"), std::string::npos) << audit.out;
}

}  // namespace
}  // namespace corral::testing
