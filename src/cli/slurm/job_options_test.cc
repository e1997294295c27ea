// The one option table of sbatch, srun and salloc (internal/job_options.h): every option it
// lists is scanned, then applied, refused by name or accepted without effect, from the command
// line of each command that takes it.
#include "cli/slurm/internal/job_options.h"

#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/slurm/environment.h"
#include "cli/slurm/options.h"
#include "cli/slurm/submit.h"
#include "cli/slurm/testing/slurm_22_05_options.h"

namespace corral::slurm {
namespace {

using internal::Arg;
using internal::JobOption;

constexpr Command kCommands[] = {Command::kSbatch, Command::kSrun, Command::kSalloc};

SubmitContext Context() {
  SubmitContext ctx;
  ctx.environment = {{"HOME", "/home/alice"}, {"PATH", "/bin"}};
  ctx.cwd = "/home/alice/proj";
  ctx.user = "alice";
  ctx.hostname = "login1";
  ctx.now =
      Timestamp(std::chrono::sys_days(std::chrono::year(2026) / 11 / 29) + std::chrono::hours(17));
  return ctx;
}

Result<SubmitRequest> Parse(Command c, std::vector<std::string> args) {
  switch (c) {
    case Command::kSbatch:
      if (args.empty() || args.front().rfind("--wrap", 0) != 0) args.push_back("job.sh");
      return ParseSbatch(args, "#!/bin/sh\n", Context());
    case Command::kSrun:
      args.push_back("true");
      return ParseSrun(args, Context());
    case Command::kSalloc:
      break;
  }
  return ParseSalloc(args, Context());
}

bool Same(const SubmitRequest& a, const SubmitRequest& b) {
  return a.spec == b.spec && a.client == b.client && a.warnings == b.warnings;
}

// What each option Corral applies does: `args` (against `baseline`) must change the request,
// and `check` says the change is the option's. `only` limits a sample to one command (the
// others refuse the option).
struct Sample {
  std::vector<std::string> args;
  std::function<bool(const SubmitRequest&)> check;
  std::vector<std::string> baseline = {};
  std::optional<Command> only = std::nullopt;
};

using R = SubmitRequest;
const std::map<std::string, Sample>& Samples() {
  static const auto* samples = new std::map<std::string, Sample>{
      {"account", {{"--account=a"}, [](const R& r) { return r.spec.account == "a"; }}},
      {"array", {{"--array=0-3"}, [](const R& r) { return r.spec.array == "0-3"; }}},
      {"begin",
       {{"--begin=now+1hour"}, [](const R& r) { return r.spec.begin_time != Timestamp{}; }}},
      {"chdir", {{"--chdir=/tmp"}, [](const R& r) { return r.spec.working_dir == "/tmp"; }}},
      {"comment", {{"--comment=c"}, [](const R& r) { return r.spec.comment == "c"; }}},
      {"constraint",
       {{"--constraint=f"}, [](const R& r) { return r.spec.resources.constraint == "f"; }}},
      {"container-env",
       {{"--container-env=A"},
        [](const R& r) { return r.spec.container.env == std::vector<std::string>{"A"}; }}},
      {"container-image",
       {{"--container-image=img"}, [](const R& r) { return r.spec.container.image == "img"; }}},
      {"container-mount-home",
       {{"--no-container-mount-home", "--container-mount-home"},
        [](const R& r) { return r.spec.container.mount_home; },
        {"--no-container-mount-home"}}},
      {"container-mounts",
       {{"--container-mounts=/a:/b"},
        [](const R& r) { return r.spec.container.mounts == std::vector<std::string>{"/a:/b"}; }}},
      {"container-name",
       {{"--container-name=n"}, [](const R& r) { return r.spec.container.name == "n"; }}},
      {"container-workdir",
       {{"--container-workdir=/w"}, [](const R& r) { return r.spec.container.workdir == "/w"; }}},
      {"cpus-per-gpu",
       {{"--cpus-per-gpu=2"}, [](const R& r) { return r.spec.resources.cpus_per_gpu == 2; }}},
      {"cpus-per-task",
       {{"--cpus-per-task=2"}, [](const R& r) { return r.spec.resources.cpus_per_task == 2; }}},
      {"dependency",
       {{"--dependency=afterok:1"}, [](const R& r) { return r.spec.dependencies.size() == 1; }}},
      {"distribution",
       {{"--distribution=cyclic"}, [](const R& r) { return r.client.distribution == "cyclic"; }}},
      {"error", {{"--error=e.txt"}, [](const R& r) { return r.spec.stderr_path == "e.txt"; }}},
      {"exact", {{"--exact"}, [](const R& r) { return r.client.exact; }}},
      {"exclude",
       {{"--exclude=n1"},
        [](const R& r) { return r.spec.resources.exclude == std::vector<std::string>{"n1"}; }}},
      {"exclusive", {{"--exclusive"}, [](const R& r) { return r.spec.resources.exclusive; }}},
      {"export",
       {{"--export=NONE"}, [](const R& r) { return !r.spec.environment->contains("HOME"); }}},
      {"gpu-bind",
       {{"--gpu-bind=closest"}, [](const R& r) { return r.client.gpu_bind == "closest"; }}},
      {"gpus", {{"--gpus=2"}, [](const R& r) { return r.spec.resources.gpus == 2; }}},
      {"gpus-per-node",
       {{"--gpus-per-node=2"}, [](const R& r) { return r.spec.resources.gpus_per_node == 2; }}},
      {"gpus-per-task",
       {{"--gpus-per-task=2"}, [](const R& r) { return r.spec.resources.gpus_per_task == 2; }}},
      {"gres", {{"--gres=gpu:3"}, [](const R& r) { return r.spec.resources.gpus_per_node == 3; }}},
      {"help", {{"--help"}, [](const R& r) { return r.client.help; }}},
      {"hold", {{"--hold"}, [](const R& r) { return r.spec.hold; }}},
      {"immediate", {{"--immediate=5"}, [](const R& r) { return r.client.immediate == 5u; }}},
      {"input", {{"--input=none"}, [](const R& r) { return r.client.input == "/dev/null"; }}},
      {"job-name", {{"--job-name=n"}, [](const R& r) { return r.spec.name == "n"; }}},
      {"jobid", {{"--jobid=5"}, [](const R& r) { return r.client.jobid == 5u; }}},
      {"kill-on-bad-exit",
       {{"--kill-on-bad-exit=1"}, [](const R& r) { return r.client.kill_on_bad_exit == true; }}},
      {"label", {{"--label"}, [](const R& r) { return r.client.label; }}},
      {"mail-type", {{"--mail-type=END"}, [](const R& r) { return r.spec.mail_type == "END"; }}},
      {"mail-user", {{"--mail-user=a@b"}, [](const R& r) { return r.spec.mail_user == "a@b"; }}},
      {"mem", {{"--mem=1G"}, [](const R& r) { return r.spec.resources.mem_per_node_mb == 1024; }}},
      {"mem-per-cpu",
       {{"--mem-per-cpu=1G"}, [](const R& r) { return r.spec.resources.mem_per_cpu_mb == 1024; }}},
      {"mem-per-gpu",
       {{"--mem-per-gpu=1G"}, [](const R& r) { return r.spec.resources.mem_per_gpu_mb == 1024; }}},
      {"nice", {{"--nice=5"}, [](const R& r) { return r.spec.nice == 5; }}},
      {"no-container-mount-home",
       {{"--no-container-mount-home"}, [](const R& r) { return !r.spec.container.mount_home; }}},
      {"no-requeue",
       {{"--requeue", "--no-requeue"}, [](const R& r) { return !r.spec.requeue; }, {"--requeue"}}},
      {"no-shell", {{"--no-shell"}, [](const R& r) { return r.client.no_shell; }}},
      {"nodelist",
       {{"--nodelist=n1"},
        [](const R& r) { return r.spec.resources.nodelist == std::vector<std::string>{"n1"}; }}},
      {"nodes", {{"--nodes=2"}, [](const R& r) { return r.spec.resources.nodes == 2; }}},
      {"ntasks", {{"--ntasks=2"}, [](const R& r) { return r.spec.resources.ntasks == 2; }}},
      {"ntasks-per-node",
       {{"--ntasks-per-node=2"}, [](const R& r) { return r.spec.resources.ntasks_per_node == 2; }}},
      {"open-mode", {{"--open-mode=append"}, [](const R& r) { return r.spec.append_output; }}},
      {"output", {{"--output=o.txt"}, [](const R& r) { return r.spec.stdout_path == "o.txt"; }}},
      {"overlap", {{"--overlap"}, [](const R& r) { return r.client.overlap; }}},
      {"parsable", {{"--parsable"}, [](const R& r) { return r.client.parsable; }}},
      {"partition",
       {{"--partition=p"},
        [](const R& r) { return r.spec.partitions == std::vector<std::string>{"p"}; }}},
      {"pty", {{"--pty"}, [](const R& r) { return r.client.pty; }}},
      {"qos", {{"--qos=q"}, [](const R& r) { return r.spec.qos == "q"; }}},
      {"quiet", {{"--quiet"}, [](const R& r) { return r.client.quiet; }}},
      {"relative", {{"--relative=1"}, [](const R& r) { return r.client.relative == 1u; }}},
      {"requeue", {{"--requeue"}, [](const R& r) { return r.spec.requeue; }}},
      {"reservation", {{"--reservation=r"}, [](const R& r) { return r.spec.reservation == "r"; }}},
      {"signal", {{"--signal=USR1"}, [](const R& r) { return r.spec.signal.signal == 10; }}},
      {"test-only", {{"--test-only"}, [](const R& r) { return r.client.test_only; }}},
      {"time", {{"--time=10"}, [](const R& r) { return r.spec.time_limit.has_value(); }}},
      {"unbuffered", {{"--unbuffered"}, [](const R& r) { return r.client.unbuffered; }}},
      {"usage", {{"--usage"}, [](const R& r) { return r.client.usage; }}},
      {"verbose", {{"--verbose"}, [](const R& r) { return r.client.verbose == 1; }}},
      {"version", {{"--version"}, [](const R& r) { return r.client.version; }}},
      {"wait", {{"--wait"}, [](const R& r) { return r.client.wait; }, {}, Command::kSbatch}},
      {"whole", {{"--whole"}, [](const R& r) { return r.client.whole; }}},
      {"wrap", {{"--wrap=hostname"}, [](const R& r) { return r.client.wrap == "hostname"; }}},
  };
  return *samples;
}

TEST(JobOptionTableTest, EveryEntryHasAHandlerOrIsAnAliasOfOne) {
  for (const JobOption& o : internal::JobOptions()) {
    SCOPED_TRACE(o.name);
    EXPECT_NE(o.apply == nullptr, o.alias_of == nullptr);
    if (o.alias_of == nullptr) continue;
    const JobOption* canonical = internal::FindJobOption(o.alias_of);
    ASSERT_NE(canonical, nullptr);
    EXPECT_NE(canonical->apply, nullptr);
    for (Command c : kCommands) EXPECT_EQ(internal::ArgOf(o, c), internal::ArgOf(*canonical, c));
  }
}

// getopt's "ambiguous; possibilities" lists follow the table's order, which is Slurm's.
TEST(JobOptionTableTest, IsSortedByNameAndEachCommandsLettersAreUnique) {
  std::span<const JobOption> options = internal::JobOptions();
  for (size_t i = 1; i < options.size(); ++i) {
    EXPECT_LT(std::strcmp(options[i - 1].name, options[i].name), 0) << options[i].name;
  }
  for (Command c : kCommands) {
    std::set<char> letters;
    for (const JobOption& o : options) {
      if (!internal::LetterIn(o, c)) continue;
      EXPECT_TRUE(letters.insert(o.letter).second) << o.letter;
    }
  }
}

// Every option every command takes is scanned under its name and then applied (its sample
// changes the request), refused by name, or accepted without effect and listed as such.
TEST(JobOptionTableTest, EveryOptionParsesAndAppliesOrIsRefusedByName) {
  std::set<std::string> applied;
  size_t refused = 0, ignored = 0;
  for (Command c : kCommands) {
    auto baseline = Parse(c, {});
    ASSERT_TRUE(baseline.has_value()) << baseline.error().message;
    for (const JobOption& o : internal::JobOptions()) {
      Arg arg = internal::ArgOf(o, c);
      if (arg == Arg::kNa || o.alias_of != nullptr) continue;
      std::string name = o.name;
      SCOPED_TRACE(std::string(CommandName(c)) + " --" + name);
      std::string word = "--" + name + (arg == Arg::kReq ? "=1" : "");
      auto scan = ScanOptions(c, {word});
      ASSERT_TRUE(scan.has_value()) << scan.error().message;
      ASSERT_EQ(scan->options.size(), 1u);
      EXPECT_EQ(scan->options[0].name, name);

      auto it = Samples().find(name);
      if (it != Samples().end() && (!it->second.only || *it->second.only == c)) {
        auto with = Parse(c, it->second.args);
        auto without = it->second.baseline.empty() ? baseline : Parse(c, it->second.baseline);
        ASSERT_TRUE(with.has_value()) << with.error().message;
        ASSERT_TRUE(without.has_value()) << without.error().message;
        EXPECT_FALSE(Same(*with, *without)) << "the option changed nothing";
        EXPECT_TRUE(it->second.check(*with)) << "the option did something else";
        applied.insert(name);
        continue;
      }
      auto r = Parse(c, {word});
      if (r.has_value()) {
        // Accepted without effect: listed, and nothing else changes.
        EXPECT_EQ(r->client.ignored, (std::vector<std::string>{word})) << "no sample in Samples()";
        r->client.ignored.clear();
        EXPECT_TRUE(Same(*r, *baseline));
        ++ignored;
      } else {
        EXPECT_EQ(r.error().code, ErrorCode::kUnimplemented) << r.error().message;
        EXPECT_EQ(r.error().message, std::string(CommandName(c)) + ": error: option --" + name +
                                         " is not supported by Corral");
        ++refused;
      }
    }
  }
  // Every sample was used (a stale one names an option no command applies).
  EXPECT_EQ(applied.size(), Samples().size());
  EXPECT_GT(refused, 100u);
  EXPECT_GT(ignored, 20u);
}

// Every long option Slurm 22.05's own --help lists is in the table for its command, so that
// it is applied, accepted without effect, or refused by name (the test above), never unknown.
TEST(JobOptionTableTest, TakesEveryOptionOfSlurm2205) {
  auto check = [](Command c, const char* blank_separated) {
    std::istringstream names(blank_separated);
    size_t count = 0;
    for (std::string name; names >> name; ++count) {
      SCOPED_TRACE(std::string(CommandName(c)) + " --" + name);
      const JobOption* o = internal::FindJobOption(name);
      ASSERT_NE(o, nullptr) << "not in the option table";
      EXPECT_NE(internal::ArgOf(*o, c), Arg::kNa) << "not taken by this command";
    }
    EXPECT_GT(count, 80u);
  };
  check(Command::kSbatch, testing::kSbatchOptions);
  check(Command::kSrun, testing::kSrunOptions);
  check(Command::kSalloc, testing::kSallocOptions);
}

TEST(JobOptionTableTest, UnknownOptionsAreRefusedByName) {
  for (Command c : kCommands) {
    auto r = ScanOptions(c, {"--no-such-option=1"});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().message,
              std::string(CommandName(c)) + ": unrecognized option '--no-such-option=1'");
  }
}

// The input variables and pyxis' name options their commands take.
TEST(JobOptionTableTest, EveryInputVariableNamesAnOptionOfItsCommand) {
  for (Command c : kCommands) {
    for (const EnvironmentOption& e : InputVariables(c)) {
      const JobOption* o = internal::FindJobOption(e.option);
      ASSERT_NE(o, nullptr) << e.variable;
      EXPECT_EQ(o->alias_of, nullptr) << e.variable;
      EXPECT_NE(internal::ArgOf(*o, c), Arg::kNa) << e.variable;
    }
  }
  for (const EnvironmentOption& e : PyxisInputVariables()) {
    const JobOption* o = internal::FindJobOption(e.option);
    ASSERT_NE(o, nullptr) << e.variable;
    EXPECT_NE(internal::ArgOf(*o, Command::kSrun), Arg::kNa) << e.variable;
  }
}

TEST(JobOptionTableTest, HelpListsWhatEachCommandApplies) {
  std::string sbatch = OptionsHelp(Command::kSbatch);
  EXPECT_NE(sbatch.find("  -J, --job-name=NAME           the job's name\n"), std::string::npos);
  EXPECT_NE(sbatch.find("      --nice[=N] "), std::string::npos);
  EXPECT_NE(sbatch.find("  -W, --wait "), std::string::npos);
  EXPECT_EQ(sbatch.find("--licenses"), std::string::npos);  // refused
  EXPECT_EQ(sbatch.find("--hint"), std::string::npos);      // accepted without effect
  EXPECT_EQ(sbatch.find("--label"), std::string::npos);     // srun's
  std::string srun = OptionsHelp(Command::kSrun);
  EXPECT_NE(srun.find("  -u, --unbuffered "), std::string::npos);
  EXPECT_NE(srun.find("      --usage "), std::string::npos);
  EXPECT_EQ(srun.find("--wait"), std::string::npos);  // srun's --wait=SECONDS is refused
  EXPECT_NE(OptionsHelp(Command::kSalloc).find("  -u, --usage "), std::string::npos);
  // One line per option with a help text.
  for (Command c : kCommands) {
    size_t lines = 0;
    for (const JobOption& o : internal::JobOptions()) lines += internal::HelpIn(o, c) ? 1 : 0;
    std::string help = OptionsHelp(c);
    EXPECT_EQ(static_cast<size_t>(std::count(help.begin(), help.end(), '\n')), lines);
  }
}

}  // namespace
}  // namespace corral::slurm
