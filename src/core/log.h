// Logging facade. spdlog (header-only) is included only in log.cc, so that no other
// translation unit pays its compile cost and the binary does not load its shared library.
//
//   CORRAL_LOG(Info) << "node " << name << " registered";
//
// Thread-safe.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace corral {

enum class LogLevel { kDebug, kInfo, kWarn, kError, kOff };

// Sets the least severe level that is written (default kInfo; env CORRAL_LOG_LEVEL overrides
// at first use with debug/info/warn/error/off).
void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
// Prefixes every line with `name` (the process role: "controller", "agent node1").
void SetLogName(std::string name);
void LogMessage(LogLevel level, std::string_view message);

namespace internal {
class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level) {}
  ~LogLine() { LogMessage(level_, stream_.str()); }
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};
}  // namespace internal

}  // namespace corral

// A `for` rather than an `if`, so that `if (x) CORRAL_LOG(Info) << ...; else ...` stays
// unambiguous; the body runs at most once.
#define CORRAL_LOG(level)                                                                \
  for (bool corral_log_once_ = ::corral::LogEnabled(::corral::LogLevel::k##level);      \
       corral_log_once_; corral_log_once_ = false)                                       \
  ::corral::internal::LogLine(::corral::LogLevel::k##level).stream()
