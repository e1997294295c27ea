#include "sched/config.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace corral::sched {
namespace {

std::string ErrorOf(std::string_view text) {
  auto r = ParseSchedulerConfig(text);
  if (r) return "ok";
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  return r.error().message;
}

TEST(SchedulerConfigTest, EmptyFileGivesDefaults) {
  auto c = ParseSchedulerConfig("");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(*c, DefaultSchedulerConfig());
  ASSERT_EQ(c->partitions.size(), 1u);
  EXPECT_EQ(c->partitions[0].name, "main");
  EXPECT_TRUE(c->partitions[0].is_default);
  EXPECT_TRUE(c->partitions[0].nodes.empty());  // every node
  EXPECT_EQ(c->priority.weight_age, 1000u);
  EXPECT_EQ(c->priority.weight_fairshare, 0u);
  ASSERT_EQ(c->qos.size(), 1u);
  EXPECT_EQ(c->qos[0].name, "normal");
  EXPECT_EQ(c->default_qos, "normal");
  EXPECT_TRUE(c->backfill.enabled);
  EXPECT_EQ(DefaultPartition(*c)->name, "main");
}

TEST(SchedulerConfigTest, IgnoresTheControllersSections) {
  auto c = ParseSchedulerConfig(R"(
cluster_name = "corral"
[controller]
listen = "0.0.0.0:6817"
anything = { nested = 1 }
[store]
path = "/var/lib/corral/state.db"
[auth]
munge = true
[[node]]
name = "gpu-001"
)");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(*c, DefaultSchedulerConfig());
}

TEST(SchedulerConfigTest, ParsesEverySection) {
  auto c = ParseSchedulerConfig(R"(
[scheduler]
policy = "backfill"
seed = 42
default_qos = "normal"
max_jobs_per_pass = 5000
[scheduler.priority]
weight_age = 100
weight_fairshare = 10000
weight_job_size = 50
weight_partition = 1000
weight_qos = 2000
max_age = "14-0"
favor_small = true
[scheduler.fairshare]
half_life = "3-0"
usage_period = "7-0"
weight_gpu = 1.0
weight_cpu = 0.01
weight_mem_gb = 0
[scheduler.backfill]
enabled = false
reservations = 3
window = "2-0"
[scheduler.preemption]
enabled = true
grace_time = "5:00"
reclaim = false
max_preemptors_per_pass = 4

[[partition]]
name = "train"
nodes = "h100-[001-004]"
default = true
default_time = "1:00:00"
max_time = "7-0"
max_gpus_per_job = 256
max_nodes_per_job = 32
priority_tier = 2
def_mem_per_cpu = "4G"
allowed_accounts = ["nlp"]

[[partition]]
name = "debug"
nodes = ["a100-01", "a100-[02-03]"]
state = "down"
max_time = 30

[[account]]
name = "research"
shares = 60
guaranteed_gpus = 16
max_gpus = 24

[[account]]
name = "nlp"
parent = "research"
shares = 2
users = ["alice", "bob"]
max_running_jobs = 10
max_submitted_jobs = 100
max_gpu_minutes = 600000
max_gpus_per_job = 16
default_qos = "high"
allowed_qos = ["normal", "high"]

[[user]]
name = "alice"
shares = 3
max_gpus = 8

[[qos]]
name = "normal"
priority = 10
[[qos]]
name = "high"
priority = 100
preempt = ["scavenger"]
max_gpus_per_user = 32
max_running_jobs = 50
max_time = "2-0"
[[qos]]
name = "scavenger"
preempt_mode = "cancel"
grace_time = "30"
usage_factor = 0.0

[[reservation]]
name = "maint"
nodes = "h100-[001-002]"
start = 2026-12-01T08:00:00Z
duration = "8:00:00"
maintenance = true
[[reservation]]
name = "demo"
nodes = "a100-01"
start = "2026-12-02T00:00:00"
end = "2026-12-03T00:00:00"
users = ["alice"]
accounts = ["nlp"]

[topology]
[[topology.switch]]
name = "leaf1"
nodes = "h100-[001-002]"
[[topology.switch]]
name = "leaf2"
nodes = "h100-[003-004]"
[[topology.switch]]
name = "spine"
switches = "leaf[1-2]"
)");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->policy, "backfill");
  EXPECT_EQ(c->seed, 42u);
  EXPECT_EQ(c->max_jobs_per_pass, 5000u);
  EXPECT_EQ(c->priority.weight_fairshare, 10000u);
  EXPECT_EQ(c->priority.max_age, Minutes(14 * 24 * 60));
  EXPECT_TRUE(c->priority.favor_small);
  EXPECT_EQ(c->fairshare.half_life, Minutes(3 * 24 * 60));
  EXPECT_DOUBLE_EQ(c->fairshare.weight_cpu, 0.01);
  EXPECT_FALSE(c->backfill.enabled);
  EXPECT_EQ(c->backfill.reservations, 3u);
  EXPECT_EQ(c->preemption.grace_time, Minutes(5));
  EXPECT_FALSE(c->preemption.reclaim);
  EXPECT_EQ(c->preemption.max_preemptors_per_pass, 4u);

  ASSERT_EQ(c->partitions.size(), 2u);
  const Partition& train = c->partitions[0];
  EXPECT_EQ(train.nodes,
            (std::vector<std::string>{"h100-001", "h100-002", "h100-003", "h100-004"}));
  EXPECT_TRUE(train.is_default);
  EXPECT_EQ(train.default_time, Minutes(60));
  EXPECT_EQ(train.max_gpus_per_job, 256u);
  EXPECT_EQ(train.priority_tier, 2u);
  EXPECT_EQ(train.def_mem_per_cpu_mb, 4096u);
  EXPECT_EQ(train.allowed_accounts, (std::vector<std::string>{"nlp"}));
  const Partition& debug = c->partitions[1];
  EXPECT_EQ(debug.nodes, (std::vector<std::string>{"a100-01", "a100-02", "a100-03"}));
  EXPECT_FALSE(debug.up);
  EXPECT_FALSE(debug.is_default);
  EXPECT_EQ(debug.max_time, Minutes(30));

  ASSERT_EQ(c->accounts.size(), 2u);
  EXPECT_EQ(c->accounts[0].parent, "");
  EXPECT_EQ(c->accounts[0].guaranteed_gpus, 16u);
  EXPECT_EQ(c->accounts[0].limits.max_gpus, 24u);
  EXPECT_EQ(c->accounts[1].parent, "research");
  EXPECT_EQ(c->accounts[1].users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(c->accounts[1].limits.max_running_jobs, 10u);
  EXPECT_EQ(c->accounts[1].limits.max_submitted_jobs, 100u);
  EXPECT_EQ(c->accounts[1].limits.max_gpu_minutes, 600000u);
  EXPECT_EQ(c->accounts[1].limits.max_gpus_per_job, 16u);
  EXPECT_FALSE(c->accounts[1].limits.max_gpus.has_value());
  EXPECT_EQ(DefaultQos(*c, "nlp"), "high");
  EXPECT_EQ(DefaultQos(*c, "research"), "normal");
  EXPECT_EQ(DefaultQos(*c, "unknown"), "normal");

  ASSERT_EQ(c->users.size(), 1u);
  EXPECT_EQ(c->users[0].shares, 3u);
  EXPECT_EQ(c->users[0].limits.max_gpus, 8u);

  ASSERT_EQ(c->qos.size(), 3u);
  EXPECT_EQ(c->qos[1].preempt, (std::vector<std::string>{"scavenger"}));
  EXPECT_EQ(c->qos[1].per_user.max_gpus, 32u);
  EXPECT_EQ(c->qos[1].limits.max_running_jobs, 50u);
  EXPECT_EQ(c->qos[1].max_time, Minutes(2 * 24 * 60));
  EXPECT_EQ(c->qos[2].preempt_mode, PreemptMode::kCancel);
  EXPECT_EQ(c->qos[2].grace_time, Minutes(30));
  EXPECT_EQ(c->qos[2].usage_factor, 0.0);

  ASSERT_EQ(c->reservations.size(), 2u);
  EXPECT_EQ(FormatTimestamp(c->reservations[0].start), "2026-12-01T08:00:00");
  EXPECT_EQ(FormatTimestamp(c->reservations[0].end), "2026-12-01T16:00:00");
  EXPECT_TRUE(c->reservations[0].maintenance);
  EXPECT_EQ(FormatTimestamp(c->reservations[1].end), "2026-12-03T00:00:00");
  EXPECT_EQ(c->reservations[1].users, (std::vector<std::string>{"alice"}));

  ASSERT_EQ(c->switches.size(), 3u);
  EXPECT_EQ(c->switches[2].switches, (std::vector<std::string>{"leaf1", "leaf2"}));
  EXPECT_TRUE(ValidateSchedulerConfig(*c).has_value());
}

TEST(SchedulerConfigTest, DefaultQosFallsBackToFirstWithoutNormal) {
  auto c = ParseSchedulerConfig("[[qos]]\nname = \"std\"\n[[qos]]\nname = \"hi\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->default_qos, "std");
  auto d = ParseSchedulerConfig("[[partition]]\nname = \"a\"\n[[partition]]\nname = \"b\"\n");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->partitions[0].is_default);  // the first becomes the default
  EXPECT_FALSE(d->partitions[1].is_default);
}

TEST(SchedulerConfigTest, RejectsUnknownKeysInOwnedSections) {
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nmax_gpu = 4\n"),
            "corral.toml: [[partition]] \"gpu\": unknown key \"max_gpu\"");
  EXPECT_EQ(ErrorOf("[scheduler]\npolicyy = \"fifo\"\n"),
            "corral.toml: [scheduler]: unknown key \"policyy\"");
  EXPECT_EQ(ErrorOf("[scheduler.priority]\nweight_agee = 1\n"),
            "corral.toml: [scheduler.priority]: unknown key \"weight_agee\"");
  EXPECT_EQ(ErrorOf("[scheduler.fairshare]\nhalflife = 1\n"),
            "corral.toml: [scheduler.fairshare]: unknown key \"halflife\"");
  EXPECT_EQ(ErrorOf("[scheduler.backfill]\ndepth = 1\n"),
            "corral.toml: [scheduler.backfill]: unknown key \"depth\"");
  EXPECT_EQ(ErrorOf("[scheduler.preemption]\nmode = 1\n"),
            "corral.toml: [scheduler.preemption]: unknown key \"mode\"");
  EXPECT_EQ(ErrorOf("[scheduler.other]\nx = 1\n"),
            "corral.toml: [scheduler]: unknown key \"other\"");
  EXPECT_EQ(ErrorOf("[[account]]\nname = \"a\"\nshare = 1\n"),
            "corral.toml: [[account]] \"a\": unknown key \"share\"");
  EXPECT_EQ(ErrorOf("[[user]]\nname = \"u\"\nmax_gpus_per_user = 1\n"),
            "corral.toml: [[user]] \"u\": unknown key \"max_gpus_per_user\"");
  EXPECT_EQ(ErrorOf("[[qos]]\nname = \"q\"\npreemt = []\n"),
            "corral.toml: [[qos]] \"q\": unknown key \"preemt\"");
  EXPECT_EQ(
      ErrorOf("[[reservation]]\nname = \"r\"\nnodes = \"n1\"\nstart = \"2026-01-01T00:00:00\"\n"
              "duration = 60\nflags = \"x\"\n"),
      "corral.toml: [[reservation]] \"r\": unknown key \"flags\"");
  EXPECT_EQ(ErrorOf("[topology]\nleaf = 1\n"), "corral.toml: [topology]: unknown key \"leaf\"");
  EXPECT_EQ(ErrorOf("[[topology.switch]]\nname = \"s\"\nnodes = \"n1\"\nspeed = 1\n"),
            "corral.toml: [[topology.switch]] \"s\": unknown key \"speed\"");
}

TEST(SchedulerConfigTest, RejectsBadValues) {
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nmax_time = \"x\"\n"),
            "corral.toml: [[partition]] \"gpu\": max_time: invalid time \"x\": expected a number "
            "in each field");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nmax_time = true\n"),
            "corral.toml: [[partition]] \"gpu\": max_time: expected a time string such as "
            "\"1-00:00:00\", got a boolean");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nmax_time = \"0\"\n"),
            "corral.toml: [[partition]] \"gpu\": max_time: must be positive");
  EXPECT_EQ(
      ErrorOf(
          "[[partition]]\nname = \"gpu\"\ndefault_time = \"2:00:00\"\nmax_time = \"1:00:00\"\n"),
      "corral.toml: [[partition]] \"gpu\": default_time: 2:00:00 exceeds max_time 1:00:00");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nnodes = \"n[1-\"\n"),
            "corral.toml: [[partition]] \"gpu\": nodes: host list \"n[1-\": unbalanced '['");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nnodes = [1]\n"),
            "corral.toml: [[partition]] \"gpu\": nodes: expected a host list or an array of host "
            "lists, got an integer");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nstate = \"drain\"\n"),
            "corral.toml: [[partition]] \"gpu\": state: invalid state \"drain\": expected \"up\" "
            "or \"down\"");
  EXPECT_EQ(
      ErrorOf("[[partition]]\nname = \"gpu\"\nmax_gpus_per_job = -1\n"),
      "corral.toml: [[partition]] \"gpu\": max_gpus_per_job: -1 is out of range 0..4294967295");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\npriority_tier = \"high\"\n"),
            "corral.toml: [[partition]] \"gpu\": priority_tier: expected an integer, got a string");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\ndef_mem_per_cpu = \"4X\"\n"),
            "corral.toml: [[partition]] \"gpu\": def_mem_per_cpu: invalid memory size \"4X\": "
            "expected a number "
            "with an optional K, M, G or T suffix");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\ndef_mem_per_cpu = -4\n"),
            "corral.toml: [[partition]] \"gpu\": def_mem_per_cpu: -4 is negative");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\ndefault = \"yes\"\n"),
            "corral.toml: [[partition]] \"gpu\": default: expected a boolean, got a string");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nallowed_accounts = \"a\"\n"),
            "corral.toml: [[partition]] \"gpu\": allowed_accounts: expected an array of strings, "
            "got a string");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"gpu\"\nallowed_accounts = [\"a\", 2]\n"),
            "corral.toml: [[partition]] \"gpu\": allowed_accounts: expected an array of strings, "
            "got an integer");
  EXPECT_EQ(ErrorOf("[[partition]]\nmax_time = 1\n"),
            "corral.toml: [[partition]] #1: missing key \"name\"");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = 3\n"),
            "corral.toml: [[partition]] #1: name: expected a string, got an integer");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"\"\n"),
            "corral.toml: [[partition]] #1: name: must not be empty");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"a b\"\n"),
            "corral.toml: [[partition]] #1: name: \"a b\" has an invalid character");
  EXPECT_EQ(ErrorOf("partition = 3\n"),
            "corral.toml: partition: expected an array of tables ([[partition]]), got an integer");
  EXPECT_EQ(ErrorOf("scheduler = 3\n"), "corral.toml: scheduler: expected a table, got an integer");
  EXPECT_EQ(ErrorOf("topology = []\n"), "corral.toml: topology: expected a table, got an array");
  EXPECT_EQ(ErrorOf("[scheduler]\npolicy = \"\"\n"),
            "corral.toml: [scheduler]: policy: must not be empty");
  EXPECT_EQ(ErrorOf("[scheduler]\npolicy = \"lottery\"\n")
                .rfind("corral.toml: [scheduler]: policy: no such policy \"lottery\" (known: fifo, "
                       "backfill, default, "
                       "first_fit",
                       0),
            0u);
  EXPECT_EQ(ErrorOf("[scheduler]\nseed = -1\n"),
            "corral.toml: [scheduler]: seed: -1 is out of range 0..18446744073709551615");
  EXPECT_EQ(ErrorOf("[scheduler]\npriority = 1\n"),
            "corral.toml: [scheduler]: priority: expected a table, got an integer");
  EXPECT_EQ(ErrorOf("[scheduler.priority]\nmax_age = \"0\"\n"),
            "corral.toml: [scheduler.priority]: max_age: must be positive");
  EXPECT_EQ(
      ErrorOf("[scheduler.priority]\nweight_qos = 2000000000\n"),
      "corral.toml: [scheduler.priority]: weight_qos: 2000000000 is out of range 0..1000000000");
  EXPECT_EQ(ErrorOf("[scheduler.fairshare]\nweight_gpu = -1.5\n"),
            "corral.toml: [scheduler.fairshare]: weight_gpu: -1.5 is out of range 0..1e+09");
  EXPECT_EQ(ErrorOf("[scheduler.fairshare]\nweight_gpu = \"1\"\n"),
            "corral.toml: [scheduler.fairshare]: weight_gpu: expected a number, got a string");
  EXPECT_EQ(ErrorOf("[scheduler.fairshare]\nusage_period = 0\n"),
            "corral.toml: [scheduler.fairshare]: usage_period: must be positive");
  EXPECT_EQ(ErrorOf("[scheduler.backfill]\nwindow = 0\n"),
            "corral.toml: [scheduler.backfill]: window: must be positive");
  EXPECT_EQ(ErrorOf("[scheduler.preemption]\ngrace_time = \"UNLIMITED\"\n"),
            "corral.toml: [scheduler.preemption]: grace_time: must be finite");
  EXPECT_EQ(ErrorOf("[[qos]]\nname = \"q\"\npreempt_mode = \"suspend\"\n"),
            "corral.toml: [[qos]] \"q\": preempt_mode: invalid mode \"suspend\": expected \"off\", "
            "\"requeue\" or \"cancel\"");
  EXPECT_EQ(ErrorOf("[[qos]]\nname = \"q\"\ngrace_time = \"INFINITE\"\n"),
            "corral.toml: [[qos]] \"q\": grace_time: must be finite");
  EXPECT_EQ(ErrorOf("[[account]]\nname = \"root\"\n"),
            "corral.toml: [[account]] \"root\": name: \"root\" is the implicit top of the tree");
  EXPECT_EQ(ErrorOf("[[account]]\nname = \"a\"\nshares = 0\n"),
            "corral.toml: [[account]] \"a\": shares: must be at least 1");
  EXPECT_EQ(ErrorOf("[[user]]\nname = \"u\"\nshares = 0\n"),
            "corral.toml: [[user]] \"u\": shares: must be at least 1");
}

TEST(SchedulerConfigTest, RejectsBadReservations) {
  const std::string head = "[[reservation]]\nname = \"r\"\n";
  EXPECT_EQ(ErrorOf(head), "corral.toml: [[reservation]] \"r\": missing key \"nodes\"");
  EXPECT_EQ(ErrorOf(head + "nodes = \"n1\"\n"),
            "corral.toml: [[reservation]] \"r\": missing key \"start\"");
  EXPECT_EQ(ErrorOf(head + "nodes = \"n1\"\nstart = \"tomorrow\"\nduration = 1\n"),
            "corral.toml: [[reservation]] \"r\": start: invalid date-time \"tomorrow\": expected "
            "YYYY-MM-DDTHH:MM:SS (UTC)");
  EXPECT_EQ(
      ErrorOf(head + "nodes = \"n1\"\nstart = \"2026-02-30T00:00:00\"\nduration = 1\n"),
      "corral.toml: [[reservation]] \"r\": start: invalid date-time: no such date or time of day");
  EXPECT_EQ(ErrorOf(head + "nodes = \"n1\"\nstart = 5\nduration = 1\n"),
            "corral.toml: [[reservation]] \"r\": start: expected a date-time, got an integer");
  EXPECT_EQ(
      ErrorOf(head + "nodes = \"n1\"\nstart = 2026-01-01T00:00:00\nend = 2025-01-01T00:00:00\n"),
      "corral.toml: [[reservation]] \"r\": end: must be after start");
  EXPECT_EQ(
      ErrorOf(
          head +
          "nodes = \"n1\"\nstart = 2026-01-01T00:00:00\nend = 2027-01-01T00:00:00\nduration = 1\n"),
      "corral.toml: [[reservation]] \"r\": give either \"end\" or \"duration\", not both");
  EXPECT_EQ(ErrorOf(head + "nodes = \"n1\"\nstart = 2026-01-01\nduration = 0\n"),
            "corral.toml: [[reservation]] \"r\": duration: must be positive");
  EXPECT_EQ(ErrorOf(head + "nodes = []\nstart = 2026-01-01\nduration = 1\n"),
            "corral.toml: [[reservation]] \"r\": nodes: must name at least one node");
  EXPECT_EQ(ErrorOf("[[account]]\nname = \"a\"\n" + head +
                    "nodes = \"n1\"\nstart = 2026-01-01\nduration = 1\naccounts = [\"b\"]\n"),
            "corral.toml: [[reservation]] \"r\": accounts: no such account \"b\"");
  // Open-ended with an UNLIMITED duration; a local date-time is taken as UTC.
  auto c = ParseSchedulerConfig(
      head + "nodes = \"n1\"\nstart = 2026-01-01T10:00:00\nduration = \"UNLIMITED\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->reservations[0].end, Timestamp::max());
  EXPECT_EQ(FormatTimestamp(c->reservations[0].start), "2026-01-01T10:00:00");
  auto d = ParseSchedulerConfig(
      head + "nodes = \"n1\"\nstart = 2026-01-01T10:00:00+02:00\nduration = 1\n");
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(FormatTimestamp(d->reservations[0].start), "2026-01-01T08:00:00");
}

TEST(SchedulerConfigTest, RejectsBadReferences) {
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"a\"\n[[partition]]\nname = \"a\"\n"),
            "corral.toml: [[partition]] \"a\": defined twice");
  EXPECT_EQ(ErrorOf("[[qos]]\nname = \"q\"\n[[qos]]\nname = \"q\"\n"),
            "corral.toml: [[qos]] \"q\": defined twice");
  EXPECT_EQ(ErrorOf("[[account]]\nname = \"a\"\nparent = \"b\"\n"),
            "corral.toml: [[account]] \"a\": parent: no such account \"b\"");
  EXPECT_EQ(
      ErrorOf(
          "[[account]]\nname = \"a\"\nparent = \"b\"\n[[account]]\nname = \"b\"\nparent = \"a\"\n"),
      "corral.toml: [[account]] \"a\": parent: the account tree has a cycle");
  EXPECT_EQ(ErrorOf("[[account]]\nname = \"a\"\ndefault_qos = \"gold\"\n"),
            "corral.toml: [[account]] \"a\": default_qos: no such qos \"gold\"");
  EXPECT_EQ(ErrorOf("[[account]]\nname = \"a\"\nallowed_qos = [\"gold\"]\n"),
            "corral.toml: [[account]] \"a\": allowed_qos: no such qos \"gold\"");
  EXPECT_EQ(
      ErrorOf("[[qos]]\nname = \"normal\"\n[[qos]]\nname = \"hi\"\n[[account]]\nname = \"a\"\n"
              "default_qos = \"hi\"\nallowed_qos = [\"normal\"]\n"),
      "corral.toml: [[account]] \"a\": default_qos: \"hi\" is not in allowed_qos");
  EXPECT_EQ(ErrorOf("[[partition]]\nname = \"p\"\nallowed_accounts = [\"x\"]\n"),
            "corral.toml: [[partition]] \"p\": allowed_accounts: no such account \"x\"");
  EXPECT_EQ(ErrorOf("[[qos]]\nname = \"q\"\npreempt = [\"z\"]\n"),
            "corral.toml: [[qos]] \"q\": preempt: no such qos \"z\"");
  EXPECT_EQ(ErrorOf("[[qos]]\nname = \"q\"\npreempt = [\"q\"]\n"),
            "corral.toml: [[qos]] \"q\": preempt: a qos cannot preempt itself");
  EXPECT_EQ(ErrorOf("[scheduler]\ndefault_qos = \"gold\"\n"),
            "corral.toml: [scheduler]: default_qos: \"gold\" is not a defined qos");
  EXPECT_EQ(ErrorOf("[[topology.switch]]\nname = \"s\"\n"),
            "corral.toml: [[topology.switch]] \"s\": give exactly one of \"nodes\" (a leaf) or "
            "\"switches\"");
  EXPECT_EQ(ErrorOf("[[topology.switch]]\nname = \"s\"\nswitches = \"t\"\n"),
            "corral.toml: [[topology.switch]] \"s\": switches: no such switch \"t\"");
  EXPECT_EQ(
      ErrorOf("[[topology.switch]]\nname = \"a\"\nnodes = \"n[1-2]\"\n[[topology.switch]]\nname = "
              "\"b\"\nnodes = \"n2\"\n"),
      "corral.toml: [[topology.switch]] \"b\": nodes: node \"n2\" is under two leaf switches");
  EXPECT_EQ(ErrorOf("[[topology.switch]]\nname = \"l\"\nnodes = \"n1\"\n[[topology.switch]]\nname "
                    "= \"a\"\nswitches = \"l\"\n"
                    "[[topology.switch]]\nname = \"b\"\nswitches = \"l\"\n"),
            "corral.toml: [[topology.switch]] \"b\": switches: \"l\" is already under \"a\"");
  EXPECT_EQ(ErrorOf("[[topology.switch]]\nname = \"a\"\nswitches = "
                    "\"b\"\n[[topology.switch]]\nname = \"b\"\nswitches = \"a\"\n"),
            "corral.toml: [[topology.switch]] \"a\": switches: the topology has a cycle");
  EXPECT_EQ(ErrorOf("[topology]\nswitch = 1\n"),
            "corral.toml: [topology]: switch: expected an array of tables, got an integer");
}

TEST(SchedulerConfigTest, ReportsSyntaxErrorsWithPosition) {
  auto r = ParseSchedulerConfig("[scheduler]\npolicy = \n", "/etc/corral/corral.toml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("/etc/corral/corral.toml:2:", 0), 0u) << r.error().message;
}

TEST(SchedulerConfigTest, ValidatesConfigsBuiltInCode) {
  SchedulerConfig c = DefaultSchedulerConfig();
  EXPECT_TRUE(ValidateSchedulerConfig(c).has_value());
  c.partitions.clear();
  EXPECT_EQ(ValidateSchedulerConfig(c).error().message, "no partition defined");
  c = DefaultSchedulerConfig();
  c.qos.clear();
  EXPECT_EQ(ValidateSchedulerConfig(c).error().message, "no qos defined");
  EXPECT_EQ(PreemptModeName(PreemptMode::kRequeue), "requeue");
}

// The shipped example must stay valid.
TEST(SchedulerConfigTest, ParsesTheDeployExample) {
  std::string path = std::string(CORRAL_SOURCE_DIR) + "/deploy/corral.example.toml";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr) << "no " << path;  // shipped with the source: missing is a failure
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  auto c = ParseSchedulerConfig(text, "corral.example.toml");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_GE(c->partitions.size(), 4u);
  EXPECT_GE(c->qos.size(), 3u);
}

}  // namespace
}  // namespace corral::sched
