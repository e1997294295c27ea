#include "api/job_stats.h"

#include <algorithm>
#include <charconv>

#include "api/http.h"
#include "api/internal/json_decoder.h"
#include "api/internal/json_encoder.h"

namespace corral::api {

std::string EncodeNodeRunStats(const NodeRunStats& s) {
  return internal::Encode(s, 512 + s.tasks.size() * 256);
}

Result<NodeRunStats> DecodeNodeRunStats(std::string_view json) {
  return internal::Decode<NodeRunStats>(json, internal::kLenient);
}

std::string EncodeJobStatsInfo(const JobStatsInfo& s) {
  size_t tasks = 0;
  for (const auto& n : s.nodes) tasks += n.tasks.size();
  return internal::Encode(s, 256 + s.nodes.size() * 512 + tasks * 256);
}

Result<JobStatsInfo> DecodeJobStatsInfo(std::string_view json) {
  return internal::Decode<JobStatsInfo>(json, internal::kLenient);
}

namespace {

Result<int64_t> Number(const std::string& key, const std::string& v, int64_t min, int64_t max) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || n < min || n > max) {
    return InvalidArgument(key + ": expected a number from " + std::to_string(min) + " to " +
                           std::to_string(max) + ", got \"" + v + "\"");
  }
  return n;
}

}  // namespace

std::string EncodeBcastQuery(const BcastOptions& o) {
  std::string q = "path=" + UrlEncode(o.path) + "&mode=" + std::to_string(o.mode);
  if (o.force) q += "&force=1";
  if (o.atime >= 0) q += "&atime=" + std::to_string(o.atime);
  if (o.mtime >= 0) q += "&mtime=" + std::to_string(o.mtime);
  return q;
}

Result<BcastOptions> DecodeBcastQuery(const std::map<std::string, std::string>& query,
                                      const std::vector<std::string>& also_allowed) {
  BcastOptions o;
  bool have_path = false;
  for (const auto& [k, v] : query) {
    if (k == "path") {
      o.path = v;
      have_path = true;
    } else if (k == "mode") {
      CORRAL_ASSIGN_OR_RETURN(int64_t m, Number(k, v, 0, 0777));
      o.mode = static_cast<uint32_t>(m);
    } else if (k == "force") {
      if (v != "0" && v != "1") return InvalidArgument("force: expected 0 or 1, got \"" + v + "\"");
      o.force = v == "1";
    } else if (k == "atime" || k == "mtime") {
      CORRAL_ASSIGN_OR_RETURN(int64_t t, Number(k, v, 0, int64_t{1} << 40));
      (k == "atime" ? o.atime : o.mtime) = t;
    } else if (std::find(also_allowed.begin(), also_allowed.end(), k) == also_allowed.end()) {
      return InvalidArgument("unknown parameter \"" + k + "\"");
    }
  }
  if (!have_path || o.path.empty()) return InvalidArgument("path: missing");
  if ((o.atime < 0) != (o.mtime < 0)) {
    return InvalidArgument("atime and mtime: give both or neither");
  }
  return o;
}

}  // namespace corral::api
