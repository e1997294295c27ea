// Small helpers of the integration tests (defined in test_cluster.cc).
#pragma once

#include <cstdint>
#include <string>

namespace corral::testing {

// A loopback TCP port that was free a moment ago (bound, read, closed).
uint16_t FreePort();
// The whole content of `path` ("" when it cannot be read).
std::string ReadFile(const std::string& path);

}  // namespace corral::testing
