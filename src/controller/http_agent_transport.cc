#include "controller/http_agent_transport.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "api/http.h"
#include "api/http_status.h"
#include "api/json_codec.h"
#include "core/log.h"

namespace corral::controller {

namespace {

struct Command {
  // Which of the agent's answers `AgentReplies` hears about.
  enum class Reply { kNone, kLaunch, kStepLaunch } reply = Reply::kNone;
  std::string url;
  std::string path;
  std::string body;
  JobId job;
  Generation generation;
  uint32_t step = 0;
  MonoTime first_try{};
  int attempts = 0;
};

// One command per request type: the agent's route, the body, and what the replies need.
Command Encode(const api::LaunchRequest& r) {
  return {.reply = Command::Reply::kLaunch,
          .path = "/api/v1/launch",
          .body = api::EncodeLaunchRequest(r),
          .job = r.job.id,
          .generation = r.job.allocation.generation};
}

Command Encode(const api::SignalRequest& r) {
  return {.path = "/api/v1/signal",
          .body = api::EncodeSignalRequest(r),
          .job = r.job,
          .generation = r.generation};
}

Command Encode(const api::CancelRequest& r) {
  return {.path = "/api/v1/cancel",
          .body = api::EncodeCancelRequest(r),
          .job = r.job,
          .generation = r.generation};
}

Command Encode(const api::StepLaunchRequest& r) {
  return {.reply = Command::Reply::kStepLaunch,
          .path = "/api/v1/steps/launch",
          .body = api::EncodeStepLaunchRequest(r),
          .job = r.job.id,
          .generation = r.job.allocation.generation,
          .step = r.step};
}

Command Encode(const api::StepSignalRequest& r) {
  return {.path = "/api/v1/steps/signal",
          .body = api::EncodeStepSignalRequest(r),
          .job = r.job,
          .generation = r.generation,
          .step = r.step};
}

Command Encode(const api::TimeLimitRequest& r) {
  return {.path = "/api/v1/jobs/limit",
          .body = api::EncodeTimeLimitRequest(r),
          .job = r.job,
          .generation = r.generation};
}

}  // namespace

struct HttpAgentTransport::Impl {
  const Clock& clock;
  AgentReplies replies;
  HttpAgentTransportOptions options;

  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  struct NodeQueue {
    std::deque<Command> commands;
    bool busy = false;
    MonoTime not_before{};  // backoff after a failed attempt
    std::unique_ptr<api::HttpClient> client;
    std::string client_url;
  };
  std::map<std::string, NodeQueue> queues;
  std::vector<std::thread> threads;

  Impl(const Clock& c, AgentReplies r, HttpAgentTransportOptions o)
      : clock(c), replies(std::move(r)), options(std::move(o)) {}

  void Enqueue(const AgentAddress& to, Command cmd) {
    cmd.url = to.url;
    cmd.first_try = clock.MonotonicNow();
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping) return;
      queues[to.node].commands.push_back(std::move(cmd));
    }
    cv.notify_one();
  }

  // Picks a node whose queue has work and is not busy or backing off; returns its name.
  bool PickWork(std::string* node, MonoTime* wake) {
    MonoTime now = clock.MonotonicNow();
    *wake = MonoTime::max();
    for (auto& [name, q] : queues) {
      if (q.busy || q.commands.empty()) continue;
      if (q.not_before > now) {
        *wake = std::min(*wake, q.not_before);
        continue;
      }
      *node = name;
      return true;
    }
    return false;
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      std::string node;
      MonoTime wake;
      if (!PickWork(&node, &wake)) {
        if (wake == MonoTime::max()) {
          cv.wait(lock);
        } else {
          cv.wait_for(lock, wake - clock.MonotonicNow());
        }
        continue;
      }
      NodeQueue& q = queues[node];
      q.busy = true;
      Command cmd = q.commands.front();
      if (q.client == nullptr || q.client_url != cmd.url) {
        api::HttpClientOptions client_options = options.client;
        client_options.connect_timeout = std::chrono::milliseconds(2000);
        client_options.request_timeout = std::chrono::milliseconds(10000);
        auto client = api::HttpClient::Create(cmd.url, client_options);
        if (client) {
          q.client = std::move(*client);
          q.client_url = cmd.url;
        } else {
          q.client.reset();
        }
      }
      api::HttpClient* client = q.client.get();
      lock.unlock();
      bool done = Deliver(client, cmd, node);
      lock.lock();
      auto it = queues.find(node);
      if (it == queues.end()) continue;  // forgotten meanwhile
      NodeQueue& q2 = it->second;
      q2.busy = false;
      if (done) {
        if (!q2.commands.empty()) q2.commands.pop_front();
        q2.not_before = {};
      } else {
        if (!q2.commands.empty()) q2.commands.front().attempts += 1;
        int attempts = q2.commands.empty() ? 1 : q2.commands.front().attempts;
        q2.not_before = clock.MonotonicNow() +
                        std::min<Duration>(Millis(50) * (1 << std::min(attempts, 6)), Seconds(2));
      }
      cv.notify_one();
    }
  }

  // Sends one command; returns true when it is finished with (delivered, refused, or given up).
  bool Deliver(api::HttpClient* client, const Command& cmd, const std::string& node) {
    std::map<std::string, std::string> headers;
    if (options.authorization) headers["authorization"] = options.authorization(node);
    Result<api::HttpResponse> response =
        client == nullptr ? Result<api::HttpResponse>(Unavailable("bad agent URL " + cmd.url))
                          : client->Send("POST", cmd.path, cmd.body, headers, /*idempotent=*/true);
    Result<api::HttpResponse> checked = api::CheckResponse(std::move(response));
    if (checked) {
      if (cmd.reply == Command::Reply::kLaunch && replies.launch_accepted) {
        replies.launch_accepted(cmd.job, cmd.generation);
      }
      return true;
    }
    const Error& err = checked.error();
    bool transient = err.code == ErrorCode::kUnavailable ||
                     err.code == ErrorCode::kDeadlineExceeded || err.code == ErrorCode::kInternal;
    if (transient && clock.MonotonicNow() - cmd.first_try < options.give_up_after) {
      if (cmd.attempts == 0) {
        CORRAL_LOG(Warn) << "agent " << node << ": " << err.message << "; retrying";
      }
      return false;
    }
    CORRAL_LOG(Warn) << "agent " << node << ": " << cmd.path << " for job " << cmd.job.ToString()
                     << " failed: " << err.message;
    if (cmd.reply == Command::Reply::kLaunch && replies.launch_failed) {
      replies.launch_failed(cmd.job, cmd.generation, err);
    }
    if (cmd.reply == Command::Reply::kStepLaunch && replies.step_launch_failed) {
      replies.step_launch_failed(cmd.job, cmd.generation, cmd.step, node, err);
    }
    return true;
  }
};

HttpAgentTransport::HttpAgentTransport(const Clock& clock, AgentReplies replies,
                                       HttpAgentTransportOptions options)
    : impl_(std::make_unique<Impl>(clock, std::move(replies), std::move(options))) {
  size_t n = std::max<size_t>(1, impl_->options.threads);
  for (size_t i = 0; i < n; ++i) impl_->threads.emplace_back([this] { impl_->Run(); });
}

HttpAgentTransport::~HttpAgentTransport() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->threads) t.join();
}

void HttpAgentTransport::Send(const AgentAddress& to, const AgentRequest& request) {
  impl_->Enqueue(to, std::visit([](const auto& r) { return Encode(r); }, request));
}

void HttpAgentTransport::Forget(const std::string& node) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->queues.find(node);
  if (it != impl_->queues.end() && !it->second.busy) impl_->queues.erase(it);
}

}  // namespace corral::controller
