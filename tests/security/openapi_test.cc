// docs/openapi.yaml against the controller's route table (controller/routes.h), both ways:
// every route is documented with its action, and every documented operation is served.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "controller/routes.h"

namespace corral::security {
namespace {

// "METHOD /path" -> x-corral-action of every operation of the file.
std::map<std::string, std::string> Operations(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::map<std::string, std::string> ops;
  const std::regex path_line(R"(^  (/\S+):\s*$)");
  const std::regex method_line(R"(^    (get|post|put|patch|delete):\s*$)");
  const std::regex action_line(R"(^      x-corral-action:\s*(\S+)\s*$)");
  std::string current_path, current_op, line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, path_line)) {
      current_path = m[1];
      current_op.clear();
    } else if (!current_path.empty() && std::regex_match(line, m, method_line)) {
      std::string method = m[1];
      std::transform(method.begin(), method.end(), method.begin(),
                     [](unsigned char c) { return std::toupper(c); });
      current_op = method + " " + current_path;
      ops[current_op] = "";
    } else if (!current_op.empty() && std::regex_match(line, m, action_line)) {
      ops[current_op] = m[1];
    } else if (!line.empty() && line[0] != ' ' && line[0] != '#') {
      current_path.clear();  // a new top-level key: the paths are over
      current_op.clear();
    }
  }
  return ops;
}

TEST(OpenApiTest, TheFileDescribesEveryRouteWithItsActionAndNothingElse) {
  std::map<std::string, std::string> documented =
      Operations(std::string(CORRAL_SOURCE_DIR) + "/docs/openapi.yaml");
  ASSERT_FALSE(documented.empty());
  for (const controller::RouteSpec& spec : controller::ControllerRoutes()) {
    std::string key = std::string(spec.method) + " " + std::string(spec.pattern);
    auto it = documented.find(key);
    if (it == documented.end()) {
      ADD_FAILURE() << key << ": served but not in docs/openapi.yaml";
      continue;
    }
    std::string want = spec.scope == controller::RouteScope::kAnonymous
                           ? "none"
                           : std::string(api::ActionName(spec.action));
    EXPECT_EQ(it->second, want) << key << ": x-corral-action";
    documented.erase(it);
  }
  for (const auto& [key, action] : documented) {
    ADD_FAILURE() << key << ": in docs/openapi.yaml but not served by the controller";
  }
}

}  // namespace
}  // namespace corral::security
