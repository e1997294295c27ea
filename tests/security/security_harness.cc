#include "tests/security/security_harness.h"

#include <stdlib.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "api/json_codec.h"
#include "api/scrape_token.h"
#include "controller/controller.h"
#include "controller/job_credentials.h"
#include "controller/service.h"
#include "controller/testing/requests.h"
#include "core/check.h"
#include "sched/config.h"
#include "sched/first_fit_policy.h"
#include "store/memory_store.h"

namespace corral::security {
namespace {

// Maps "Test <name>" to the identity of the header comment.
class TestAuthenticator final : public api::Authenticator {
 public:
  explicit TestAuthenticator(controller::ControllerService** service) : service_(service) {}

  Result<api::Identity> Authenticate(const api::HttpRequest& request, Timestamp) const override {
    std::string header = request.header("authorization");
    if (header.rfind("Test ", 0) != 0) {
      return MakeError(ErrorCode::kUnauthenticated, "no Authorization header");
    }
    std::string name = header.substr(5);
    if (name == "alice") return User("alice", 1000, api::Role::kUser);
    if (name == "bob") return User("bob", 1001, api::Role::kUser);
    if (name == "olga") return User("olga", 1500, api::Role::kOperator);
    if (name == "root") return User("root", 0, api::Role::kAdmin);
    if (name == "carol") return User("carol", 1002, api::Role::kUser);  // a coordinator
    if (name.rfind("agent:", 0) == 0) {
      return api::Identity{.user = name,
                           .uid = api::kNoUnixId,
                           .gid = api::kNoUnixId,
                           .role = api::Role::kAgent,
                           .node = name.substr(6)};
    }
    if (name.rfind("job:", 0) == 0) {
      JobId id(std::stoull(name.substr(4)));
      // The credential is minted for the job's current run.
      auto gen =
          (*service_)->Call<Generation>([id](controller::Controller& c) -> Result<Generation> {
            CORRAL_ASSIGN_OR_RETURN(api::JobInfo info, c.GetJob(id));
            return info.job.allocation.generation;
          });
      if (!gen) return tl::unexpected<Error>(gen.error());
      return api::Identity{.user = "alice",
                           .uid = 1000,
                           .gid = 1000,
                           .role = api::Role::kJob,
                           .job = id,
                           .generation = *gen};
    }
    return MakeError(ErrorCode::kUnauthenticated, "unknown test caller " + name);
  }

 private:
  static api::Identity User(std::string name, uint32_t uid, api::Role role) {
    return api::Identity{.user = std::move(name), .uid = uid, .gid = uid, .role = role};
  }
  controller::ControllerService** service_;
};

}  // namespace

SecurityCluster::SecurityCluster(controller::ControllerConfig config,
                                 std::unique_ptr<store::Store> store) {
  config.listen_host = "127.0.0.1";
  config.listen_port = 0;
  config.user_ids = controller::testing::TestUserIds;
  char scratch[] = "/tmp/corral_security_XXXXXX";
  CORRAL_CHECK(mkdtemp(scratch) != nullptr);
  scratch_ = scratch;
  if (config.metrics_token_file.empty()) {
    config.metrics_token_file = scratch_ + "/scrape-token";
    auto token = api::ScrapeToken::CreateFile(config.metrics_token_file);
    CORRAL_CHECK(token.has_value()) << token.error().message;
    scrape_token_ = "Bearer " + token->value();
  }
  sched::SchedulerConfig sched = sched::DefaultSchedulerConfig();
  sched.partitions = {Partition{.name = "gpu", .is_default = true}};
  auto key = api::JwtKey::FromBytes(std::string(48, 'k'));
  CORRAL_CHECK(key.has_value());
  auto credentials = std::make_shared<const api::Credentials>(
      api::Keyring::FromKey(*key), api::TokenPolicy{.cluster = "security-test"});
  // The authenticator reads the service through `self_` (set before Start).
  controller::ServiceSecurity security{
      .authenticator = std::make_unique<TestAuthenticator>(&self_),
      .jobs = std::make_shared<controller::JobCredentials>(credentials, Minutes(5))};
  service_ = std::make_unique<controller::ControllerService>(
      std::move(config), std::move(sched), std::make_unique<sched::FirstFitPolicy>(),
      store ? std::move(store) : std::make_unique<store::MemoryStore>(), std::move(security),
      clock_);
  self_ = service_.get();
  Status started = service_->Start();
  CORRAL_CHECK(started.has_value()) << started.error().message;
  auto client = api::HttpClient::Create(service_->url());
  CORRAL_CHECK(client.has_value());
  client_ = std::move(*client);
}

SecurityCluster::~SecurityCluster() {
  service_->Stop();
  service_.reset();
  std::filesystem::remove_all(scratch_);
}

api::HttpResponse SecurityCluster::Send(const std::string& caller, const std::string& method,
                                        const std::string& path, const std::string& body) {
  std::map<std::string, std::string> headers;
  if (caller == "scrape") {
    headers["authorization"] = scrape_token_;
  } else if (!caller.empty()) {
    headers["authorization"] = "Test " + caller;
  }
  auto r = client_->Send(method, path, body, headers);
  if (!r) return api::HttpResponse{.status = 0, .body = r.error().message};
  return *r;
}

JobId SecurityCluster::Submit(const std::string& caller, const JobSpec& spec) {
  api::HttpResponse r = Send(caller, "POST", "/api/v1/jobs", api::EncodeJobSpec(spec));
  CORRAL_CHECK(r.status == 201) << r.status << " " << r.body;
  auto decoded = api::DecodeSubmitResponse(r.body);
  CORRAL_CHECK(decoded.has_value());
  return decoded->job_id;
}

void SecurityCluster::RegisterNode(const std::string& name, uint32_t gpus) {
  api::HttpResponse r =
      Send("agent:" + name, "POST", "/api/v1/agents/register",
           api::EncodeRegisterRequest(controller::testing::NodeRegistration(name, gpus)));
  CORRAL_CHECK(r.status == 200) << r.status << " " << r.body;
}

JobSpec TestJob(uint32_t gpus, bool hold) {
  JobSpec spec = controller::testing::BatchJob(gpus);
  spec.hold = hold;
  spec.resources.gpus_per_node = gpus;
  return spec;
}

}  // namespace corral::security
