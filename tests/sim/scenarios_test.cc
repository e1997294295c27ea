// Replays every tests/sim/*.trace with `corral sim` and compares the metrics and per-job CSVs
// with the scenario's *.expected, byte for byte. The trace's `# args:` line gives the options
// (paths relative to tests/sim); each runs twice, its policies one at a time and then all at
// once (--threads). CORRAL_UPDATE_GOLDEN=1 rewrites the expected files.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/sim_command.h"

namespace corral::sim {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> ArgsOf(const std::string& trace) {
  std::istringstream in(trace);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# args:", 0) != 0) continue;
    std::istringstream words(line.substr(7));
    std::vector<std::string> args;
    for (std::string w; words >> w;) args.push_back(w);
    return args;
  }
  return {};
}

std::vector<fs::path> Scenarios() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(CORRAL_SIM_SCENARIOS)) {
    if (e.path().extension() == ".trace") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class ScenarioTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(ScenarioTest, MatchesGoldenOutput) {
  const fs::path trace = GetParam();
  const fs::path dir = fs::temp_directory_path() /
                       ("corral_sim_" + trace.stem().string() + "_" +
                        std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::create_directories(dir);
  std::vector<std::string> args = {"sim",          "--trace",
                                   trace.string(), "--quiet",
                                   "--csv",        (dir / "m.csv").string(),
                                   "--jobs-csv",   (dir / "j.csv").string()};
  for (std::string a : ArgsOf(Read(trace))) {
    if (a.size() > 5 && a.substr(a.size() - 5) == ".toml") a = (trace.parent_path() / a).string();
    args.push_back(a);
  }
  auto run = [&](const std::string& threads) {
    std::vector<std::string> with = args;
    with.push_back("--threads");
    with.push_back(threads);
    std::vector<char*> argv;
    for (std::string& a : with) argv.push_back(a.data());
    return RunSimCommand(static_cast<int>(argv.size()), argv.data());
  };
  // The policies one at a time.
  ASSERT_EQ(run("1"), 0);
  std::string got = "== metrics\n" + Read(dir / "m.csv") + "== jobs\n" + Read(dir / "j.csv");
  // The same trace and seed again, the policies all at once: byte-identical output.
  ASSERT_EQ(run("8"), 0);
  EXPECT_EQ(got, "== metrics\n" + Read(dir / "m.csv") + "== jobs\n" + Read(dir / "j.csv"));
  fs::remove_all(dir);
  fs::path expected = trace;
  expected.replace_extension(".expected");
  const char* update = std::getenv("CORRAL_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(expected, std::ios::binary) << got;
    GTEST_SKIP() << "rewrote " << expected;
  }
  ASSERT_TRUE(fs::exists(expected)) << expected << " is missing (CORRAL_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(got, Read(expected)) << "scenario " << trace.filename();
}

INSTANTIATE_TEST_SUITE_P(Sim, ScenarioTest, ::testing::ValuesIn(Scenarios()),
                         [](const ::testing::TestParamInfo<fs::path>& p) {
                           return p.param.stem().string();
                         });

}  // namespace
}  // namespace corral::sim
