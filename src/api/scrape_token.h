// The scrape token: one shared secret that lets a metrics scraper (Prometheus) read `/metrics`
// and `/metrics/targets` of the controller and `/metrics` of every agent, and nothing else
// (docs/metrics.md). It is a file (`[metrics] token_file` on the controller and the agents,
// mode 0600) holding one line of at least 32 characters; `corral dev` makes one and
// `corral token --role metrics` prints it. A stolen scrape token reads metrics only: it is no
// key and signs nothing, so a node that holds it can become no one.
//
// Thread-safe: `ScrapeToken` is immutable.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace corral::api {

inline constexpr size_t kMinScrapeTokenBytes = 32;

class ScrapeToken {
 public:
  ScrapeToken() = default;  // none: nothing matches
  // Reads `path` (api/private_file.h rules: 0600, owned by the reader or root). Returns
  // ReadPrivateFile's errors, or kInvalidArgument naming the path when the token is shorter
  // than `kMinScrapeTokenBytes` or holds anything but printable ASCII.
  static Result<ScrapeToken> FromFile(const std::string& path);
  // Writes a new random token to `path` (0600; kAlreadyExists when it exists) and returns it.
  static Result<ScrapeToken> CreateFile(const std::string& path);

  // True when `authorization` (an Authorization header's value) is "Bearer <this token>";
  // compared in constant time. Always false for an empty token.
  bool Matches(std::string_view authorization) const;

  bool empty() const { return token_.empty(); }
  const std::string& value() const { return token_; }

 private:
  std::string token_;
};

}  // namespace corral::api
