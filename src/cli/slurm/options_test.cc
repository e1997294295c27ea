#include "cli/slurm/options.h"

#include <gtest/gtest.h>

namespace corral::slurm {
namespace {

std::vector<ParsedOption> Scan(Command c, std::vector<std::string> args) {
  auto r = ScanOptions(c, args);
  EXPECT_TRUE(r.has_value()) << (r.has_value() ? "" : r.error().message);
  return r.has_value() ? r->options : std::vector<ParsedOption>{};
}

ParsedOption O(std::string name, std::string value) {
  return ParsedOption{.name = std::move(name), .has_value = true, .value = std::move(value)};
}
ParsedOption F(std::string name) { return ParsedOption{.name = std::move(name)}; }

TEST(OptionsTest, AbbreviationsResolveAsInSlurm) {
  using V = std::vector<ParsedOption>;
  EXPECT_EQ(Scan(Command::kSbatch, {"--out=o.txt", "--err", "e.txt"}),
            (V{O("output", "o.txt"), O("error", "e.txt")}));
  // "--tasks" is a prefix of --tasks-per-node only, an alias of --ntasks-per-node.
  EXPECT_EQ(Scan(Command::kSbatch, {"--tasks=4"}), (V{O("ntasks-per-node", "4")}));
  EXPECT_EQ(Scan(Command::kSbatch, {"--job=x", "--part", "gpu", "--gres=gpu:2"}),
            (V{O("job-name", "x"), O("partition", "gpu"), O("gres", "gpu:2")}));
  EXPECT_EQ(Scan(Command::kSbatch, {"--mem=4G", "--mem-per-c=1G"}),
            (V{O("mem", "4G"), O("mem-per-cpu", "1G")}));
  EXPECT_EQ(Scan(Command::kSbatch, {"--exclusive", "--requeue", "--parsable"}),
            (V{F("exclusive"), F("requeue"), F("parsable")}));
}

TEST(OptionsTest, ShortOptionsBundleAndTakeAttachedValues) {
  using V = std::vector<ParsedOption>;
  EXPECT_EQ(Scan(Command::kSbatch, {"-N2", "-n", "8", "-Hc4", "-Jname"}),
            (V{O("nodes", "2"), O("ntasks", "8"), F("hold"), O("cpus-per-task", "4"),
               O("job-name", "name")}));
  EXPECT_EQ(Scan(Command::kSrun, {"-l", "-K1", "-I", "-n2"}),
            (V{F("label"), O("kill-on-bad-exit", "1"), F("immediate"), O("ntasks", "2")}));
  EXPECT_EQ(Scan(Command::kSbatch, {"-W", "-G", "a100:2"}), (V{F("wait"), O("gpus", "a100:2")}));
}

TEST(OptionsTest, StopsAtTheFirstOperand) {
  auto r = ScanOptions(Command::kSbatch, {"-J", "x", "job.sh", "-N", "2", "--foo"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->options.size(), 1u);
  EXPECT_EQ(r->operands, (std::vector<std::string>{"job.sh", "-N", "2", "--foo"}));
  r = ScanOptions(Command::kSrun, {"-n2", "--", "-x"});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->operands, (std::vector<std::string>{"-x"}));
}

// Every message below is what the real sbatch 22.05.8 printed for the same arguments.
TEST(OptionsTest, ErrorsMatchGetoptLong) {
  auto msg = [](Command c, std::vector<std::string> args) {
    auto r = ScanOptions(c, args);
    return r.has_value() ? std::string("accepted") : r.error().message;
  };
  EXPECT_EQ(msg(Command::kSbatch, {"--tim=4"}),
            "sbatch: option '--tim=4' is ambiguous; possibilities: '--time' '--time-min'");
  EXPECT_EQ(msg(Command::kSbatch, {"--f"}), "sbatch: unrecognized option '--f'");
  EXPECT_EQ(msg(Command::kSbatch, {"--j"}), "sbatch: option '--job-name' requires an argument");
  EXPECT_EQ(msg(Command::kSalloc, {"--hold=x"}),
            "salloc: option '--hold' doesn't allow an argument");
  EXPECT_EQ(msg(Command::kSbatch, {"-J"}), "sbatch: option requires an argument -- 'J'");
  EXPECT_EQ(msg(Command::kSbatch, {"-Z"}), "sbatch: invalid option -- 'Z'");
  EXPECT_EQ(
      msg(Command::kSbatch, {"--a"}),
      "sbatch: option '--a' is ambiguous; possibilities: '--account' '--acctg-freq' '--array'");
  EXPECT_EQ(msg(Command::kSbatch, {"--q"}),
            "sbatch: option '--q' is ambiguous; possibilities: '--qos' '--quiet'");
}

TEST(OptionsTest, TablesMatchTheRealCommands) {
  // Counts of long options listed by the real 22.05.8 binaries, plus pyxis' 14.
  EXPECT_EQ(LongOptionNames(Command::kSbatch).size(), 106u + 14u);
  EXPECT_EQ(LongOptionNames(Command::kSrun).size(), 131u + 14u);
  EXPECT_EQ(LongOptionNames(Command::kSalloc).size(), 95u + 14u);
  EXPECT_EQ(CanonicalOptionName(Command::kSbatch, "tasks-per-node"), "ntasks-per-node");
  EXPECT_EQ(CanonicalOptionName(Command::kSrun, "cpu_bind"), "cpu-bind");
  EXPECT_EQ(CanonicalOptionName(Command::kSbatch, "wrap"), "wrap");
  EXPECT_EQ(CanonicalOptionName(Command::kSrun, "wrap"), "");
}

TEST(OptionsTest, RepeatedScansDoNotLeakState) {
  for (int i = 0; i < 3; ++i) {
    auto r = ScanOptions(Command::kSbatch, {"-J", "a", "script", "arg"});
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->operands.size(), 2u);
    EXPECT_FALSE(ScanOptions(Command::kSbatch, {"-J"}).has_value());
  }
}

}  // namespace
}  // namespace corral::slurm
