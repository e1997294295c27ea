// Who is calling, over what transport (issue 15; docs/security.md): every connection of a
// cluster is TLS verified against its CA; a node's credential acts for that node only; the
// controller's call for one node is refused by another; a job holds its own credential, which
// ends with it; the bytes on the wire hold no token and no script; CLI calls resume a TLS
// session through a private per-user cache; a step's output travels encrypted under a key
// only the step's own processes hold; secret files readable by others are refused at start.
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "agent/exec/step_output.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "api/step_io.h"
#include "cli/cluster_pki.h"
#include "core/clock.h"
#include "tests/integration/test_cluster.h"
#include "tests/integration/test_util.h"
#include "tests/integration/trust_util.h"

namespace corral::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

std::optional<JobId> ParseJobIdText(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return {};
  return JobId(std::stoull(text));
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class TrustTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new TestCluster({.nodes = 2, .gpus_per_node = 1, .cpus_per_node = 4});
    Status s = cluster_->Start();
    ASSERT_TRUE(s.has_value()) << s.error().message;
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // node `node`'s agent URL, as it registered.
  static std::string AgentUrl(const std::string& node) {
    auto nodes = cluster_->ListNodes();
    if (!nodes) return "";
    for (const auto& n : *nodes) {
      if (n.node.inventory.name == node) return n.node.inventory.address;
    }
    return "";
  }

  static uint16_t ControllerPort() {
    const std::string& url = cluster_->url();
    return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  }

  static TestCluster* cluster_;
};

TestCluster* TrustTest::cluster_ = nullptr;

TEST_F(TrustTest, ClientsVerifyTheServerAndRefusePlainHttp) {
  ASSERT_EQ(cluster_->url().rfind("https://", 0), 0u) << cluster_->url();
  // A client that trusts another CA cannot talk to the controller, nor to an agent.
  const cli::ClusterPki other{cluster_->dir() + "/other-pki"};
  ASSERT_TRUE(cli::InitClusterPki(other, "other", SystemClock::Get().Now()).has_value());
  api::HttpClientOptions wrong;
  wrong.ca_file = other.ca_certificate();
  for (const std::string& url : {cluster_->url(), AgentUrl("node01")}) {
    auto client = api::HttpClient::Create(url, wrong);
    ASSERT_TRUE(client.has_value()) << url;
    auto r = (*client)->Send("GET", "/api/v1/health", "", {}, true);
    EXPECT_FALSE(r.has_value()) << url << " answered a client with the wrong CA";
  }
  CliResult cli =
      cluster_->CliAs("corral", {"nodes"}, "", {{"CORRAL_CA_FILE", other.ca_certificate()}});
  EXPECT_NE(cli.status, 0) << cli.out;
  EXPECT_TRUE(Has(cli.err, "controller " + cluster_->url())) << cli.err;

  // Plain HTTP: the TLS port does not answer it, and the CLI refuses it unless allowed.
  std::string plain = "http://127.0.0.1:" + std::to_string(ControllerPort());
  auto plain_client = api::HttpClient::Create(plain);
  ASSERT_TRUE(plain_client.has_value());
  EXPECT_FALSE((*plain_client)->Send("GET", "/api/v1/health", "", {}, true).has_value());
  cli = cluster_->CliAs("corral", {"nodes"}, "", {{"CORRAL_CONTROLLER", plain}});
  EXPECT_NE(cli.status, 0);
  EXPECT_TRUE(Has(cli.err, "plain http:// is refused")) << cli.err;
  cli = cluster_->CliAs(
      "corral", {"nodes"}, "",
      {{"CORRAL_CONTROLLER", "http://10.1.2.3:6900"}, {"CORRAL_ALLOW_PLAIN_HTTP", "1"}});
  EXPECT_NE(cli.status, 0);
  EXPECT_TRUE(Has(cli.err, "plain HTTP is allowed to loopback addresses only")) << cli.err;

  // The right CA: the CLI works.
  cli = cluster_->Cli({"nodes"});
  EXPECT_EQ(cli.status, 0) << cli.err;
  EXPECT_TRUE(Has(cli.out, "node02")) << cli.out;
}

TEST_F(TrustTest, ANodesCredentialActsForThatNodeOnly) {
  const std::string node01_keyring = cluster_->dir() + "/pki/nodes/node01.keyring";
  auto keyring = api::Keyring::FromFile(node01_keyring);
  ASSERT_TRUE(keyring.has_value()) << keyring.error().message;
  api::Credentials node01(*keyring, {.cluster = TestCluster::kCluster});
  auto token = node01.MintNodeToken("node01", SystemClock::Get().Now(), Seconds(300));
  ASSERT_TRUE(token.has_value()) << token.error().message;
  auto client = api::HttpClient::Create(cluster_->url(), cluster_->client_options());
  ASSERT_TRUE(client.has_value());
  auto post = [&](const std::string& path, const std::string& body,
                  const std::string& bearer) -> api::HttpResponse {
    auto r = (*client)->Send("POST", path, body, {{"authorization", "Bearer " + bearer}});
    return r ? *r : api::HttpResponse{.status = 0, .body = r.error().message};
  };

  // Its own heartbeat is accepted; anything it says for node02 is refused.
  api::HeartbeatRequest own{.node = "node01"};
  EXPECT_EQ(post("/api/v1/agents/heartbeat", api::EncodeHeartbeatRequest(own), *token).status, 200);
  api::HeartbeatRequest beat{.node = "node02"};
  api::HttpResponse r = post("/api/v1/agents/heartbeat", api::EncodeHeartbeatRequest(beat), *token);
  EXPECT_EQ(r.status, 403) << r.body;
  api::JobEventsRequest events{.node = "node02"};
  r = post("/api/v1/agents/events", api::EncodeJobEventsRequest(events), *token);
  EXPECT_EQ(r.status, 403) << r.body;
  api::RegisterRequest reg;
  reg.inventory.name = "node02";
  reg.inventory.address = "https://127.0.0.1:1";
  r = post("/api/v1/agents/register", api::EncodeRegisterRequest(reg), *token);
  EXPECT_EQ(r.status, 403) << r.body;
  // node02 keeps its real address.
  EXPECT_NE(AgentUrl("node02"), "https://127.0.0.1:1");

  // Its key cannot sign for node02 (the keyring has no key for it), and the same secret used
  // as if it were a cluster key is refused: the controller knows it as node01's.
  EXPECT_FALSE(node01.MintNodeToken("node02", SystemClock::Get().Now(), Seconds(300)).has_value());
  const api::Keyring::Entry& entry = keyring->entries().front();
  api::Keyring forged;
  ASSERT_TRUE(forged.Add(entry.kid, entry.secret).has_value());
  ASSERT_TRUE(forged.SetSigning(entry.kid).has_value());
  api::Credentials forger(forged, {.cluster = TestCluster::kCluster});
  auto as_node02 = forger.MintNodeToken("node02", SystemClock::Get().Now(), Seconds(300));
  ASSERT_TRUE(as_node02.has_value());
  r = post("/api/v1/agents/heartbeat", api::EncodeHeartbeatRequest(beat), *as_node02);
  EXPECT_EQ(r.status, 401) << r.body;
  auto admin = forger.MintUserToken({.user = "root", .uid = 0, .gid = 0}, SystemClock::Get().Now(),
                                    Seconds(300));
  ASSERT_TRUE(admin.has_value());
  r = post("/api/v1/nodes/node02/drain", api::EncodeDrainRequest({"x"}), *admin);
  EXPECT_EQ(r.status, 401) << r.body;
  // An agent is no user: it cannot drain a node.
  r = post("/api/v1/nodes/node02/drain", api::EncodeDrainRequest({"x"}), *token);
  EXPECT_NE(r.status, 200) << r.body;
}

TEST_F(TrustTest, TheControllersCallForOneNodeIsRefusedByAnother) {
  api::TimeLimitRequest req{
      .job = JobId(999999), .generation = Generation(1), .time_limit = Minutes(5)};
  auto send = [&](const std::string& node, const std::string& authorization) {
    auto agent = api::HttpClient::Create(AgentUrl(node), cluster_->client_options());
    if (!agent) return api::HttpResponse{.status = 0, .body = agent.error().message};
    auto r = (*agent)->Send("POST", "/api/v1/jobs/limit", api::EncodeTimeLimitRequest(req),
                            {{"authorization", authorization}});
    return r ? *r : api::HttpResponse{.status = 0, .body = r.error().message};
  };
  api::HttpResponse mine = send("node01", cluster_->ControllerCall("node01"));
  EXPECT_NE(mine.status, 401) << mine.body;
  EXPECT_NE(mine.status, 0) << mine.body;
  api::HttpResponse theirs = send("node02", cluster_->ControllerCall("node01"));
  EXPECT_EQ(theirs.status, 401) << theirs.body;
  // A user's token is no call of the controller either.
  EXPECT_EQ(send("node02", cluster_->Token("")).status, 401);
}

TEST_F(TrustTest, AJobHoldsItsOwnCredentialWhichEndsWithIt) {
  const std::string dir = cluster_->work_dir() + "/jobcred";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);
  // Submitted by the CLI, whose environment holds CORRAL_KEY_FILE (the cluster keyring).
  std::ofstream(dir + "/job.sh") << "#!/bin/sh\n"
                                 << "env > env.out\n"
                                 << "corral show $CORRAL_JOB_ID --json > show.out 2> show.err\n"
                                 << "printf %s \"$CORRAL_JOB_CREDENTIAL\" > cred.tmp\n"
                                 << "mv cred.tmp cred\n"
                                 << "while [ ! -e go ]; do sleep 0.05; done\n";
  CliResult submitted = cluster_->Cli({"submit", "--cpus-per-task", "1", "job.sh"}, dir);
  ASSERT_EQ(submitted.status, 0) << submitted.err;
  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir + "/cred"); }, seconds(30)));
  std::string credential = ReadFile(dir + "/cred");
  ASSERT_FALSE(credential.empty());
  std::string env = ReadFile(dir + "/env.out");
  EXPECT_FALSE(Has(env, "CORRAL_KEY_FILE=")) << env;
  EXPECT_FALSE(Has(env, "CORRAL_TOKEN=")) << env;
  EXPECT_TRUE(Has(env, "CORRAL_CA_FILE=" + cluster_->ca_file())) << env;
  // Inside the job, `corral` works with the job's credential.
  std::string show = ReadFile(dir + "/show.out");
  EXPECT_TRUE(Has(show, "\"state\"")) << show << ReadFile(dir + "/show.err");

  auto client = api::HttpClient::Create(cluster_->url(), cluster_->client_options());
  ASSERT_TRUE(client.has_value());
  // "Submitted batch job N"
  const std::string id =
      submitted.out.substr(submitted.out.find_last_of(' ') + 1,
                           submitted.out.find_last_not_of("\n") - submitted.out.find_last_of(' '));
  auto job_id = ParseJobIdText(id);
  ASSERT_TRUE(job_id.has_value()) << submitted.out;
  auto get = [&] {
    auto r = (*client)->Send("GET", "/api/v1/jobs/" + id, "",
                             {{"authorization", "Bearer " + credential}});
    return r ? *r : api::HttpResponse{.status = 0, .body = r.error().message};
  };
  api::HttpResponse running = get();
  EXPECT_EQ(running.status, 200) << running.body;
  EXPECT_FALSE(Has(running.body, credential));

  std::ofstream(dir + "/go") << "";
  auto ended = cluster_->WaitJob(*job_id, seconds(60));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->job.state, JobState::kCompleted) << ended->job.reason;
  api::HttpResponse after = get();
  EXPECT_EQ(after.status, 401) << after.body;
}

// A requeue gives the job a new run (generation) at once: the old run's credential is refused
// from the requeue on, and still once the job runs again under a newer one.
TEST_F(TrustTest, ARequeuedJobsOldCredentialIsRefusedAfterItsRelaunch) {
  const std::string dir = cluster_->work_dir() + "/requeuecred";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);
  JobSpec spec = cluster_->ShellJob(
      "cd " + dir +
      "\n"
      "run=$CORRAL_RESTART_COUNT\n"
      "printf %s \"$CORRAL_JOB_CREDENTIAL\" > cred.tmp.$run\n"
      "mv cred.tmp.$run cred.$run\n"
      "while [ ! -e go.$run ]; do sleep 0.05; done\n");
  auto submitted = cluster_->Submit(spec);
  ASSERT_TRUE(submitted.has_value()) << submitted.error().message;
  const std::string id = submitted->job_id.ToString();
  auto client = api::HttpClient::Create(cluster_->url(), cluster_->client_options());
  ASSERT_TRUE(client.has_value());
  auto status_with = [&](const std::string& credential) {
    auto r = (*client)->Send("GET", "/api/v1/jobs/" + id, "",
                             {{"authorization", "Bearer " + credential}});
    return r ? r->status : 0;
  };
  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir + "/cred.0"); }, seconds(30)));
  const std::string first = ReadFile(dir + "/cred.0");
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(status_with(first), 200);

  auto requeued = cluster_->Request("POST", "/api/v1/jobs/" + id + "/requeue", "");
  ASSERT_TRUE(requeued.has_value());
  ASSERT_EQ(requeued->status, 200) << requeued->body;
  EXPECT_EQ(status_with(first), 401) << "refused from the requeue on";

  ASSERT_TRUE(WaitFor([&] { return fs::exists(dir + "/cred.1"); }, seconds(30)));
  const std::string second = ReadFile(dir + "/cred.1");
  EXPECT_NE(second, first);
  EXPECT_EQ(status_with(second), 200) << "the new run's credential works";
  EXPECT_EQ(status_with(first), 401) << "the relaunch does not revive the old run's";

  std::ofstream(dir + "/go.1") << "";
  auto ended = cluster_->WaitJob(submitted->job_id, seconds(60));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->job.state, JobState::kCompleted) << ended->job.reason;
  EXPECT_EQ(ended->job.restart_count, 1u);
}

TEST_F(TrustTest, TheWireHoldsNoTokenAndNoScript) {
  RecordingRelay relay(ControllerPort());
  auto client = api::HttpClient::Create("https://127.0.0.1:" + std::to_string(relay.port()),
                                        cluster_->client_options());
  ASSERT_TRUE(client.has_value());
  const std::string marker = "corral-wire-marker-5f3a";
  JobSpec spec = cluster_->ShellJob("echo " + marker);
  std::string token = cluster_->Token("");
  auto r =
      (*client)->Send("POST", "/api/v1/jobs", api::EncodeJobSpec(spec), {{"authorization", token}});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->status, 201) << r->body;
  auto id = api::DecodeSubmitResponse(r->body);
  ASSERT_TRUE(id.has_value());
  // Reading the job back sends the script the other way.
  auto back = (*client)->Send("GET", "/api/v1/jobs/" + id->job_id.ToString(), "",
                              {{"authorization", token}}, true);
  ASSERT_TRUE(back.has_value());
  ASSERT_TRUE(Has(back->body, marker));  // it did travel, inside TLS
  std::string wire = relay.bytes();
  EXPECT_GT(wire.size(), 1000u);
  EXPECT_FALSE(Has(wire, marker));
  EXPECT_FALSE(Has(wire, token.substr(7)));
  EXPECT_FALSE(Has(wire, "Bearer"));
  EXPECT_FALSE(Has(wire, "/api/v1/"));
  ASSERT_TRUE(cluster_->WaitJob(id->job_id, seconds(60)).has_value());
}


TEST_F(TrustTest, CliCallsResumeTheTlsSessionOfAnEarlierCallThroughAPrivateCache) {
  std::string metrics_token = ReadFile(cluster_->dir() + "/pki/metrics.token");
  metrics_token.erase(metrics_token.find_last_not_of("\n") + 1);
  auto client = api::HttpClient::Create(cluster_->url(), cluster_->client_options());
  ASSERT_TRUE(client.has_value());
  auto full = [&] { return Handshakes(**client, metrics_token, false); };
  auto resumed = [&] { return Handshakes(**client, metrics_token, true); };
  ASSERT_GE(full(), 0);

  const std::string runtime = cluster_->dir() + "/xdg-runtime";
  fs::create_directories(runtime);
  chmod(runtime.c_str(), 0700);
  // The direct path's cache: without the connection holder (connection_holder_test.cc).
  const std::map<std::string, std::string> env = {{"XDG_RUNTIME_DIR", runtime},
                                                  {"CORRAL_CONNECTION_HOLDER", "0"}};
  const std::string cache = runtime + "/corral/tls-sessions";
  auto mode = [](const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0u;
  };

  // The first call makes a full handshake and leaves its session in a private file.
  long full0 = full(), resumed0 = resumed();
  CliResult cli = cluster_->CliAs("corral", {"nodes"}, "", env);
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(full() - full0, 1);
  ASSERT_TRUE(fs::exists(cache));
  EXPECT_EQ(mode(cache), 0600u);
  EXPECT_EQ(mode(runtime + "/corral"), 0700u);

  // Later calls, each a new process, resume it: no full handshake.
  full0 = full();
  resumed0 = resumed();
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"nodes"}, {"queue"}, {"nodes"}}) {
    cli = cluster_->CliAs("corral", args, "", env);
    ASSERT_EQ(cli.status, 0) << cli.err;
  }
  EXPECT_EQ(full() - full0, 0);
  EXPECT_GE(resumed() - resumed0, 3);
  // squeue through the Slurm front end shares it too.
  full0 = full();
  cli = cluster_->CliAs("squeue", {}, "", env);
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(full() - full0, 0);

  // A cache that others may read is not used (and said so), then replaced by a private one.
  ASSERT_EQ(chmod(cache.c_str(), 0644), 0);
  full0 = full();
  cli = cluster_->CliAs("corral", {"nodes"}, "", env);
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_TRUE(Has(cli.err, "TLS session cache " + cache)) << cli.err;
  EXPECT_EQ(full() - full0, 1);
  EXPECT_EQ(mode(cache), 0600u);
  // A corrupt one is ignored and replaced.
  std::ofstream(cache, std::ios::trunc) << "garbage";
  full0 = full();
  ASSERT_EQ(cluster_->CliAs("corral", {"nodes"}, "", env).status, 0);
  EXPECT_EQ(full() - full0, 1);
  full0 = full();
  ASSERT_EQ(cluster_->CliAs("corral", {"nodes"}, "", env).status, 0);
  EXPECT_EQ(full() - full0, 0);

  // Without XDG_RUNTIME_DIR it lives in ~/.corral; under another CA it is not offered.
  cli = cluster_->CliAs("corral", {"nodes"}, "",
                        {{"XDG_RUNTIME_DIR", ""}, {"CORRAL_CONNECTION_HOLDER", "0"}});
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(mode(cluster_->dir() + "/.corral/tls-sessions"), 0600u);
  // (Another CA file: here the same certificate and a line more; the key is the content.)
  const std::string other_ca = cluster_->dir() + "/ca-copy.crt";
  std::ofstream(other_ca) << ReadFile(cluster_->ca_file()) << "\n";
  full0 = full();
  cli = cluster_->CliAs("corral", {"nodes"}, "",
                        {{"XDG_RUNTIME_DIR", runtime},
                         {"CORRAL_CA_FILE", other_ca},
                         {"CORRAL_CONNECTION_HOLDER", "0"}});
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_EQ(full() - full0, 1);
}

TEST_F(TrustTest, StepOutputIsEncryptedAndOnlyTheStepsSecretOpensIt) {
  // `corral run`'s side: the output server with the step's key; the agent's side: the
  // forwarder, through a relay that records the wire.
  const std::string secret = "5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e";
  const std::string marker = "corral-step-output-marker-9c1e";
  std::mutex mu;
  std::string received;
  api::HttpServer server(api::HttpServerOptions{.tls = api::StepIoServerTls(secret)});
  server.Route("POST", "/io", [&](const api::HttpRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    received += r.body;
    return api::HttpResponse{.body = "{}"};
  });
  ASSERT_TRUE(server.Start("127.0.0.1", 0).has_value());
  auto got = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return received;
  };
  // Runs one task's output through a forwarder holding `key` to `port`; true when all of it
  // was handed on (or dropped) by the forwarder.
  auto forward = [&](const std::string& key, uint16_t port, const std::string& text) {
    agent::StepOutputForwarder f("https://127.0.0.1:" + std::to_string(port), key, "test step");
    auto fds = f.AddTask(0);
    if (!fds) return false;
    f.Start();
    bool wrote = write(fds->first, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fds->first);
    close(fds->second);
    return wrote && WaitFor([&] { return f.done(); }, seconds(20));
  };

  RecordingRelay relay(server.port());
  ASSERT_TRUE(forward(secret, relay.port(), marker + "\n"));
  EXPECT_EQ(got(), marker + "\n");
  const std::string wire = relay.bytes();
  EXPECT_GT(wire.size(), 500u);
  EXPECT_FALSE(Has(wire, marker));
  EXPECT_FALSE(Has(wire, secret));
  EXPECT_FALSE(Has(wire, "/io?task="));

  // An agent (or anyone) without the secret cannot post into the step: the handshake fails.
  ASSERT_TRUE(forward("not-the-secret-not-the-secret-00", server.port(), "forged\n"));
  EXPECT_EQ(got(), marker + "\n");
  auto plain = api::HttpClient::Create("http://127.0.0.1:" + std::to_string(server.port()));
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE((*plain)->Send("POST", "/io?task=0&stream=out", "forged\n").has_value());
  auto certificate_client = api::HttpClient::Create(
      "https://127.0.0.1:" + std::to_string(server.port()), cluster_->client_options());
  ASSERT_TRUE(certificate_client.has_value());
  EXPECT_FALSE(
      (*certificate_client)->Send("POST", "/io?task=0&stream=out", "forged\n").has_value());
  EXPECT_EQ(got(), marker + "\n");

  // Nor pose as the step's server: an impostor with another key gets nothing.
  std::string stolen;
  api::HttpServer impostor(
      api::HttpServerOptions{.tls = api::StepIoServerTls("another-secret-another-secret-00")});
  impostor.Route("POST", "/io", [&](const api::HttpRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    stolen += r.body;
    return api::HttpResponse{.body = "{}"};
  });
  ASSERT_TRUE(impostor.Start("127.0.0.1", 0).has_value());
  ASSERT_TRUE(forward(secret, impostor.port(), marker + "\n"));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(stolen, "");
}

TEST_F(TrustTest, SecretFilesReadableByOthersAreRefusedAtStart) {
  // node02's agent config, with its certificate key copied to a file others may read.
  const std::string adir = cluster_->dir() + "/agents/node02";
  const std::string leaky = cluster_->dir() + "/leaky.key";
  fs::copy_file(cluster_->dir() + "/pki/nodes/node02.key", leaky);
  chmod(leaky.c_str(), 0644);
  std::string toml = ReadFile(adir + "/agent.toml");
  const std::string key_line = "key = \"" + cluster_->dir() + "/pki/nodes/node02.key\"";
  ASSERT_TRUE(Has(toml, key_line)) << toml;
  toml.replace(toml.find(key_line), key_line.size(), "key = \"" + leaky + "\"");
  std::ofstream(cluster_->dir() + "/leaky-agent.toml") << toml;
  CliResult agent =
      cluster_->CliAs("corral", {"agent", "--config", cluster_->dir() + "/leaky-agent.toml"});
  EXPECT_EQ(agent.status, 1);
  EXPECT_TRUE(Has(agent.err, leaky)) << agent.err;
  EXPECT_TRUE(Has(agent.err, "chmod 600")) << agent.err;

  // The same for a keyring.
  const std::string leaky_ring = cluster_->dir() + "/leaky.keyring";
  fs::copy_file(cluster_->dir() + "/pki/nodes/node02.keyring", leaky_ring);
  chmod(leaky_ring.c_str(), 0640);
  toml = ReadFile(adir + "/agent.toml");
  const std::string ring_line = "keyring = \"" + cluster_->dir() + "/pki/nodes/node02.keyring\"";
  ASSERT_TRUE(Has(toml, ring_line)) << toml;
  toml.replace(toml.find(ring_line), ring_line.size(), "keyring = \"" + leaky_ring + "\"");
  std::ofstream(cluster_->dir() + "/leaky-ring.toml") << toml;
  agent = cluster_->CliAs("corral", {"agent", "--config", cluster_->dir() + "/leaky-ring.toml"});
  EXPECT_EQ(agent.status, 1);
  EXPECT_TRUE(Has(agent.err, leaky_ring)) << agent.err;
}

// A munged of the test's own: a private key and socket in `dir`.
class PrivateMunged {
 public:
  explicit PrivateMunged(const std::string& dir) : dir_(dir) {
    fs::create_directories(dir_);
    chmod(dir_.c_str(), 0755);
    std::string key = dir_ + "/munge.key";
    if (std::system(("mungekey -c -k " + key + " >/dev/null 2>&1").c_str()) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      execl("/usr/sbin/munged", "munged", "-F", "-f", ("--key-file=" + key).c_str(),
            ("--socket=" + socket()).c_str(), ("--pid-file=" + dir_ + "/munged.pid").c_str(),
            ("--log-file=" + dir_ + "/munged.log").c_str(),
            ("--seed-file=" + dir_ + "/munged.seed").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    up_ = WaitFor([&] { return fs::exists(socket()); }, seconds(10));
  }
  ~PrivateMunged() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool up() const { return up_; }
  std::string socket() const { return dir_ + "/munge.socket"; }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  bool up_ = false;
};


TEST(MungeTest, AnotherLocalUserIsAuthenticatedAsThemselves) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to start munged and create a user";
  if (!fs::exists("/usr/sbin/munged")) GTEST_SKIP() << "munge is not installed (tools/setup.sh)";
  char tmpl[] = "/tmp/corral-munge-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  PrivateMunged munged(dir);
  ASSERT_TRUE(munged.up()) << ReadFile(dir + "/munged.log");
  TestUser b("corraltestb");
  ASSERT_TRUE(b.exists());
  {
    TestCluster cluster({.nodes = 1, .gpus_per_node = 0, .munge_socket = munged.socket()});
    ASSERT_TRUE(cluster.Start().has_value()) << cluster.ControllerLog();
    chmod(cluster.dir().c_str(), 0755);  // user B reads the CA certificate
    const std::vector<std::string> env = {
        "CORRAL_CONTROLLER=" + cluster.url(), "CORRAL_CA_FILE=" + cluster.ca_file(),
        "CORRAL_MUNGE_SOCKET=" + munged.socket(), "HOME=/tmp", "PATH=/usr/bin:/bin",
        // No holder of B's outliving the test (userdel refuses a user with processes).
        "CORRAL_CONNECTION_HOLDER=0"};
    CliResult submitted =
        b.Run({"corral", "submit", "--hold", "--parsable", "--wrap", "true"}, env);
    ASSERT_EQ(submitted.status, 0) << submitted.err;
    auto id = ParseJobIdText(submitted.out.substr(0, submitted.out.find_first_of(";\n")));
    ASSERT_TRUE(id.has_value()) << submitted.out;
    auto job = cluster.GetJob(*id);
    ASSERT_TRUE(job.has_value()) << job.error().message;
    EXPECT_EQ(job->job.spec.user, "corraltestb");
    // B cannot read the cluster's keyring, so has no other way in than MUNGE.
    CliResult with_key = b.Run({"corral", "queue"}, [&] {
      auto e = env;
      e.push_back("CORRAL_KEY_FILE=" + cluster.dir() + "/pki/keyring");
      return e;
    }());
    EXPECT_NE(with_key.status, 0);
    EXPECT_TRUE(Has(with_key.err, "keyring")) << with_key.err;
    EXPECT_EQ(cluster.Cli({"cancel", id->ToString()}).status, 0);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace corral::testing
