#include "api/credentials.h"

#include <atomic>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "api/auth.h"
#include "api/testing/jwt_testing.h"

namespace corral::api {
namespace {

using testing::SignRaw;

const Timestamp kNow = FromMicros(int64_t{1'780'000'000} * 1'000'000);
const std::string kClusterSecret(48, 'c');
const std::string kNode01Secret(48, '1');

// The controller's keyring: a cluster key and node01's own key; node01's agent has only its
// own key; node02's agent has none of its own (the cluster key signs for it).
Keyring ControllerRing() {
  return *Keyring::Parse("sign c\nkey c " + kClusterSecret + "\nsign n1\nkey n1 " + kNode01Secret +
                         " node=node01\n");
}
Keyring Node01Ring() {
  return *Keyring::Parse("sign n1\nkey n1 " + kNode01Secret + " node=node01\n");
}

TokenPolicy Policy() {
  return TokenPolicy{.cluster = "c1",
                     .max_lifetime = Minutes(60),
                     .max_job_lifetime = Minutes(7 * 24 * 60),
                     .clock_skew = Seconds(30)};
}

Credentials AtController() { return Credentials(ControllerRing(), Policy()); }
Credentials AtNode01() { return Credentials(Node01Ring(), Policy()); }

const Identity kAlice{"alice", 1001, 100, Role::kUser};

// Jobs that run, for the liveness hook: job -> generation.
class RunningJobs {
 public:
  void Start(JobId job, Generation gen) { running_[job] = gen; }
  void End(JobId job) { running_.erase(job); }
  JobLiveness Hook() const {
    return [this](JobId job, Generation gen) {
      ++calls_;
      auto it = running_.find(job);
      return it != running_.end() && it->second == gen;
    };
  }
  int calls() const { return calls_.load(); }

 private:
  std::map<JobId, Generation> running_;
  mutable std::atomic<int> calls_{0};
};

void ExpectRefused(const Result<Identity>& r, std::string_view what) {
  ASSERT_FALSE(r.has_value()) << "accepted, expected: " << what;
  EXPECT_EQ(r.error().code, ErrorCode::kUnauthenticated);
  EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
}

JobGrant Grant() {
  return JobGrant{.job = JobId(42),
                  .generation = Generation(3),
                  .user = "alice",
                  .uid = 1001,
                  .gid = 100,
                  .ends_at = kNow + Minutes(120)};
}

TEST(CredentialsTest, UserTokensVerifyAtTheControllerAsUsers) {
  Credentials c = AtController();
  Result<std::string> token = c.MintUserToken(kAlice, kNow, Seconds(300));
  ASSERT_TRUE(token.has_value()) << token.error().message;
  Result<Identity> id = c.VerifyAtController(*token, kNow, nullptr);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(*id, kAlice);
  // The role is the configuration's: an "admin" token is a user token.
  Identity admin = kAlice;
  admin.role = Role::kAdmin;
  EXPECT_EQ(c.VerifyAtController(*c.MintUserToken(admin, kNow, Seconds(60)), kNow, nullptr)->role,
            Role::kUser);
  // Minting checks the lifetime against the cap.
  EXPECT_EQ(c.MintUserToken(kAlice, kNow, Minutes(61)).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(c.MintUserToken(kAlice, kNow, Seconds(0)).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(c.MintUserToken(Identity{}, kNow, Seconds(9)).error().code,
            ErrorCode::kInvalidArgument);
  // Another cluster's keyring with the same kid and secret is still another issuer.
  Credentials other(ControllerRing(), TokenPolicy{.cluster = "c2"});
  ExpectRefused(
      c.VerifyAtController(*other.MintUserToken(kAlice, kNow, Seconds(60)), kNow, nullptr),
      "another cluster");
}

TEST(CredentialsTest, AnAgentTokenIsBoundToItsNode) {
  Result<std::string> token = AtNode01().MintNodeToken("node01", kNow, Seconds(300));
  ASSERT_TRUE(token.has_value()) << token.error().message;
  Result<Identity> id = AtController().VerifyAtController(*token, kNow, nullptr);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(*id, (Identity{.user = "agent:node01",
                           .uid = kNoUnixId,
                           .gid = kNoUnixId,
                           .role = Role::kAgent,
                           .node = "node01"}));
  // node01's keyring cannot speak for node02, nor for a user.
  EXPECT_EQ(AtNode01().MintNodeToken("node02", kNow, Seconds(60)).error().code,
            ErrorCode::kFailedPrecondition);
  EXPECT_EQ(AtNode01().MintUserToken(kAlice, kNow, Seconds(60)).error().code,
            ErrorCode::kFailedPrecondition);
  // An agent token whose sub names another node (signed with the cluster key) is refused.
  std::string forged =
      SignRaw(kClusterSecret, R"({"alg":"HS256","kid":"c"})",
              R"({"aud":"corral-controller","exp":1780000300,"iat":1780000000,"iss":"c1",)"
              R"("nbf":1780000000,"node":"node01","role":"agent","sub":"agent:node02"})");
  ExpectRefused(AtController().VerifyAtController(forged, kNow, nullptr), "sub is not its node's");
  EXPECT_EQ(AtController().MintNodeToken("corral-controller", kNow, Seconds(9)).error().code,
            ErrorCode::kInvalidArgument);
}

TEST(CredentialsTest, AControllerCallIsValidForOneNodeOnly) {
  Credentials controller = AtController();
  Result<std::string> call = controller.MintControllerCall("node01", kNow, Seconds(60));
  ASSERT_TRUE(call.has_value()) << call.error().message;
  Result<Identity> id = AtNode01().VerifyAtAgent(*call, "node01", kNow);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(*id, (Identity{.user = "corral-controller",
                           .uid = kNoUnixId,
                           .gid = kNoUnixId,
                           .role = Role::kController,
                           .node = "node01"}));
  // node01's call sent to node02 instead: node02 does not hold node01's key.
  Credentials node02(*Keyring::Parse("key c " + kClusterSecret + "\n"), Policy());
  ExpectRefused(node02.VerifyAtAgent(*call, "node02", kNow), "unknown key id \"n1\"");
  // Without node keys (one cluster key everywhere, as `corral dev`), the audience still binds
  // a call to its node.
  Credentials shared(*Keyring::Parse("sign c\nkey c " + kClusterSecret + "\n"), Policy());
  std::string call01 = *shared.MintControllerCall("node01", kNow, Seconds(60));
  EXPECT_TRUE(shared.VerifyAtAgent(call01, "node01", kNow));
  ExpectRefused(shared.VerifyAtAgent(call01, "node02", kNow), "not meant for \"node02\"");
  // A call for node02 is refused by node01 (its keyring does not hold the cluster key).
  ExpectRefused(AtNode01().VerifyAtAgent(
                    *controller.MintControllerCall("node02", kNow, Seconds(60)), "node01", kNow),
                "unknown key id \"c\"");
  // No other token opens an agent: a user's, an agent's own, a job's.
  ExpectRefused(
      node02.VerifyAtAgent(*controller.MintUserToken(kAlice, kNow, Seconds(60)), "node02", kNow),
      "wrong aud");
  std::string own = *AtNode01().MintNodeToken("node01", kNow, Seconds(60));
  ExpectRefused(AtNode01().VerifyAtAgent(own, "node01", kNow), "wrong aud");
  // The controller does not accept its own call tokens.
  TokenClaims to_controller{.issuer = "c1",
                            .audience = "corral-controller",
                            .subject = "corral-controller",
                            .issued_at = kNow,
                            .not_before = kNow,
                            .expires_at = kNow + Seconds(60),
                            .role = Role::kController};
  ExpectRefused(controller.VerifyAtController(*ControllerRing().Sign(to_controller), kNow, nullptr),
                "controller token is not accepted by the controller");
  // A controller-role token with aud node01 but node claim node02 (cluster key).
  TokenClaims mismatched = to_controller;
  mismatched.audience = "node01";
  mismatched.node = "node02";
  std::string token = *Keyring::Parse("sign c\nkey c " + kClusterSecret + "\n")->Sign(mismatched);
  Credentials node01_with_cluster_key(*Keyring::Parse("key c " + kClusterSecret + "\n"), Policy());
  ExpectRefused(node01_with_cluster_key.VerifyAtAgent(token, "node01", kNow),
                "controller token for node node02, not node01");
}

TEST(CredentialsTest, AJobCredentialLastsTheTimeLimitPlusGraceAndEndsWithTheJob) {
  Credentials c = AtController();
  RunningJobs jobs;
  jobs.Start(JobId(42), Generation(3));
  Result<std::string> token = c.MintJobCredential(Grant(), kNow, Minutes(5));
  ASSERT_TRUE(token.has_value()) << token.error().message;

  Result<Identity> id = c.VerifyAtController(*token, kNow, jobs.Hook());
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(*id, (Identity{.user = "alice",
                           .uid = 1001,
                           .gid = 100,
                           .role = Role::kJob,
                           .job = JobId(42),
                           .generation = Generation(3)}));
  EXPECT_EQ(jobs.calls(), 1);
  // Valid until the limit (120 min) + grace (5 min) + skew (30 s).
  EXPECT_TRUE(c.VerifyAtController(*token, kNow + Minutes(125) + Seconds(29), jobs.Hook()));
  ExpectRefused(c.VerifyAtController(*token, kNow + Minutes(125) + Seconds(30), jobs.Hook()),
                "expired");
  // Requeued: the same job with a new generation refuses the old credential.
  jobs.Start(JobId(42), Generation(4));
  ExpectRefused(c.VerifyAtController(*token, kNow, jobs.Hook()),
                "job credential for job 42 (run 3): the job no longer runs");
  // Ended early.
  jobs.End(JobId(42));
  ExpectRefused(c.VerifyAtController(*token, kNow, jobs.Hook()), "no longer runs");
  // Where job credentials are not accepted (no liveness hook), they are wrong audience.
  ExpectRefused(c.VerifyAtController(*token, kNow, nullptr), "wrong aud");
  // And an agent never takes one.
  Credentials shared(*Keyring::Parse("key c " + kClusterSecret + "\n"), Policy());
  ExpectRefused(shared.VerifyAtAgent(*token, "node01", kNow), "wrong aud");
}

TEST(CredentialsTest, AJobCredentialIsCappedAndNeverMintedForAnEndedJob) {
  Credentials c = AtController();
  RunningJobs jobs;
  jobs.Start(JobId(42), Generation(3));
  // No time limit: the cap (7 days here).
  JobGrant unlimited = Grant();
  unlimited.ends_at = Timestamp::max();
  std::string token = *c.MintJobCredential(unlimited, kNow, Minutes(5));
  EXPECT_TRUE(c.VerifyAtController(token, kNow + Minutes(7 * 24 * 60) - Seconds(1), jobs.Hook()));
  ExpectRefused(c.VerifyAtController(token, kNow + Minutes(7 * 24 * 60) + Seconds(30), jobs.Hook()),
                "expired");
  // A limit beyond the cap is capped too.
  JobGrant long_job = Grant();
  long_job.ends_at = kNow + Minutes(30 * 24 * 60);
  token = *c.MintJobCredential(long_job, kNow, Minutes(5));
  ExpectRefused(c.VerifyAtController(token, kNow + Minutes(8 * 24 * 60), jobs.Hook()), "expired");

  JobGrant ended = Grant();
  ended.ends_at = kNow - Minutes(10);
  EXPECT_EQ(c.MintJobCredential(ended, kNow, Minutes(5)).error().code,
            ErrorCode::kFailedPrecondition);
  JobGrant no_job = Grant();
  no_job.job = JobId(0);
  EXPECT_EQ(c.MintJobCredential(no_job, kNow, Minutes(5)).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(c.MintJobCredential(Grant(), kNow, -Minutes(1)).error().code,
            ErrorCode::kInvalidArgument);
  // A job-role token for the controller's audience, or a user token for the job audience,
  // is refused (signed with the cluster key by hand).
  for (const char* claims :
       {R"({"aud":"corral-controller","exp":1780000300,"gen":3,"gid":100,"iat":1780000000,)"
        R"("iss":"c1","job":42,"nbf":1780000000,"role":"job","sub":"alice","uid":1001})",
        R"({"aud":"corral-job","exp":1780000300,"gid":100,"iat":1780000000,)"
        R"("iss":"c1","nbf":1780000000,"role":"user","sub":"alice","uid":1001})"}) {
    ExpectRefused(
        c.VerifyAtController(SignRaw(kClusterSecret, R"({"alg":"HS256","kid":"c"})", claims), kNow,
                             jobs.Hook()),
        "token with aud");
  }
}

// ---------------------------------------------------------------------------------------------
// The authenticators over these credentials.

HttpRequest WithAuthorization(std::string value) {
  HttpRequest r;
  r.headers["authorization"] = std::move(value);
  return r;
}

class NoGroups final : public UserDirectory {
 public:
  std::optional<std::string> UserName(uint32_t) const override { return std::nullopt; }
  std::vector<std::string> GroupNames(const std::string& user, uint32_t) const override {
    if (user == "otto") return {"ops"};
    return {};
  }
};

TEST(ControllerAuthenticatorTest, ResolvesRolesFromTheConfigurationAndBindsAgents) {
  static const NoGroups directory;
  RunningJobs jobs;
  jobs.Start(JobId(42), Generation(3));
  auto auth = MakeControllerAuthenticator(ControllerAuthOptions{
      .credentials = AtController(),
      .roles = RoleResolver(
          RoleConfig{.admin_users = {"carol", "agent:node01"}, .operator_groups = {"ops"}},
          directory),
      .job_alive = jobs.Hook(),
      .users = &directory,
  });
  Credentials c = AtController();
  auto as = [&](const std::string& token) {
    return auth->Authenticate(WithAuthorization("Bearer " + token), kNow);
  };
  EXPECT_EQ(as(*c.MintUserToken(kAlice, kNow, Seconds(60)))->role, Role::kUser);
  EXPECT_EQ(as(*c.MintUserToken(Identity{"carol", 1000, 100}, kNow, Seconds(60)))->role,
            Role::kAdmin);
  EXPECT_EQ(as(*c.MintUserToken(Identity{"otto", 1004, 100}, kNow, Seconds(60)))->role,
            Role::kOperator);
  EXPECT_EQ(as(*c.MintUserToken(Identity{"root", 0, 0}, kNow, Seconds(60)))->role, Role::kAdmin);
  // An agent stays an agent even when its name is listed as an admin.
  Result<Identity> agent = as(*AtNode01().MintNodeToken("node01", kNow, Seconds(60)));
  ASSERT_TRUE(agent.has_value()) << agent.error().message;
  EXPECT_EQ(agent->role, Role::kAgent);
  EXPECT_EQ(agent->node, "node01");
  EXPECT_NE(agent->uid, 0u);
  Result<Identity> job = as(*c.MintJobCredential(Grant(), kNow, Minutes(5)));
  ASSERT_TRUE(job.has_value()) << job.error().message;
  EXPECT_EQ(job->role, Role::kJob);
  // The first release's tokens (no kid) are refused.
  ExpectRefused(as(JwtKey::FromBytes(kClusterSecret)->Sign(kAlice, kNow, Seconds(60))), "no kid");
  ExpectRefused(auth->Authenticate(WithAuthorization("Munge MUNGE:x:"), kNow),
                "munge authentication is not enabled");
  ExpectRefused(auth->Authenticate(HttpRequest{}, kNow), "missing Authorization header");
}

TEST(AgentAuthenticatorTest, AcceptsOnlyTheControllersCallsForItsNode) {
  auto auth = MakeAgentAuthenticator(AtNode01(), "node01");
  Credentials c = AtController();
  Result<Identity> id = auth->Authenticate(
      WithAuthorization("Bearer " + *c.MintControllerCall("node01", kNow, Seconds(60))), kNow);
  ASSERT_TRUE(id.has_value()) << id.error().message;
  EXPECT_EQ(id->role, Role::kController);
  EXPECT_TRUE(Authorize(*id, Action::kAgentCall, Resource{.node = "node01"}));
  ExpectRefused(
      auth->Authenticate(
          WithAuthorization("Bearer " + *c.MintControllerCall("node02", kNow, Seconds(60))), kNow),
      "");
  ExpectRefused(auth->Authenticate(WithAuthorization("Munge MUNGE:x:"), kNow),
                "only the controller's Bearer tokens");
}

}  // namespace
}  // namespace corral::api
