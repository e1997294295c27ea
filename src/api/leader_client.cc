#include "api/leader_client.h"

#include <algorithm>

namespace corral::api {

bool IsStandbyAnswer(const HttpResponse& response, std::string* leader) {
  leader->clear();
  if (response.status != 503) return false;
  for (const char* h : {"x-corral-leader", "X-Corral-Leader"}) {
    if (auto it = response.headers.find(h); it != response.headers.end()) *leader = it->second;
  }
  return !leader->empty() || response.body.find("not the leader") != std::string::npos;
}

Result<std::unique_ptr<LeaderClient>> LeaderClient::Create(const std::vector<std::string>& urls,
                                                           const HttpClientOptions& options) {
  if (urls.empty()) return InvalidArgument("no controller URL");
  std::unique_ptr<LeaderClient> c(new LeaderClient());
  for (const std::string& url : urls) {
    CORRAL_ASSIGN_OR_RETURN(std::unique_ptr<HttpClient> client, HttpClient::Create(url, options));
    c->urls_.push_back(url);
    c->clients_.push_back(std::move(client));
  }
  return c;
}

Result<HttpResponse> LeaderClient::Send(std::string_view method, std::string_view path,
                                        std::string_view body,
                                        const std::map<std::string, std::string>& headers,
                                        bool idempotent, std::chrono::milliseconds timeout) {
  const size_t n = clients_.size();
  for (size_t tried = 1;; ++tried) {
    const size_t at = current_.load() % n;
    bool sent = false;
    Result<HttpResponse> r =
        clients_[at]->Send(method, path, body, headers, idempotent, timeout, &sent);
    std::string leader;
    bool elsewhere = false;  // not carried out here: another controller may take it
    if (!r) {
      elsewhere = !sent || (idempotent && r.error().code == ErrorCode::kUnavailable);
    } else {
      elsewhere = IsStandbyAnswer(*r, &leader);
    }
    if (!elsewhere || n < 2 || tried >= 2 * n) return r;
    auto known = std::find(urls_.begin(), urls_.end(), leader);
    size_t next = known != urls_.end() ? static_cast<size_t>(known - urls_.begin()) : (at + 1) % n;
    if (next == at) next = (at + 1) % n;
    size_t expected = at;
    current_.compare_exchange_strong(expected, next);  // another call may have moved it
  }
}

const std::string& LeaderClient::current_url() const { return urls_[current_.load() % urls_.size()]; }

}  // namespace corral::api
