#include "core/log.h"

#define SPDLOG_HEADER_ONLY
#define FMT_HEADER_ONLY
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace corral {
namespace {

LogLevel LevelFromEnv() {
  const char* env = std::getenv("CORRAL_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kInfo;
  std::string_view v(env);
  if (v == "debug") return LogLevel::kDebug;
  if (v == "warn") return LogLevel::kWarn;
  if (v == "error") return LogLevel::kError;
  if (v == "off") return LogLevel::kOff;
  return LogLevel::kInfo;
}

std::atomic<int>& Level() {
  static std::atomic<int> level{static_cast<int>(LevelFromEnv())};
  return level;
}

spdlog::logger& Logger() {
  // Constructed once; lives for the process (the shared_ptr is spdlog's API).
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>("corral",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ %v");
    l->set_level(spdlog::level::trace);
    l->flush_on(spdlog::level::trace);
    return l;
  }();
  return *logger;
}

std::mutex name_mu;
std::string& Name() {
  static std::string name;
  return name;
}

}  // namespace

void SetLogLevel(LogLevel level) { Level().store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= Level().load(); }

void SetLogName(std::string name) {
  std::lock_guard<std::mutex> lock(name_mu);
  Name() = std::move(name);
}

void LogMessage(LogLevel level, std::string_view message) {
  spdlog::level::level_enum l = spdlog::level::info;
  switch (level) {
    case LogLevel::kDebug: l = spdlog::level::debug; break;
    case LogLevel::kInfo: l = spdlog::level::info; break;
    case LogLevel::kWarn: l = spdlog::level::warn; break;
    case LogLevel::kError: l = spdlog::level::err; break;
    case LogLevel::kOff: return;
  }
  std::string name;
  {
    std::lock_guard<std::mutex> lock(name_mu);
    name = Name();
  }
  if (name.empty()) {
    Logger().log(l, "{}", message);
  } else {
    Logger().log(l, "[{}] {}", name, message);
  }
}

}  // namespace corral
