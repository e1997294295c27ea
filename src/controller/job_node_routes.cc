#include "controller/job_node_routes.h"

#include <chrono>
#include <thread>
#include <vector>

#include "api/http_status.h"
#include "api/job_stats.h"
#include "api/json_codec.h"
#include "controller/controller.h"

namespace corral::controller {
namespace {

// How long the agents have: a usage reading is quick; a file write is up to 32 MiB.
constexpr std::chrono::milliseconds kStatsDeadline{5000};
constexpr std::chrono::milliseconds kBcastDeadline{30000};

// Sends `method` `path` (`body`) to each agent at once and returns each answer (or why there is
// none), in the agents' order.
std::vector<Result<api::HttpResponse>> AskAgents(const RouteContext& ctx,
                                                 const std::vector<AgentAddress>& agents,
                                                 const std::string& method,
                                                 const std::string& path, const std::string& body,
                                                 std::chrono::milliseconds deadline) {
  std::vector<Result<api::HttpResponse>> answers(
      agents.size(), Result<api::HttpResponse>(Unavailable("not asked")));
  auto ask = [&](size_t i) {
    api::HttpClientOptions options = ctx.agent_client;
    options.connect_timeout = std::chrono::milliseconds(2000);
    options.request_timeout = deadline;
    auto client = api::HttpClient::Create(agents[i].url, options);
    if (!client) {
      answers[i] = Result<api::HttpResponse>(tl::unexpected<Error>(client.error()));
      return;
    }
    std::map<std::string, std::string> headers = {
        {"authorization", ctx.agent_authorization(agents[i].node)}};
    if (method == "POST") headers["content-type"] = "application/octet-stream";
    answers[i] = api::CheckResponse((*client)->Send(method, path, body, headers, method == "GET"));
  };
  // At most 32 agents at a time, each on its own thread.
  constexpr size_t kWave = 32;
  for (size_t first = 0; first < agents.size(); first += kWave) {
    std::vector<std::thread> threads;
    for (size_t i = first; i < std::min(agents.size(), first + kWave); ++i) {
      threads.emplace_back(ask, i);
    }
    for (auto& t : threads) t.join();
  }
  return answers;
}

}  // namespace

api::HttpResponse ServeJobStats(ControllerService& service, const RouteContext& ctx, JobId id,
                                const api::Identity& who) {
  auto nodes = service.Call<Controller::RunNodes>([&who, id](Controller& c) {
    return c.JobRunNodes(who, id, api::Action::kReadJobPrivate);
  });
  if (!nodes) return api::ErrorResponse(nodes.error());
  const std::string path = "/api/v1/stats?job=" + id.ToString() +
                           "&generation=" + nodes->generation.ToString();
  auto answers = AskAgents(ctx, nodes->agents, "GET", path, "", kStatsDeadline);
  api::JobStatsInfo info{.job = id, .generation = nodes->generation};
  for (size_t i = 0; i < answers.size(); ++i) {
    Result<api::NodeRunStats> s =
        answers[i] ? api::DecodeNodeRunStats(answers[i]->body)
                   : Result<api::NodeRunStats>(tl::unexpected<Error>(answers[i].error()));
    if (s) {
      s->node = nodes->agents[i].node;  // the node asked, whatever the answer says
      info.nodes.push_back(std::move(*s));
    } else {
      info.nodes.push_back({.node = nodes->agents[i].node,
                            .job = id,
                            .generation = nodes->generation,
                            .error = s.error().message});
    }
  }
  for (const std::string& node : nodes->unreachable) {
    info.nodes.push_back({.node = node,
                          .job = id,
                          .generation = nodes->generation,
                          .error = "node " + node + ": not responding"});
  }
  api::HttpResponse r;
  r.body = api::EncodeJobStatsInfo(info);
  return r;
}

api::HttpResponse ServeBcast(ControllerService& service, const RouteContext& ctx, JobId id,
                             const api::HttpRequest& req, const api::Identity& who) {
  // Who may, first; then what was asked.
  auto nodes = service.Call<Controller::RunNodes>(
      [&who, id](Controller& c) { return c.JobRunNodes(who, id, api::Action::kCreateStep); });
  if (!nodes) return api::ErrorResponse(nodes.error());
  auto options = api::DecodeBcastQuery(req.query);
  if (!options) return api::ErrorResponse(options.error());
  if (req.body.size() > api::kMaxBcastBytes) {
    return api::ErrorResponse({ErrorCode::kInvalidArgument,
                               "file: " + std::to_string(req.body.size()) +
                                   " bytes, more than " + std::to_string(api::kMaxBcastBytes)});
  }
  if (!nodes->unreachable.empty()) {
    return api::ErrorResponse(
        {ErrorCode::kUnavailable, "node " + nodes->unreachable.front() + ": not responding"});
  }
  const std::string path = "/api/v1/bcast?job=" + id.ToString() +
                           "&generation=" + nodes->generation.ToString() +
                           "&uid=" + std::to_string(nodes->uid) +
                           "&gid=" + std::to_string(nodes->gid) + "&" +
                           api::EncodeBcastQuery(*options);
  auto answers = AskAgents(ctx, nodes->agents, "POST", path, req.body, kBcastDeadline);
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i]) {
      return api::ErrorResponse(
          {answers[i].error().code, "node " + nodes->agents[i].node + ": " +
                                        answers[i].error().message});
    }
  }
  api::HttpResponse r;
  r.body = api::EncodeStringMap(
      {{"status", "ok"}, {"nodes", std::to_string(nodes->agents.size())}});
  return r;
}

}  // namespace corral::controller
