// The option tables of squeue, sinfo, sacct, scontrol, scancel and `corral run`
// (internal/command_options.h):
// every option listed is scanned to its own entry under each of its forms and applied; unknown
// options are refused by name; --help and --version stop the scan; and what the main options
// set.
#include "cli/internal/command_options.h"

#include <functional>

#include <gtest/gtest.h>

#include "cli/internal/query_common.h"

namespace corral::cli::internal {
namespace {

using slurm::ArgKind;
using slurm::CommandOption;
using slurm::OptionScan;
using slurm::ScanWithTable;

// Scans as the query commands do (operands may come anywhere; `corral run` passes "+:").
template <typename Args>
OptionScan Scan(std::span<const CommandOption<Args>> table, std::vector<std::string> words,
                Args* args, const char* mode = ":") {
  words.insert(words.begin(), "prog");
  return ScanWithTable(table, words, mode, *args);
}

// Every form of every entry (long name, other long name, letter; with the argument `value`
// gives where it takes one) is found as that entry and applied; the only errors are refusals
// by name.
template <typename Args>
void EveryOptionScansToItsEntry(
    std::span<const CommandOption<Args>> table,
    std::function<std::string(const CommandOption<Args>&)> value = [](const auto&) {
      return std::string("n1");
    }) {
  for (size_t i = 0; i < table.size(); ++i) {
    const CommandOption<Args>& o = table[i];
    ASSERT_NE(o.apply, nullptr);
    std::vector<std::vector<std::string>> forms;
    std::string arg = o.arg == ArgKind::kRequired ? "=" + value(o) : "";
    if (o.name != nullptr) forms.push_back({"--" + std::string(o.name) + arg});
    if (o.alias != nullptr) forms.push_back({"--" + std::string(o.alias) + arg});
    if (o.letter != 0) {
      forms.push_back({std::string("-") + o.letter});
      if (o.arg == ArgKind::kRequired) forms.back().push_back(value(o));
    }
    ASSERT_FALSE(forms.empty());
    for (const auto& form : forms) {
      SCOPED_TRACE(form.front());
      Args a;
      OptionScan scan = Scan(table, form, &a);
      EXPECT_FALSE(scan.failure.has_value());
      EXPECT_EQ(scan.applied, (std::vector<size_t>{i}));
      EXPECT_EQ(scan.stopped, o.stops);
      if (scan.error.has_value()) {
        EXPECT_EQ(scan.error->code, ErrorCode::kUnimplemented) << scan.error->message;
        EXPECT_EQ(scan.error->message,
                  std::string("option -") + o.letter + " is not supported by Corral");
      }
    }
  }
}

template <typename Args>
void UnknownOptionsAreRefusedByName(std::span<const CommandOption<Args>> table) {
  Args a;
  OptionScan scan = Scan(table, {"--no-such-option=1"}, &a);
  ASSERT_TRUE(scan.failure.has_value());
  EXPECT_EQ(scan.failure->last_word, "--no-such-option=1");
  scan = Scan(table, {"-%"}, &a);
  ASSERT_TRUE(scan.failure.has_value());
  EXPECT_EQ(scan.failure->optopt, '%');
}

// --help and --version end the scan where they stand, as the commands exit there.
template <typename Args>
void HelpAndVersionStopTheScan(std::span<const CommandOption<Args>> table) {
  for (const char* word : {"--help", "--usage", "--version"}) {
    SCOPED_TRACE(word);
    Args a;
    OptionScan scan = Scan(table, {word, "--no-such-option"}, &a);
    EXPECT_TRUE(scan.stopped);
    EXPECT_FALSE(scan.failure.has_value());
    EXPECT_EQ(std::string(word) == "--version", a.version);
    EXPECT_EQ(std::string(word) != "--version", a.help);
  }
  // Every option with a help line is listed, one line each.
  std::string help = slurm::TableHelp(table);
  size_t lines = 0;
  for (const auto& o : table) {
    if (o.help == nullptr) continue;
    ++lines;
    EXPECT_NE(help.find("--" + std::string(o.name)), std::string::npos) << o.name;
  }
  EXPECT_EQ(static_cast<size_t>(std::count(help.begin(), help.end(), '\n')), lines);
}

template <typename Args>
void CheckTable(std::span<const CommandOption<Args>> table) {
  {
    SCOPED_TRACE("every option");
    EveryOptionScansToItsEntry(table);
  }
  UnknownOptionsAreRefusedByName(table);
  HelpAndVersionStopTheScan(table);
}

TEST(CommandOptionsTest, EveryTableScansAppliesAndRefusesByName) {
  {
    SCOPED_TRACE("squeue");
    CheckTable(SqueueOptionTable());
  }
  {
    SCOPED_TRACE("sinfo");
    CheckTable(SinfoOptionTable());
  }
  {
    SCOPED_TRACE("sacct");
    CheckTable(SacctOptionTable());
  }
  {
    SCOPED_TRACE("scontrol");
    CheckTable(ScontrolOptionTable());
  }
  {
    SCOPED_TRACE("scancel");
    CheckTable(ScancelOptionTable());
  }
  {
    SCOPED_TRACE("sdiag");
    CheckTable(SdiagOptionTable());
  }
}

TEST(CommandOptionsTest, Squeue) {
  SqueueArgs a;
  OptionScan scan = Scan(SqueueOptionTable(),
                         {"-u", "0,bob", "--states=PD,R", "-o", "%i", "--job", "12", "13", "-p",
                          "a,,b", "-w", "n[1-2]", "-h", "--start", "--json", "-i", "5"},
                         &a);
  ASSERT_FALSE(scan.failure.has_value());
  ASSERT_FALSE(scan.error.has_value());
  EXPECT_EQ(a.users, (std::vector<std::string>{"root", "bob"}));  // uid 0 is root's
  EXPECT_EQ(a.state_names, (std::vector<std::string>{"PD", "R"}));
  EXPECT_EQ(a.render.format, "%i");
  EXPECT_TRUE(a.jobs_given);
  EXPECT_TRUE(a.job_args.empty());  // "--job 12": the optional argument needs '='
  EXPECT_EQ(scan.operands, (std::vector<std::string>{"12", "13"}));
  EXPECT_EQ(a.partitions, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(a.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_TRUE(a.render.no_header);
  EXPECT_TRUE(a.render.start);
  EXPECT_TRUE(a.json);
  EXPECT_EQ(a.iterate, 5);
  scan = Scan(SqueueOptionTable(), {"-j12", "--me"}, &a);
  EXPECT_EQ(a.job_args, (std::vector<std::string>{"12"}));
  EXPECT_EQ(a.users, (std::vector<std::string>{Me()}));
  // A bad host list is the handler's error, and the scan ends there.
  scan = Scan(SqueueOptionTable(), {"-w", "n[1-", "--bogus"}, &a);
  ASSERT_TRUE(scan.error.has_value());
  EXPECT_EQ(scan.error->message, "Invalid node name specified: n[1-");
  EXPECT_FALSE(scan.failure.has_value());
  // "--st" could be --start or --states/--state: ambiguous, refused.
  scan = Scan(SqueueOptionTable(), {"--st"}, &a);
  ASSERT_TRUE(scan.failure.has_value());
  EXPECT_EQ(scan.failure->last_word, "--st");
  // "--stat" is --states or --state, the same option.
  scan = Scan(SqueueOptionTable(), {"--stat=CD"}, &a);
  EXPECT_FALSE(scan.failure.has_value());
  EXPECT_EQ(a.state_names, (std::vector<std::string>{"CD"}));
}

TEST(CommandOptionsTest, Sinfo) {
  SinfoArgs a;
  OptionScan scan = Scan(SinfoOptionTable(),
                         {"-N", "-l", "-n", "vm[1-2]", "-t", "idle,mix", "-R", "-d", "-r"}, &a);
  ASSERT_FALSE(scan.failure.has_value());
  EXPECT_TRUE(a.render.node_oriented);
  EXPECT_TRUE(a.render.long_output);
  EXPECT_TRUE(a.render.list_reasons);
  EXPECT_EQ(a.nodes, (std::vector<std::string>{"vm1", "vm2"}));
  EXPECT_EQ(a.states, (std::vector<std::string>{"idle", "mix"}));
  EXPECT_TRUE(a.dead);
  EXPECT_TRUE(a.responding);
  // -N is --Node, -n is --nodes: letters and long names are case-sensitive.
  scan = Scan(SinfoOptionTable(), {"--Node", "-s", "-O", "partition:9"}, &a);
  EXPECT_TRUE(a.render.summarize);
  EXPECT_EQ(a.render.long_format, "partition:9");
}

TEST(CommandOptionsTest, Sacct) {
  SacctArgs a;
  OptionScan scan = Scan(SacctOptionTable(),
                         {"-j", "12,13", "--uid=0", "-S", "today", "-E", "now", "-P", "-X",
                          "--delimiter=;", "--name=a,b", "-b", "-a", "-n"},
                         &a);
  ASSERT_FALSE(scan.failure.has_value());
  EXPECT_EQ(a.job_args, (std::vector<std::string>{"12,13"}));
  EXPECT_EQ(a.users, (std::vector<std::string>{"root"}));
  EXPECT_EQ(a.start_text, "today");
  EXPECT_EQ(a.end_text, "now");
  EXPECT_TRUE(a.render.parsable2);
  EXPECT_TRUE(a.render.allocations);
  EXPECT_EQ(a.render.delimiter, ";");
  EXPECT_EQ(a.names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(a.render.format, "JobID,State,ExitCode");  // -b
  EXPECT_TRUE(a.all_users);
  EXPECT_TRUE(a.render.no_header);
  // -e lists the fields and exits: the scan stops there.
  scan = Scan(SacctOptionTable(), {"-e", "--bogus"}, &a);
  EXPECT_TRUE(scan.stopped);
  EXPECT_TRUE(a.help_format);
}

TEST(CommandOptionsTest, ScontrolTakesOptionsAnywhere) {
  ScontrolArgs a;
  OptionScan scan = Scan(ScontrolOptionTable(), {"show", "job", "12", "--json", "-o"}, &a);
  ASSERT_FALSE(scan.failure.has_value());
  EXPECT_TRUE(a.json);
  EXPECT_TRUE(a.render.one_liner);
  EXPECT_EQ(scan.operands, (std::vector<std::string>{"show", "job", "12"}));
  scan = Scan(ScontrolOptionTable(), {"-h"}, &a);
  EXPECT_TRUE(scan.stopped);
  EXPECT_TRUE(a.help);
}

TEST(CommandOptionsTest, Scancel) {
  ScancelArgs a;
  OptionScan scan = Scan(ScancelOptionTable(),
                         {"--jobname=x", "-s", "USR1", "-t", "R", "-Q", "-v", "-u", "0", "12"}, &a);
  ASSERT_FALSE(scan.failure.has_value());
  EXPECT_EQ(a.names, (std::vector<std::string>{"x"}));
  EXPECT_EQ(a.signal, "USR1");
  EXPECT_EQ(a.state_names, (std::vector<std::string>{"R"}));
  EXPECT_TRUE(a.quiet);
  EXPECT_TRUE(a.verbose);
  EXPECT_EQ(a.users, (std::vector<std::string>{"root"}));
  EXPECT_EQ(scan.operands, (std::vector<std::string>{"12"}));
  // Slurm's options Corral does not support are refused by name.
  scan = Scan(ScancelOptionTable(), {"--reservation=r"}, &a);
  ASSERT_TRUE(scan.error.has_value());
  EXPECT_EQ(scan.error->code, ErrorCode::kUnimplemented);
  EXPECT_EQ(scan.error->message, "option -R is not supported by Corral");
}

TEST(CommandOptionsTest, CorralRun) {
  // A value each option of `corral run` takes.
  EveryOptionScansToItsEntry<RunArgs>(RunOptionTable(), [](const CommandOption<RunArgs>& o) {
    std::string name = o.name;
    if (name == "container-mounts") return std::string("/a:/b");
    if (name == "container-workdir") return std::string("/w");
    return std::string("2");
  });
  UnknownOptionsAreRefusedByName(RunOptionTable());
  RunArgs a;
  OptionScan scan =
      Scan(RunOptionTable(),
           {"-N", "2-2", "-n4", "--gpus-per-task=a100:1", "-K0", "-l", "--export=NONE", "-D", "d",
            "--container-mounts=/a:/b,/c", "--jobid=7", "--json", "-h", "python", "-N", "1"},
           &a, "+:");
  ASSERT_FALSE(scan.failure.has_value());
  ASSERT_FALSE(scan.error.has_value());
  EXPECT_EQ(a.spec.nodes, 2u);
  EXPECT_EQ(a.spec.ntasks, 4u);
  EXPECT_EQ(a.spec.gpus_per_task, 1u);
  EXPECT_EQ(a.spec.kill_on_bad_exit, false);
  EXPECT_TRUE(a.label);
  EXPECT_EQ(a.export_mode, "NONE");
  EXPECT_EQ(a.spec.working_dir, "d");
  EXPECT_EQ(a.spec.container.mounts, (std::vector<std::string>{"/a:/b", "/c"}));
  EXPECT_EQ(a.job, "7");
  EXPECT_TRUE(a.json);
  EXPECT_TRUE(a.help);  // --help does not stop the scan: errors after it still count
  EXPECT_FALSE(scan.stopped);
  // The command and its arguments are operands ("+" mode: scanning stops at the command).
  EXPECT_EQ(scan.operands, (std::vector<std::string>{"python", "-N", "1"}));
  // Bad values are the handlers' errors.
  scan = Scan(RunOptionTable(), {"-n", "0"}, &a);
  ASSERT_TRUE(scan.error.has_value());
  EXPECT_EQ(scan.error->message, "--ntasks: \"0\" is not a valid count");
  scan = Scan(RunOptionTable(), {"--container-workdir=rel"}, &a);
  ASSERT_TRUE(scan.error.has_value());
  EXPECT_EQ(scan.error->message, "--container-workdir: \"rel\" is not an absolute path");
  scan = Scan(RunOptionTable(), {"-n"}, &a);
  ASSERT_TRUE(scan.failure.has_value());
  EXPECT_TRUE(scan.failure->missing_argument);
  EXPECT_EQ(scan.failure->last_word, "-n");
}

TEST(JobFilterTest, EveryListNarrowsTheJobs) {
  Job j;
  j.spec.user = "alice";
  j.spec.account = "a1";
  j.spec.name = "train";
  j.spec.qos = "high";
  j.partition = "gpu";
  j.state = JobState::kPending;
  j.allocation.nodes.push_back(NodeAllocation{.node_name = "n1"});
  EXPECT_TRUE(JobFilter{}.Matches(j));
  EXPECT_TRUE((JobFilter{.users = {"bob", "alice"}, .qos = {"high"}}.Matches(j)));
  EXPECT_FALSE(JobFilter{.users = {"bob"}}.Matches(j));
  EXPECT_FALSE(JobFilter{.accounts = {"a2"}}.Matches(j));
  EXPECT_FALSE(JobFilter{.partitions = {"cpu"}}.Matches(j));
  EXPECT_FALSE(JobFilter{.names = {"eval"}}.Matches(j));
  EXPECT_FALSE(JobFilter{.qos = {"low"}}.Matches(j));
  EXPECT_FALSE(JobFilter{.states = {JobState::kRunning}}.Matches(j));
  EXPECT_TRUE(JobFilter{.nodes = {"n1"}}.Matches(j));
  EXPECT_FALSE(JobFilter{.nodes = {"n2"}}.Matches(j));
  // squeue -w: running jobs only.
  EXPECT_FALSE((JobFilter{.nodes = {"n1"}, .running_on_nodes = true}.Matches(j)));
  j.state = JobState::kRunning;
  EXPECT_TRUE((JobFilter{.nodes = {"n1"}, .running_on_nodes = true}.Matches(j)));
}

TEST(QueryCommonTest, StatesAndJobIds) {
  bool all = false;
  auto states = ParseStates({"PD", "running", "all"}, &all);
  ASSERT_TRUE(states.has_value());
  EXPECT_EQ(*states, (std::vector<JobState>{JobState::kPending, JobState::kRunning}));
  EXPECT_TRUE(all);
  EXPECT_EQ(StateNames(*states), (std::vector<std::string>{"PENDING", "RUNNING"}));
  EXPECT_EQ(ParseStates({"bogus"}, &all).error().message, "Invalid job state specified: bogus");
  auto ids = ParseJobIdArgs({"12,13", "14_2"}, "Invalid job id: ");
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(ids->size(), 3u);
  EXPECT_EQ(ParseJobIdArgs({"12", "x"}, "Invalid job id ").error().message, "Invalid job id x");
}

}  // namespace
}  // namespace corral::cli::internal
