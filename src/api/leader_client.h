// LeaderClient: the HTTP clients of a list of controllers that share one store (issue 11;
// docs/operations.md, "High availability"): one leads, the others stand by and answer 503
// naming the leader (`X-Corral-Leader`). Calls go to the controller that answered last; a call
// that controller cannot have carried out (nothing was sent, or a standby refused it) goes to
// the leader it named, else the next in the list, each controller at most twice per call.
//
// Thread-safe: concurrent calls (the agent's heartbeat and event threads) share it.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/http.h"
#include "core/result.h"

namespace corral::api {

// Whether `response` is a standby controller's refusal (503 naming the leader): such a
// request was carried out nowhere. `*leader` gets the URL it named ("" when none).
bool IsStandbyAnswer(const HttpResponse& response, std::string* leader);

class LeaderClient {
 public:
  // One client per URL with `options`. Returns kInvalidArgument for an empty list, or the
  // error of `HttpClient::Create`.
  static Result<std::unique_ptr<LeaderClient>> Create(const std::vector<std::string>& urls,
                                                      const HttpClientOptions& options);

  // As `HttpClient::Send`, to the leader as above. An idempotent call that failed after
  // being sent (kUnavailable) is repeated at another controller too.
  Result<HttpResponse> Send(std::string_view method, std::string_view path, std::string_view body,
                            const std::map<std::string, std::string>& headers = {},
                            bool idempotent = false, std::chrono::milliseconds timeout = {});

  // The controller calls go to now.
  const std::string& current_url() const;

 private:
  LeaderClient() = default;
  std::vector<std::string> urls_;
  std::vector<std::unique_ptr<HttpClient>> clients_;
  std::atomic<size_t> current_{0};
};

}  // namespace corral::api
