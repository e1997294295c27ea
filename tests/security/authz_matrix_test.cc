// The authorization matrix (issue 15, "Show"): every route of the controller's table
// (controller/routes.h) is tried by every kind of caller against a real controller on
// loopback, and the answer (refused: 401 or 403; allowed: anything else) must be the one the
// matrix below says. A route without a row fails the test, and so does a row without a route:
// a new route cannot be added unreviewed. The callers include the scrape token, a credential on
// the metrics routes only. The agent's routes (agent/routes.h) are walked the same way through
// what an agent authenticates and the one decision table (api::Authorize) they are bound to.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent/routes.h"
#include "api/json_codec.h"
#include "controller/routes.h"
#include "controller/testing/requests.h"
#include "tests/security/security_harness.h"

namespace corral::security {
namespace {

// The callers, in the order of a row's letters.
const std::vector<std::string> kCallers = {
    "",              // anonymous
    "bob",           // another user
    "alice",         // the job's owner
    "olga",          // an operator
    "root",          // an admin
    "agent:node02",  // the agent of another node
    "agent:node01",  // the agent of the node the route is about
    "job:J",         // the job credential of the job
    "job:K",         // the job credential of another job (of the same user)
    "scrape",        // the scrape token (a metrics credential: /metrics and /metrics/targets)
};

// 'y': allowed, '-': refused. Columns as kCallers.
const std::map<std::string, std::string> kMatrix = {
    // route                                           anon bob ali olg roo ag2 ag1 jJ  jK  scr
    {"GET /api/v1/health", "yyyyyyyyyy"},
    {"POST /api/v1/jobs", "-yyyy--yy-"},
    {"GET /api/v1/jobs", "-yyyy--yy-"},
    {"GET /api/v1/jobs/{id}", "-yyyy--yy-"},
    {"GET /api/v1/jobs/{id}/wait", "-yyyy--yy-"},
    {"POST /api/v1/jobs/{id}/cancel", "--yyy--y--"},
    {"DELETE /api/v1/jobs/{id}", "--yyy--y--"},
    {"POST /api/v1/jobs/{id}/requeue", "--yyy--y--"},
    {"POST /api/v1/jobs/{id}/hold", "--yyy-----"},
    {"POST /api/v1/jobs/{id}/release", "--yyy-----"},
    {"POST /api/v1/jobs/{id}/signal", "--yyy--y--"},
    {"POST /api/v1/jobs/{id}/time_limit", "--y-y-----"},
    {"POST /api/v1/jobs/{id}/steps", "--y-y--y--"},
    {"GET /api/v1/jobs/{id}/steps", "-yyyy--yy-"},
    {"GET /api/v1/jobs/{id}/steps/{step}", "-yyyy--yy-"},
    {"GET /api/v1/jobs/{id}/steps/{step}/wait", "-yyyy--yy-"},
    {"POST /api/v1/jobs/{id}/steps/{step}/cancel", "--y-y--y--"},
    {"POST /api/v1/jobs/{id}/checkpoint", "--y-y--y--"},
    {"GET /api/v1/jobs/{id}/why", "-yyyy--yy-"},
    {"GET /api/v1/jobs/{id}/gpustats", "-yyyy--yy-"},
    {"GET /api/v1/jobs/{id}/timeline", "-yyyy--yy-"},
    {"GET /api/v1/nodes", "-yyyy--yy-"},
    {"GET /api/v1/nodes/{name}", "-yyyy--yy-"},
    {"POST /api/v1/nodes/{name}/drain", "---yy-----"},
    {"POST /api/v1/nodes/{name}/resume", "---yy-----"},
    {"POST /api/v1/nodes/{name}/gpus/{index}/resume", "---yy-----"},
    {"POST /api/v1/nodes/{name}/inject", "----y-----"},
    {"GET /api/v1/priorities", "-yyyy--yy-"},
    {"GET /api/v1/partitions", "-yyyy--yy-"},
    {"GET /api/v1/reports/waste", "-yyyy--yy-"},  // others' jobs for operators and admins only
    {"GET /api/v1/audit", "---yy-----"},
    {"GET /api/v1/audit/verify", "---yy-----"},
    {"GET /metrics", "---yy----y"},
    {"GET /metrics/targets", "---yy----y"},
    {"POST /api/v1/agents/register", "------y---"},
    {"POST /api/v1/agents/heartbeat", "------y---"},
    {"POST /api/v1/agents/events", "------y---"},
    {"GET /ui/{file*}", "yyyyyyyyyy"},  // static files only; the page's data is the API's
    // Usage and fair-share reports: what a user sees is as [privacy] allows.
    {"GET /api/v1/reports/usage", "-yyyy--yy-"},
    {"GET /api/v1/fairshare", "-yyyy--yy-"},
    {"GET /api/v1/priorities/weights", "-yyyy--yy-"},
    // Accounts, users and QOS (docs/governance.md): everyone who reads the cluster sees them
    // (as sacctmgr show does); only admins change them (coordinators: issue 16 item 2).
    {"GET /api/v1/accounts", "-yyyy--yy-"},
    {"GET /api/v1/accounts/{name}", "-yyyy--yy-"},
    {"POST /api/v1/accounts", "----y-----"},
    {"PUT /api/v1/accounts/{name}", "----y-----"},
    {"DELETE /api/v1/accounts/{name}", "----y-----"},
    {"GET /api/v1/users", "-yyyy--yy-"},
    {"GET /api/v1/users/{name}", "-yyyy--yy-"},
    {"POST /api/v1/users", "----y-----"},
    {"PUT /api/v1/users/{name}", "----y-----"},
    {"DELETE /api/v1/users/{name}", "----y-----"},
    {"GET /api/v1/qos", "-yyyy--yy-"},
    {"GET /api/v1/qos/{name}", "-yyyy--yy-"},
    {"POST /api/v1/qos", "----y-----"},
    {"PUT /api/v1/qos/{name}", "----y-----"},
    {"DELETE /api/v1/qos/{name}", "----y-----"},
    // Budgets' spend (issue 16 item 5): readable as the accounts are.
    {"GET /api/v1/budgets", "-yyyy--yy-"},  // with [privacy]: her accounts' budgets only
    // `scontrol suspend|resume`: operators and admins only, as in Slurm.
    {"POST /api/v1/jobs/{id}/suspend", "---yy-----"},
    {"POST /api/v1/jobs/{id}/resume", "---yy-----"},
    {"POST /api/v1/jobs/{id}/top", "---yy-----"},  // Slurm's default (no enable_user_top)
    // `sdiag`: as /metrics (Slurm's PrivateData=usage: operators and admins; by-user counts).
    {"GET /api/v1/diag", "---yy----y"},
    // `sstat`: the owner, operators and admins (kReadJobPrivate); `sbcast`: the owner and admins.
    {"GET /api/v1/jobs/{id}/stats", "--yyy--yy-"},
    {"POST /api/v1/jobs/{id}/bcast", "--y-y--y--"},
    // Probes (issue 11): anonymous, for load balancers and orchestrators.
    {"GET /livez", "yyyyyyyyyy"},
    {"GET /readyz", "yyyyyyyyyy"},
    // Account coordinators (issue 16 item 2): admins here, where nobody coordinates anything;
    // the coordinator's own rows are kCoordinatorMatrix's.
    {"POST /api/v1/accounts/{name}/coordinators", "----y-----"},
    {"DELETE /api/v1/accounts/{name}/coordinators/{user}", "----y-----"},
};

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// A well-formed body for each route that takes one (what it asks is allowed or not is the
// matrix's question; a refusal for another reason is a 4xx other than 401/403).
}  // namespace

std::string BodyFor(const std::string& pattern) {
  if (pattern == "/api/v1/jobs") return api::EncodeJobSpec(TestJob(0, /*hold=*/true));
  if (pattern == "/api/v1/jobs/{id}/signal") return R"({"signal":"10"})";
  if (pattern == "/api/v1/jobs/{id}/time_limit") return R"({"time_limit":"5"})";
  if (pattern == "/api/v1/jobs/{id}/steps") {
    return api::EncodeStepSpec(controller::testing::StepRun({"/bin/true"}));
  }
  if (pattern == "/api/v1/nodes/{name}/drain") return api::EncodeDrainRequest({.reason = "test"});
  if (pattern == "/api/v1/nodes/{name}/inject") return api::EncodeInjectRequest({.gpu = 0});
  if (pattern == "/api/v1/agents/register") {
    return api::EncodeRegisterRequest(controller::testing::NodeRegistration("node01", 0));
  }
  if (pattern == "/api/v1/agents/heartbeat") {
    return api::EncodeHeartbeatRequest({.node = "node01"});
  }
  if (pattern == "/api/v1/agents/events") return api::EncodeJobEventsRequest({.node = "node01"});
  // Governance records (decided on the state thread, issue 16 item 2): well-formed, so that a
  // refusal is the decision's and not the body's.
  if (pattern == "/api/v1/accounts") return R"({"name":"acct1"})";
  if (pattern == "/api/v1/accounts/{name}") return R"({"name":"node01"})";
  if (pattern == "/api/v1/users") return R"({"name":"user1"})";
  if (pattern == "/api/v1/users/{name}") return R"({"name":"node01"})";
  if (pattern == "/api/v1/accounts/{name}/coordinators") return R"({"users":["alice"]})";
  return "";
}

namespace {

TEST(AuthzMatrixTest, EveryControllerRouteAnswersEveryCallerAsTheMatrixSays) {
  SecurityCluster cluster;
  // Alice's jobs J and K stay pending on nodes without GPUs (they ask for one each).
  JobId j = cluster.Submit("alice", TestJob(1));
  JobId k = cluster.Submit("alice", TestJob(1));
  cluster.RegisterNode("node01", 0);
  cluster.RegisterNode("node02", 0);

  std::set<std::string> routes;
  for (const controller::RouteSpec& spec : controller::ControllerRoutes()) {
    std::string key = std::string(spec.method) + " " + std::string(spec.pattern);
    routes.insert(key);
    auto row = kMatrix.find(key);
    if (row == kMatrix.end()) {
      ADD_FAILURE() << key << ": a route without a row in the authorization matrix";
      continue;
    }
    ASSERT_EQ(row->second.size(), kCallers.size()) << key;
    std::string path = std::string(spec.pattern);
    path = Replace(path, "{id}", j.ToString());
    path = Replace(path, "{step}", "1");
    path = Replace(path, "{name}", "node01");
    path = Replace(path, "{index}", "0");
    path = Replace(path, "{user}", "alice");
    path = Replace(path, "{file*}", "index.html");
    if (path.ends_with("/wait")) path += "?timeout=0";
    for (size_t c = 0; c < kCallers.size(); ++c) {
      std::string caller = kCallers[c];
      if (caller == "job:J") caller = "job:" + j.ToString();
      if (caller == "job:K") caller = "job:" + k.ToString();
      if (key == "POST /api/v1/jobs/{id}/release") {
        // A hold of its owner's, not an administrator's (which only operators and admins may
        // release: a rule of the job, tested in controller_test), before every try.
        cluster.Send("alice", "POST", "/api/v1/jobs/" + j.ToString() + "/hold");
      }
      api::HttpResponse r =
          cluster.Send(caller, std::string(spec.method), path, BodyFor(std::string(spec.pattern)));
      ASSERT_NE(r.status, 0) << key << " as " << kCallers[c] << ": " << r.body;
      bool refused = r.status == 401 || r.status == 403;
      bool expect_allowed = row->second[c] == 'y';
      EXPECT_EQ(!refused, expect_allowed)
          << key << " as " << (caller.empty() ? "anonymous" : caller) << ": " << r.status << " "
          << r.body;
    }
  }
  for (const auto& [key, row] : kMatrix) {
    EXPECT_TRUE(routes.contains(key)) << key << ": a row for a route the controller does not have";
  }
}

// --- Account coordinators (issue 16 item 2) ---
// carol coordinates account nlp (research > nlp > nlp_sub); bob's account vision is its
// neighbour. Each affected route is tried by carol on something of her accounts and on the
// same thing of the neighbour's: 'y' allowed, '-' refused (401/403). What she may do is what
// Slurm 22.05 lets a coordinator do (docs/governance.md, "Coordinators").
struct CoordinatorRow {
  std::string route;  // method and pattern, as in kMatrix
  std::string own_path, own_body, neighbour_path, neighbour_body;
  std::string expect;  // own, neighbour
};

TEST(AuthzMatrixTest, ACoordinatorManagesHerAccountsOnly) {
  SecurityCluster cluster;
  for (auto [path, body] : std::vector<std::pair<std::string, std::string>>{
           {"/api/v1/accounts", R"({"name":"research"})"},
           {"/api/v1/accounts", R"({"name":"nlp","parent":"research"})"},
           {"/api/v1/accounts", R"({"name":"nlp_sub","parent":"nlp"})"},
           {"/api/v1/accounts", R"({"name":"vision","parent":"research"})"},
           {"/api/v1/users", R"({"name":"alice","accounts":["nlp"]})"},
           {"/api/v1/users", R"({"name":"carol","accounts":["nlp"]})"},
           {"/api/v1/users", R"({"name":"bob","accounts":["vision"]})"},
           {"/api/v1/accounts/nlp/coordinators", R"({"users":["carol"]})"}}) {
    api::HttpResponse r = cluster.Send("root", "POST", path, body);
    ASSERT_TRUE(r.status == 200 || r.status == 201) << path << " " << body << ": " << r.body;
  }
  JobSpec in_nlp = TestJob(0);
  in_nlp.account = "nlp";
  JobSpec in_vision = TestJob(0);
  in_vision.account = "vision";
  const std::string own = "/api/v1/jobs/" + cluster.Submit("alice", in_nlp).ToString();
  const std::string other = "/api/v1/jobs/" + cluster.Submit("bob", in_vision).ToString();
  const std::string limit = R"({"time_limit":"5"})";
  const std::vector<CoordinatorRow> rows = {
      // Jobs of her accounts: hold, release, cancel, requeue, time limit, signal (as scancel).
      {"POST /api/v1/jobs/{id}/hold", own + "/hold", "", other + "/hold", "", "y-"},
      {"POST /api/v1/jobs/{id}/release", own + "/release", "", other + "/release", "", "y-"},
      {"POST /api/v1/jobs/{id}/time_limit", own + "/time_limit", limit, other + "/time_limit",
       limit, "y-"},
      {"POST /api/v1/jobs/{id}/requeue", own + "/requeue", "", other + "/requeue", "", "y-"},
      {"POST /api/v1/jobs/{id}/signal", own + "/signal", R"({"signal":"10"})", other + "/signal",
       R"({"signal":"10"})", "y-"},
      {"POST /api/v1/jobs/{id}/cancel", own + "/cancel", "", other + "/cancel", "", "y-"},
      // Not an operator's: suspend, top, steps.
      {"POST /api/v1/jobs/{id}/suspend", own + "/suspend", "", other + "/suspend", "", "--"},
      {"POST /api/v1/jobs/{id}/top", own + "/top", "", other + "/top", "", "--"},
      // Sub-accounts and their limits; never her own account's, never a deletion.
      {"POST /api/v1/accounts", "/api/v1/accounts", R"({"name":"nlp2","parent":"nlp"})",
       "/api/v1/accounts", R"({"name":"vision2","parent":"vision"})", "y-"},
      {"PUT /api/v1/accounts/{name}", "/api/v1/accounts/nlp_sub",
       R"({"name":"nlp_sub","parent":"nlp","limits":{"max_gpus":4}})", "/api/v1/accounts/vision",
       R"({"name":"vision","parent":"research","limits":{"max_gpus":4}})", "y-"},
      {"PUT /api/v1/accounts/{name}", "/api/v1/accounts/nlp",
       R"({"name":"nlp","parent":"research","limits":{"max_gpus":4}})", "/api/v1/accounts/research",
       R"({"name":"research"})", "--"},
      {"DELETE /api/v1/accounts/{name}", "/api/v1/accounts/nlp2", "", "/api/v1/accounts/vision", "",
       "--"},
      // Users of her accounts.
      {"POST /api/v1/users", "/api/v1/users", R"({"name":"dave","accounts":["nlp"]})",
       "/api/v1/users", R"({"name":"erin","accounts":["vision"]})", "y-"},
      {"PUT /api/v1/users/{name}", "/api/v1/users/dave",
       R"({"name":"dave","accounts":["nlp"],"limits":{"max_gpus":2}})", "/api/v1/users/bob",
       R"({"name":"bob","accounts":["vision"],"limits":{"max_gpus":2}})", "y-"},
      {"DELETE /api/v1/users/{name}", "/api/v1/users/dave", "", "/api/v1/users/bob", "", "y-"},
      // Coordinators at and below her level, not beside or above it.
      {"POST /api/v1/accounts/{name}/coordinators", "/api/v1/accounts/nlp_sub/coordinators",
       R"({"users":["alice"]})", "/api/v1/accounts/vision/coordinators", R"({"users":["carol"]})",
       "y-"},
      {"DELETE /api/v1/accounts/{name}/coordinators/{user}",
       "/api/v1/accounts/nlp_sub/coordinators/alice", "",
       "/api/v1/accounts/research/coordinators/carol", "", "y-"},
      // QOS are cluster configuration.
      {"POST /api/v1/qos", "/api/v1/qos", R"({"name":"fast"})", "/api/v1/qos", R"({"name":"fast"})",
       "--"},
  };
  for (const CoordinatorRow& row : rows) {
    const size_t space = row.route.find(' ');
    const std::string method = row.route.substr(0, space);
    ASSERT_TRUE(kMatrix.contains(row.route)) << row.route << ": not a route of the matrix";
    if (row.route == "POST /api/v1/jobs/{id}/release") {
      cluster.Send("alice", "POST", own + "/hold");
      cluster.Send("bob", "POST", other + "/hold");
    }
    for (int side = 0; side < 2; ++side) {
      const std::string& path = side == 0 ? row.own_path : row.neighbour_path;
      const std::string& body = side == 0 ? row.own_body : row.neighbour_body;
      api::HttpResponse r = cluster.Send("carol", method, path, body);
      ASSERT_NE(r.status, 0) << row.route;
      const bool refused = r.status == 401 || r.status == 403;
      EXPECT_EQ(!refused, row.expect[side] == 'y')
          << row.route << " as carol on " << (side == 0 ? "her account's " : "the neighbour's ")
          << path << ": " << r.status << " " << r.body;
    }
  }
}

// Agent routes: only the controller, and only with a credential for this node; /metrics also
// the scrape token. Columns: anonymous, a user, an admin, an operator, an agent (even of this
// node), a job credential, the controller for this node, the controller for another node, the
// scrape token (the metrics principal).
const std::map<std::string, std::string> kAgentMatrix = {
    {"GET /api/v1/health", "yyyyyyyyy"},
    {"POST /api/v1/launch", "------y--"},
    {"POST /api/v1/cancel", "------y--"},
    {"POST /api/v1/signal", "------y--"},
    {"POST /api/v1/jobs/limit", "------y--"},
    {"POST /api/v1/steps/launch", "------y--"},
    {"POST /api/v1/steps/signal", "------y--"},
    {"POST /api/v1/inject", "------y--"},
    // `sstat` and `sbcast`.
    {"GET /api/v1/stats", "------y--"},
    {"POST /api/v1/bcast", "------y--"},
    {"GET /metrics", "------y-y"},
};

TEST(AuthzMatrixTest, EveryAgentRouteIsForTheControllerOfThatNodeOnly) {
  const std::string node = "node01";
  std::vector<std::optional<api::Identity>> callers = {
      std::nullopt,
      api::Identity{.user = "alice", .uid = 1000, .gid = 1000, .role = api::Role::kUser},
      api::Identity{.user = "root", .uid = 0, .gid = 0, .role = api::Role::kAdmin},
      api::Identity{.user = "olga", .uid = 1500, .gid = 1500, .role = api::Role::kOperator},
      api::Identity{.user = "agent:node01",
                    .uid = api::kNoUnixId,
                    .gid = api::kNoUnixId,
                    .role = api::Role::kAgent,
                    .node = node},
      api::Identity{.user = "alice",
                    .uid = 1000,
                    .gid = 1000,
                    .role = api::Role::kJob,
                    .job = JobId(1),
                    .generation = Generation(1)},
      api::Identity{.user = "corral-controller",
                    .uid = api::kNoUnixId,
                    .gid = api::kNoUnixId,
                    .role = api::Role::kController,
                    .node = node},
      api::Identity{.user = "corral-controller",
                    .uid = api::kNoUnixId,
                    .gid = api::kNoUnixId,
                    .role = api::Role::kController,
                    .node = "node02"},
      api::Identity{.user = "metrics",
                    .uid = api::kNoUnixId,
                    .gid = api::kNoUnixId,
                    .role = api::Role::kMetrics},
  };
  // What an agent authenticates at all: the controller's calls (api::MakeAgentAuthenticator)
  // and, on /metrics, the scrape token; then the route's action is authorized.
  auto authenticated = [](const api::Identity& who, const agent::AgentRouteSpec& spec) {
    return who.role == api::Role::kController ||
           (who.role == api::Role::kMetrics && spec.action == api::Action::kReadMetrics);
  };
  std::set<std::string> routes;
  for (const agent::AgentRouteSpec& spec : agent::AgentRoutes()) {
    std::string key = std::string(spec.method) + " " + std::string(spec.pattern);
    routes.insert(key);
    auto row = kAgentMatrix.find(key);
    if (row == kAgentMatrix.end()) {
      ADD_FAILURE() << key << ": an agent route without a row in the authorization matrix";
      continue;
    }
    ASSERT_EQ(row->second.size(), callers.size()) << key;
    for (size_t c = 0; c < callers.size(); ++c) {
      bool allowed = spec.anonymous || (callers[c] && authenticated(*callers[c], spec) &&
                                        api::Authorize(*callers[c], spec.action, {.node = node}));
      EXPECT_EQ(allowed, row->second[c] == 'y') << key << " caller " << c;
    }
  }
  for (const auto& [key, row] : kAgentMatrix) {
    EXPECT_TRUE(routes.contains(key)) << key << ": a row for a route the agent does not have";
  }
}

}  // namespace
}  // namespace corral::security
