// `corral top`: a live terminal view of the nodes and their GPUs (state, utilisation, the job
// holding each, GPU-waste flags) and of the queue, refreshed every few seconds from the
// controller's API: the nodes, the active jobs and the running jobs' GPU statistics (the calls
// the web dashboard makes). Plain ANSI, no curses: the frame is redrawn on the alternate
// screen; `q` or Ctrl-C quits. `--once` prints one frame and exits (scripts, tests); `--json`
// prints frames as JSON, one object per line.
#include "cli/top.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "cli/client.h"
#include "cli/internal/top_view.h"
#include "cli/slurm/option_table.h"
#include "core/clock.h"
#include "core/strings.h"

namespace corral::cli {
namespace {

using slurm::ArgKind;
using slurm::SetList;
using slurm::SetTrue;
using slurm::SetValue;

// The running jobs whose GPU statistics a frame asks for, at most (the first by id).
constexpr size_t kMaxStatsPerFrame = 256;

struct TopArgs {
  uint32_t interval_s = 2;
  bool once = false;
  bool json = false;
  bool help = false;
  std::string color = "auto";
  std::string controller;
  std::vector<std::string> users, partitions;
};

Status Interval(TopArgs& a, const std::string& v) {
  auto n = ParseUint(v);
  if (!n || *n < 1 || *n > 3600) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--interval \"" + v + "\": give whole seconds from 1 to 3600");
  }
  a.interval_s = static_cast<uint32_t>(*n);
  return {};
}

Status Color(TopArgs& a, const std::string& v) {
  if (v != "auto" && v != "always" && v != "never") {
    return MakeError(ErrorCode::kInvalidArgument,
                     "--color \"" + v + "\": give auto, always or never");
  }
  a.color = v;
  return {};
}

constexpr ArgKind kNone = ArgKind::kNone, kReq = ArgKind::kRequired;

constexpr slurm::CommandOption<TopArgs> kOptions[] = {
    {"interval", 'i', kReq, Interval, "SECONDS", "refresh every SECONDS (default 2)"},
    {"once", 0, kNone, SetTrue<&TopArgs::once>, nullptr, "print one frame and exit"},
    {"json", 0, kNone, SetTrue<&TopArgs::json>, nullptr,
     "frames as JSON, one object per line (with --once: one)"},
    {"user", 'u', kReq, SetList<&TopArgs::users>, "USER,...", "only these users' jobs"},
    {"partition", 'p', kReq, SetList<&TopArgs::partitions>, "PARTITION,...",
     "only these partitions' nodes and jobs"},
    {"color", 0, kReq, Color, "auto|always|never",
     "ANSI colours (auto: on a terminal, unless NO_COLOR is set)"},
    {"controller", 0, kReq, SetValue<&TopArgs::controller>, "URL", "the controller"},
    {"help", 'h', kNone, SetTrue<&TopArgs::help>, nullptr, "this help"},
};
static_assert(slurm::EveryOptionHasAHandler(kOptions));

constexpr const char* kUsage =
    "usage: corral top [options]   (a live view of nodes, GPUs and the queue; q quits)\n";

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

// The terminal while the live view runs: the alternate screen, no cursor, keys read one at a
// time without echo; restored by the destructor.
class LiveTerminal {
 public:
  LiveTerminal() {
    if (tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      restore_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    std::fputs("\x1b[?1049h\x1b[?25l", stdout);
    std::fflush(stdout);
  }
  ~LiveTerminal() {
    std::fputs("\x1b[0m\x1b[?25h\x1b[?1049l", stdout);
    std::fflush(stdout);
    if (restore_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  LiveTerminal(const LiveTerminal&) = delete;
  LiveTerminal& operator=(const LiveTerminal&) = delete;

 private:
  termios saved_{};
  bool restore_ = false;
};

// Waits up to `seconds` for `q` on a terminal's stdin (or a signal); returns whether to quit.
bool WaitForQuit(uint32_t seconds, bool keys) {
  MonoTime end = SystemClock::Get().MonotonicNow() + Seconds(seconds);
  while (!g_stop) {
    Duration left = end - SystemClock::Get().MonotonicNow();
    if (left <= Duration{}) return false;
    pollfd p{.fd = keys ? STDIN_FILENO : -1, .events = POLLIN, .revents = 0};
    int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(left).count());
    if (poll(&p, 1, std::max(ms, 1)) > 0 && (p.revents & POLLIN) != 0) {
      char c = 0;
      if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q')) return true;
    }
  }
  return true;
}

bool Selected(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

// One frame from the controller.
Result<internal::TopFrame> Fetch(Client& client, const TopArgs& a) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<api::NodeInfo> nodes, client.ListNodes());
  JobListQuery q;
  q.states = {"PENDING", "RUNNING"};
  q.users = a.users;
  q.partitions = a.partitions;
  CORRAL_ASSIGN_OR_RETURN(std::vector<api::JobInfo> jobs, client.ListJobs(q));
  if (!a.partitions.empty()) {
    std::erase_if(nodes, [&](const api::NodeInfo& n) {
      for (const std::string& p : n.partitions) {
        if (Selected(a.partitions, p)) return false;
      }
      return true;
    });
  }
  std::map<JobId, api::GpuStatsInfo> stats;
  for (const api::JobInfo& j : jobs) {
    if (j.job.state != JobState::kRunning || stats.size() >= kMaxStatsPerFrame) continue;
    if (TotalGpus(j.job.spec.resources) == 0 && j.job.allocation.nodes.empty()) continue;
    // A job whose statistics cannot be read (ended meanwhile, another user's) shows none.
    if (auto s = client.GpuStats(j.job.id)) stats.emplace(j.job.id, std::move(*s));
  }
  return internal::BuildTopFrame(nodes, jobs, stats, SystemClock::Get().Now(), client.url());
}

// The terminal's size; when stdout is not one, COLUMNS wide (else unlimited), unlimited rows.
internal::TopStyle Style(const TopArgs& a, bool live) {
  internal::TopStyle style;
  const bool tty = isatty(STDOUT_FILENO) != 0;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  style.color = a.color == "always" ||
                (a.color == "auto" && tty && (no_color == nullptr || *no_color == '\0') &&
                 (term == nullptr || std::strcmp(term, "dumb") != 0));
  winsize ws{};
  if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    style.width = ws.ws_col;
    if (live) style.height = ws.ws_row;
  } else if (auto cols = ParseUint(std::getenv("COLUMNS") ? std::getenv("COLUMNS") : "")) {
    style.width = static_cast<uint32_t>(std::clamp<uint64_t>(*cols, 40, 1000));
  } else if (!tty) {
    style.width = UINT32_MAX;  // a file or a pipe: nothing is cut
  }
  style.interval_s = live ? a.interval_s : 0;
  return style;
}

}  // namespace

int RunTopCommand(int argc, char** argv) {
  TopArgs a;
  slurm::OptionScan scan =
      slurm::ScanWithTable(std::span<const slurm::CommandOption<TopArgs>>(kOptions),
                           std::vector<std::string>(argv, argv + argc), ":", a);
  if (scan.failure) {
    std::fprintf(stderr, "corral top: error: %s \"%s\" (see `corral top --help`)\n",
                 scan.failure->missing_argument ? "option needs a value:" : "unrecognized option",
                 scan.failure->last_word.c_str());
    return 2;
  }
  if (scan.error) {
    std::fprintf(stderr, "corral top: error: %s\n", scan.error->message.c_str());
    return 2;
  }
  if (a.help) {
    std::printf("%s%s", kUsage,
                slurm::TableHelp(std::span<const slurm::CommandOption<TopArgs>>(kOptions)).c_str());
    return 0;
  }
  if (!scan.operands.empty()) {
    std::fprintf(stderr, "corral top: error: unexpected argument \"%s\"\n",
                 scan.operands[0].c_str());
    return 2;
  }
  auto client = Client::Connect(a.controller);
  if (!client) {
    std::fprintf(stderr, "corral: error: %s\n", client.error().message.c_str());
    return 1;
  }
  if (a.once) {
    auto frame = Fetch(**client, a);
    if (!frame) {
      std::fprintf(stderr, "corral: error: %s\n", frame.error().message.c_str());
      return 1;
    }
    std::string out = a.json ? internal::EncodeTopFrame(*frame) + "\n"
                             : internal::FormatTopFrame(*frame, Style(a, false));
    std::fputs(out.c_str(), stdout);
    return 0;
  }

  struct sigaction sa{};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const bool screen = !a.json && isatty(STDOUT_FILENO) != 0;
  const bool keys = screen && isatty(STDIN_FILENO) != 0;
  std::optional<LiveTerminal> terminal;
  if (screen) terminal.emplace();
  while (!g_stop) {
    auto frame = Fetch(**client, a);
    std::string out;
    if (a.json) {
      out = frame ? internal::EncodeTopFrame(*frame) + "\n" : "";
      if (!frame) std::fprintf(stderr, "corral: error: %s\n", frame.error().message.c_str());
    } else {
      internal::TopStyle style = Style(a, screen);
      out = screen ? "\x1b[H\x1b[2J" : "";
      out += frame ? internal::FormatTopFrame(*frame, style)
                   : "corral top: " + frame.error().message + " (retrying)\n";
      if (!screen) out += "\n";
    }
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    if (WaitForQuit(a.interval_s, keys)) break;
  }
  return 0;
}

}  // namespace corral::cli
