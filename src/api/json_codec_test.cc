#include "api/json_codec.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/messages.h"
#include "core/duration.h"
#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"
#include "core/resources.h"
#include "core/time.h"

namespace corral::api {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// 2026-11-29T16:51:03.000123Z and a few seconds later. Wire durations are whole seconds.
Timestamp At(int64_t plus_seconds = 0) {
  return FromMicros(1'795'971'063'000'123 + plus_seconds * 1'000'000);
}

// One helper per type, each setting every field to a value that differs from its default, so
// that a field the codec forgets makes the round trip fail.

ResourceRequest FullResourceRequest() {
  ResourceRequest r;
  r.nodes = 2;
  r.nodes_max = 4;
  r.ntasks = 16;
  r.ntasks_per_node = 8;
  r.cpus_per_task = 3;
  r.mem_per_node_mb = 512'000;
  r.mem_per_cpu_mb = 4096;
  r.mem_per_gpu_mb = 81'920;
  r.gpus = 16;
  r.gpus_per_node = 8;
  r.gpus_per_task = 1;
  r.cpus_per_gpu = 6;
  r.gpu_type = "h100";
  r.exclusive = true;
  r.constraint = "ib&h100";
  r.nodelist = {"gpu01", "gpu02"};
  r.exclude = {"gpu13"};
  return r;
}

Dependency FullDependency() {
  return Dependency{
      .type = DependencyType::kAfterCorr, .jobs = {JobId(7), JobId(9)}, .delay = Seconds(300)};
}

SignalSpec FullSignalSpec() {
  return SignalSpec{.signal = 10, .before = Seconds(120), .batch_only = true};
}

ContainerSpec FullContainerSpec() {
  return ContainerSpec{.image = "nvcr.io#nvidia/pytorch:24.05-py3",
                       .mounts = {"/data:/data:ro", "/scratch:/scratch"},
                       .workdir = "/workspace",
                       .name = "train",
                       .env = {"WANDB_API_KEY", "HF_HOME"},
                       .mount_home = false};
}

JobSpec FullJobSpec() {
  JobSpec s;
  s.name = "llama-finetune";
  s.user = "alice";
  s.uid = 1001;
  s.gid = 1002;
  s.account = "nlp";
  s.qos = "high";
  s.partitions = {"h100", "a100"};
  s.script = "#!/bin/bash\nsrun python train.py --lr 3e-4 \"$@\"\n\techo \xc3\xa9t\xc3\xa9\n";
  s.resources = FullResourceRequest();
  s.time_limit = Seconds(2 * 86400 + 3600);
  s.working_dir = "/home/alice/llama";
  s.environment = {{"PATH", "/usr/bin:/bin"}, {"NCCL_DEBUG", "INFO"}, {"EMPTY", ""}};
  s.stdout_path = "logs/%x-%j.out";
  s.stderr_path = "logs/%x-%j.err";
  s.append_output = true;
  s.requeue = true;
  s.nice = -5;
  s.hold = true;
  s.begin_time = At(3600);
  s.dependencies = {FullDependency(), Dependency{.type = DependencyType::kSingleton}};
  s.dependency_any = true;
  s.signal = FullSignalSpec();
  s.container = FullContainerSpec();
  s.comment = "sweep 3/10";
  s.reservation = "maint";
  s.mail_type = "END,FAIL";
  s.mail_user = "alice@example.org";
  s.submit_host = "login1";
  s.submit_dir = "/home/alice";
  s.array = "0-99%10";
  s.command = "/home/alice/llama/train.sh";
  s.script_args = {"--lr", "3e-4", ""};
  s.stdin_path = "/home/alice/llama/input.txt";
  return s;
}

NodeAllocation FullNodeAllocation(uint32_t i) {
  return NodeAllocation{
      .node = NodeId(i + 1),
      .node_name = "gpu0" + std::to_string(i + 1),
      .cpus = 48,
      .mem_mb = 256'000,
      .gpus = GpuSet((1ULL << 0) | (1ULL << 2) | (1ULL << 60) | (1ULL << 61) | (1ULL << 63))};
}

Allocation FullAllocation() {
  return Allocation{.generation = Generation(77),
                    .nodes = {FullNodeAllocation(0), FullNodeAllocation(1)}};
}

JobUsage FullJobUsage() {
  return JobUsage{.gpu_seconds = 123456.5,
                  .gpu_util_mean = 87.25,
                  .gpu_util_max = 100,
                  .gpu_mem_max_mb = 79'000,
                  .energy_joules = 1.5e9,
                  .cpu_seconds = 0.1,
                  .max_rss_mb = 123'456};
}

Job FullJob() {
  Job j;
  j.id = JobId(4242);
  j.spec = FullJobSpec();
  j.state = JobState::kOutOfMemory;
  j.reason = "OutOfMemory";
  j.submit_time = At(0);
  j.eligible_time = At(10);
  j.start_time = At(20);
  j.end_time = At(30);
  j.time_limit = Seconds(7200);
  j.partition = "h100";
  j.exit_code = 137;
  j.exit_signal = 9;
  j.restart_count = 2;
  j.allocation = FullAllocation();
  j.array_job_id = JobId(4200);
  j.array_task_id = 42;
  j.last_checkpoint = At(25);
  j.usage = FullJobUsage();
  return j;
}

GpuInfo FullGpuInfo(uint32_t i) {
  return GpuInfo{.index = i,
                 .uuid = "GPU-5a1b2c3d-0000-1111-2222-33334444555" + std::to_string(i),
                 .model = "h100",
                 .memory_mb = 81'559,
                 .nvlink_peers = {(i + 1) % 8, (i + 2) % 8},
                 .numa_node = 1};
}

NodeInventory FullNodeInventory() {
  NodeInventory n;
  n.name = "gpu01";
  n.address = "http://10.0.0.11:7001";
  n.cpus = 112;
  n.memory_mb = 2'063'000;
  n.gpus = {FullGpuInfo(1), FullGpuInfo(2)};  // index 0 is a default value
  n.features = {"ib", "h100", "nvswitch"};
  n.numa_nodes = 2;
  n.gpu_backend = "nvml";
  n.driver_version = "550.54.15";
  n.cuda_version = "12.4";
  n.agent_version = "0.1.0";
  return n;
}

Node FullNode() {
  Node n;
  n.id = NodeId(3);
  n.inventory = FullNodeInventory();
  n.registered = true;
  n.responding = true;
  n.drain = true;
  n.powered_down = true;
  n.reason = "xid 79 on GPU 3";
  n.reason_time = At(-60);
  n.last_heartbeat = At(-1);
  n.failed_gpus = GpuSet(0b1000);
  return n;
}

Partition FullPartition() {
  return Partition{.name = "h100",
                   .nodes = {"gpu[01-16]", "gpu99"},
                   .is_default = true,
                   .up = false,
                   .default_time = Seconds(3600),
                   .max_time = Seconds(7 * 86400),
                   .max_gpus_per_job = 64,
                   .max_nodes_per_job = 8,
                   .priority_tier = 3,
                   .def_mem_per_cpu_mb = 8192,
                   .allowed_accounts = {"nlp", "vision"}};
}

SubmitResponse FullSubmitResponse() {
  return SubmitResponse{.job_id = JobId(100), .task_ids = {JobId(100), JobId(101), JobId(102)}};
}

JobInfo FullJobInfo() {
  return JobInfo{
      .job = FullJob(), .reason_detail = "waiting for 8 h100 GPUs", .estimated_start = At(7200),
      .priority = 4242};
}

NodeInfo FullNodeInfo() {
  return NodeInfo{.node = FullNode(),
                  .state = NodeState::kDraining,
                  .alloc_cpus = 96,
                  .alloc_mem_mb = 1'000'000,
                  .alloc_gpus = GpuSet(0b0111),
                  .jobs = {JobId(4242), JobId(4243)},
                  .partitions = {"h100", "all"},
                  .gpu_problems = {{.gpu = 3, .reason = "XID 79 (GPU has fallen off the bus)", .latched = true},
                                   {.gpu = 5, .reason = "temperature 97 C over 90 C"}},
                  .node_problem = "health script: ERROR: nhc: /scratch is full"};
}

PartitionInfo FullPartitionInfo() {
  return PartitionInfo{
      .partition = FullPartition(), .total_cpus = 1792, .total_gpus = 128, .alloc_gpus = 40};
}

DrainRequest FullDrainRequest() { return DrainRequest{.reason = "replace GPU 3"}; }

RunningJobRef FullRunningJobRef(uint64_t i) {
  return RunningJobRef{.job = JobId(4242 + i), .generation = Generation(77 + i)};
}

RegisterRequest FullRegisterRequest() {
  return RegisterRequest{.inventory = FullNodeInventory(),
                         .running = {FullRunningJobRef(0), FullRunningJobRef(1)}};
}

RegisterResponse FullRegisterResponse() {
  return RegisterResponse{
      .node_id = NodeId(3), .heartbeat_interval = Seconds(15), .kill = {FullRunningJobRef(5)},
      .cluster_name = "selene"};
}

HeartbeatRequest FullHeartbeatRequest() {
  return HeartbeatRequest{.node = "gpu01",
                          .running = {FullRunningJobRef(0)},
                          .gpu_samples = {{.gpu = 3,
                                           .job = JobId(4242),
                                           .time = Timestamp(Duration(1'764'620'000'123'456)),
                                           .utilization = 87.5,
                                           .memory_used_mb = 9216,
                                           .power_watts = 412.25,
                                           .energy_mj = 123'456'789'012}},
                          .gpu_problems = {{.gpu = 2, .reason = "row remapping failed", .latched = false},
                                           {.gpu = 7, .reason = "XID 48 (double-bit ECC error)", .latched = true}},
                          .node_problem = "cannot read the GPUs",
                          .auto_resume = true};
}

HeartbeatResponse FullHeartbeatResponse() {
  return HeartbeatResponse{.reregister = true, .kill = {FullRunningJobRef(2)}, .clear_gpus = {1, 6}};
}

JobEvent FullJobEvent() {
  return JobEvent{.type = JobEventType::kLaunchFailed,
                  .job = JobId(4242),
                  .generation = Generation(77),
                  .time = At(40),
                  .exit_code = 1,
                  .signal = 15,
                  .timed_out = true,
                  .cancelled = true,
                  .out_of_memory = true,
                  .message = "exec /bin/bash: permission denied",
                  .usage = FullJobUsage(),
                  .step = 3,
                  .task = 5,
                  .master_port = 29542,
                  .gpu_failure = "gpu 3: XID 79 (GPU has fallen off the bus)"};
}

InjectRequest FullInjectRequest() {
  return InjectRequest{.gpu = 3,
                       .xid = 79,
                       .ecc_uncorrectable = 2,
                       .temperature_c = 91.5,
                       .power_watts = 650,
                       .utilization = 87.5,
                       .memory_used_mb = 40000,
                       .row_remap_failure = true,
                       .vanished = false,
                       .clear = true};
}

JobEventsRequest FullJobEventsRequest() {
  JobEvent started{
      .type = JobEventType::kStarted, .job = JobId(1), .generation = Generation(2), .time = At(1)};
  return JobEventsRequest{.node = "gpu01", .events = {FullJobEvent(), started}};
}

LaunchRequest FullLaunchRequest() {
  return LaunchRequest{
      .job = FullJob(), .controller_url = "http://ctl:6817", .job_credential = "a.b.c"};
}

SignalRequest FullSignalRequest() {
  return SignalRequest{.job = JobId(4242), .generation = Generation(77), .signal = 10, .batch_only = true};
}

StepSpec FullStepSpec() {
  return StepSpec{.argv = {"python3", "train.py", "--lr=3e-4"},
                  .working_dir = "/home/alice/run",
                  .environment = {{"OMP_NUM_THREADS", "8"}},
                  .nodes = 2,
                  .ntasks = 16,
                  .ntasks_per_node = 8,
                  .cpus_per_task = 4,
                  .gpus_per_task = 1,
                  .overcommit = true,
                  .kill_on_bad_exit = true,
                  .stdout_path = "out-%t.log",
                  .stderr_path = "err-%t.log",
                  .io_node = "gpu01",
                  .io_port = 40123,
                  .io_token = "0123abcd",
                  .master_port = 29542,
                  .container = FullContainerSpec()};
}

StepTask FullStepTask() {
  return StepTask{.rank = 9, .node_rank = 1, .local_rank = 1, .node = "gpu02", .gpus = GpuSet(0b110)};
}

StepLayout FullStepLayout() {
  return StepLayout{.nodes = {"gpu01", "gpu02"}, .tasks_per_node = {8, 8}, .tasks = {FullStepTask()},
                    .cpus_per_task = 4};
}

StepInfo FullStepInfo() {
  return StepInfo{.job = JobId(4242),
                  .step = 3,
                  .generation = Generation(77),
                  .state = JobState::kFailed,
                  .reason = "task 9 on gpu02: exited with code 2",
                  .argv = {"python3", "train.py"},
                  .master_addr = "10.0.0.1",
                  .master_port = 29542,
                  .nodes = {"gpu01", "gpu02"},
                  .tasks_per_node = {8, 8},
                  .cpus_per_task = 4,
                  .kill_on_bad_exit = true,
                  .container = FullContainerSpec(),
                  .start_time = At(50),
                  .end_time = At(60),
                  .exit_code = 2,
                  .tasks = {StepTaskInfo{.task = FullStepTask(), .ended = true, .exit_code = 2,
                                         .signal = 9, .message = "could not start"}}};
}

StepLaunchRequest FullStepLaunchRequest() {
  return StepLaunchRequest{.job = FullJob(),
                           .step = 3,
                           .spec = FullStepSpec(),
                           .layout = FullStepLayout(),
                           .master_addr = "10.0.0.1",
                           .master_port = 29542,
                           .io_url = "http://10.0.0.1:40123",
                           .controller_url = "http://ctl:6817",
                           .job_credential = "a.b.c"};
}

StepSignalRequest FullStepSignalRequest() {
  return StepSignalRequest{.job = JobId(4242), .generation = Generation(77), .step = 3, .signal = 10};
}

CancelRequest FullCancelRequest() {
  return CancelRequest{.job = JobId(4242), .generation = Generation(77)};
}

TimeLimitRequest FullTimeLimitRequest() {
  return TimeLimitRequest{
      .job = JobId(4242), .generation = Generation(77), .time_limit = Seconds(5400)};
}

// --- Round trips ------------------------------------------------------------------------------

template <typename T, typename Enc, typename Dec>
void ExpectRoundTrip(const T& value, Enc encode, Dec decode) {
  std::string json = encode(value);
  auto decoded = decode(json);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message << "\n" << json;
  EXPECT_EQ(*decoded, value) << json;
  EXPECT_EQ(encode(*decoded), json) << "re-encoding differs";
}

TEST(JsonCodecTest, JobSpecRoundTrips) {
  ExpectRoundTrip(FullJobSpec(), EncodeJobSpec, DecodeJobSpec);
  ExpectRoundTrip(JobSpec{}, EncodeJobSpec, DecodeJobSpec);
  JobSpec unlimited = FullJobSpec();
  unlimited.time_limit = kUnlimited;
  ExpectRoundTrip(unlimited, EncodeJobSpec, DecodeJobSpec);
}

TEST(JsonCodecTest, SubmitResponseRoundTrips) {
  ExpectRoundTrip(FullSubmitResponse(), EncodeSubmitResponse, DecodeSubmitResponse);
}

TEST(JsonCodecTest, JobInfoRoundTrips) {
  ExpectRoundTrip(FullJobInfo(), EncodeJobInfo, DecodeJobInfo);
  ExpectRoundTrip(JobInfo{}, EncodeJobInfo, DecodeJobInfo);
}

TEST(JsonCodecTest, JobInfoListRoundTrips) {
  std::vector<JobInfo> jobs = {FullJobInfo(), JobInfo{}, FullJobInfo()};
  jobs[2].job.id = JobId(std::numeric_limits<uint64_t>::max());
  jobs[2].job.array_task_id = 0;
  ExpectRoundTrip(jobs, EncodeJobInfoList, DecodeJobInfoList);
  ExpectRoundTrip(std::vector<JobInfo>{}, EncodeJobInfoList, DecodeJobInfoList);
}

TEST(JsonCodecTest, NodeInfoRoundTrips) {
  ExpectRoundTrip(FullNodeInfo(), EncodeNodeInfo, DecodeNodeInfo);
  ExpectRoundTrip(std::vector<NodeInfo>{FullNodeInfo(), NodeInfo{}}, EncodeNodeInfoList,
                  DecodeNodeInfoList);
}

TEST(JsonCodecTest, PartitionInfoListRoundTrips) {
  PartitionInfo unlimited;
  unlimited.partition.name = "debug";
  ExpectRoundTrip(std::vector<PartitionInfo>{FullPartitionInfo(), unlimited},
                  EncodePartitionInfoList, DecodePartitionInfoList);
}

TEST(JsonCodecTest, AgentMessagesRoundTrip) {
  ExpectRoundTrip(FullDrainRequest(), EncodeDrainRequest, DecodeDrainRequest);
  ExpectRoundTrip(FullRegisterRequest(), EncodeRegisterRequest, DecodeRegisterRequest);
  ExpectRoundTrip(FullRegisterResponse(), EncodeRegisterResponse, DecodeRegisterResponse);
  ExpectRoundTrip(FullHeartbeatRequest(), EncodeHeartbeatRequest, DecodeHeartbeatRequest);
  ExpectRoundTrip(FullHeartbeatResponse(), EncodeHeartbeatResponse, DecodeHeartbeatResponse);
  ExpectRoundTrip(FullInjectRequest(), EncodeInjectRequest, DecodeInjectRequest);
  ExpectRoundTrip(InjectRequest{.gpu = 1, .xid = 48}, EncodeInjectRequest, DecodeInjectRequest);
  ExpectRoundTrip(FullJobEventsRequest(), EncodeJobEventsRequest, DecodeJobEventsRequest);
  ExpectRoundTrip(FullLaunchRequest(), EncodeLaunchRequest, DecodeLaunchRequest);
  ExpectRoundTrip(FullSignalRequest(), EncodeSignalRequest, DecodeSignalRequest);
  ExpectRoundTrip(FullCancelRequest(), EncodeCancelRequest, DecodeCancelRequest);
  ExpectRoundTrip(FullTimeLimitRequest(), EncodeTimeLimitRequest, DecodeTimeLimitRequest);
  ExpectRoundTrip(
      TimeLimitRequest{.job = JobId(1), .generation = Generation(2), .time_limit = kUnlimited},
      EncodeTimeLimitRequest, DecodeTimeLimitRequest);
}

TEST(JsonCodecTest, StringMapRoundTripsInOrder) {
  std::vector<std::pair<std::string, std::string>> kv = {
      {"ok", "true"}, {"b", "2"}, {"a \"quoted\" key", "line\nbreak"}};
  ExpectRoundTrip(kv, EncodeStringMap, DecodeStringMap);
  EXPECT_EQ(EncodeStringMap({{"ok", "true"}}), R"({"ok":"true"})");
}

// Removes each object member of `json` in turn (at any depth; in arrays, from the first
// element) and checks that the decoded message then differs from `full`: every field is filled
// with a non-default value by the helpers above, and every field written is read back.
template <typename T, typename Dec>
void ExpectEveryFieldMatters(const T& full, const std::string& json, Dec decode) {
  using Json = nlohmann::ordered_json;
  Json doc = Json::parse(json);
  int checked = 0;
  std::function<void(Json&, const std::string&)> visit = [&](Json& node, const std::string& at) {
    if (node.is_array()) {  // only the first element is a `Full*` value; others show defaults
      if (!node.empty()) visit(node[0], at + "[0]");
      return;
    }
    if (!node.is_object()) return;
    std::vector<std::string> keys;
    for (auto& [k, v] : node.items()) keys.push_back(k);
    for (const std::string& key : keys) {
      Json saved = node[key];
      node.erase(key);
      auto decoded = decode(doc.dump());
      ASSERT_TRUE(decoded.has_value()) << at << "." << key << ": " << decoded.error().message;
      EXPECT_NE(*decoded, full) << "removing " << at << "." << key << " changed nothing";
      ++checked;
      node[key] = saved;
      visit(node[key], at + "." + key);
    }
  };
  visit(doc, "");
  EXPECT_GT(checked, 0);
}

TEST(JsonCodecTest, EveryFieldIsWrittenAndRead) {
  // `environment` is a map, not a message: its entries are data, not fields.
  JobSpec spec = FullJobSpec();
  spec.environment = {{"A", "1"}};
  ExpectEveryFieldMatters(spec, EncodeJobSpec(spec), DecodeJobSpec);
  JobInfo info = FullJobInfo();
  info.job.spec = spec;
  ExpectEveryFieldMatters(info, EncodeJobInfo(info), DecodeJobInfo);
  ExpectEveryFieldMatters(FullNodeInfo(), EncodeNodeInfo(FullNodeInfo()), DecodeNodeInfo);
  std::vector<PartitionInfo> parts = {FullPartitionInfo()};
  ExpectEveryFieldMatters(parts, EncodePartitionInfoList(parts), DecodePartitionInfoList);
  ExpectEveryFieldMatters(FullJobEventsRequest(), EncodeJobEventsRequest(FullJobEventsRequest()),
                          DecodeJobEventsRequest);
  ExpectEveryFieldMatters(FullRegisterResponse(), EncodeRegisterResponse(FullRegisterResponse()),
                          DecodeRegisterResponse);
  ExpectEveryFieldMatters(FullHeartbeatResponse(), EncodeHeartbeatResponse(FullHeartbeatResponse()),
                          DecodeHeartbeatResponse);
  ExpectEveryFieldMatters(FullInjectRequest(), EncodeInjectRequest(FullInjectRequest()), DecodeInjectRequest);
  ExpectEveryFieldMatters(FullSignalRequest(), EncodeSignalRequest(FullSignalRequest()),
                          DecodeSignalRequest);
  ExpectEveryFieldMatters(FullTimeLimitRequest(), EncodeTimeLimitRequest(FullTimeLimitRequest()),
                          DecodeTimeLimitRequest);
  ExpectEveryFieldMatters(FullSubmitResponse(), EncodeSubmitResponse(FullSubmitResponse()),
                          DecodeSubmitResponse);
}

TEST(JsonCodecTest, StepMessagesRoundTripAndEveryFieldMatters) {
  ExpectRoundTrip(FullStepSpec(), EncodeStepSpec, DecodeStepSpec);
  ExpectRoundTrip(FullStepInfo(), EncodeStepInfo, DecodeStepInfo);
  ExpectRoundTrip(std::vector<StepInfo>{FullStepInfo(), StepInfo{}}, EncodeStepInfoList, DecodeStepInfoList);
  ExpectRoundTrip(FullStepLaunchRequest(), EncodeStepLaunchRequest, DecodeStepLaunchRequest);
  ExpectRoundTrip(FullStepSignalRequest(), EncodeStepSignalRequest, DecodeStepSignalRequest);
  StepSpec spec = FullStepSpec();
  ExpectEveryFieldMatters(spec, EncodeStepSpec(spec), DecodeStepSpec);
  ExpectEveryFieldMatters(FullStepInfo(), EncodeStepInfo(FullStepInfo()), DecodeStepInfo);
  ExpectEveryFieldMatters(FullStepSignalRequest(), EncodeStepSignalRequest(FullStepSignalRequest()),
                          DecodeStepSignalRequest);
  // Requests are strict, answers lenient.
  EXPECT_EQ(DecodeStepSpec(R"({"argv":["x"],"ntask":2})").error().message, "unknown field \"ntask\"");
  EXPECT_TRUE(DecodeStepInfo(R"({"job":1,"newer_field":true})").has_value());
  EXPECT_THAT(EncodeStepInfo(FullStepInfo()), HasSubstr(R"("tasks":[{"rank":9,"node_rank":1,)"));
  JobEvent task{.type = JobEventType::kTaskExited, .step = 1, .task = 2};
  auto back = DecodeJobEventsRequest(EncodeJobEventsRequest({.node = "n", .events = {task}}));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->events[0].type, JobEventType::kTaskExited);
  EXPECT_THAT(EncodeJobEventsRequest({.events = {task}}), HasSubstr(R"("type":"TASK_EXITED")"));
}

#if defined(__x86_64__) && defined(__GLIBCXX__) && !defined(_GLIBCXX_DEBUG)
// A field added to a message or model type must be added to its `Fields` in json_codec.cc and
// to its `Full*` helper above. Sizes are ABI-specific, so this only runs on x86-64 libstdc++
// (what the project builds on); a new field that fits in padding goes unnoticed.
TEST(JsonCodecTest, MessageTypesHaveTheFieldsTheCodecKnows) {
  EXPECT_EQ(sizeof(ResourceRequest), 184u)
      << "ResourceRequest changed: update json_codec.cc and FullResourceRequest";
  EXPECT_EQ(sizeof(Dependency), 40u)
      << "Dependency changed: update json_codec.cc and FullDependency";
  EXPECT_EQ(sizeof(SignalSpec), 24u)
      << "SignalSpec changed: update json_codec.cc and FullSignalSpec";
  EXPECT_EQ(sizeof(ContainerSpec), 152u)
      << "ContainerSpec changed: update json_codec.cc and FullContainerSpec";
  EXPECT_EQ(sizeof(JobSpec), 1080u) << "JobSpec changed: update json_codec.cc and FullJobSpec";
  EXPECT_EQ(sizeof(NodeAllocation), 64u)
      << "NodeAllocation changed: update json_codec.cc and FullNodeAllocation";
  EXPECT_EQ(sizeof(Allocation), 32u)
      << "Allocation changed: update json_codec.cc and FullAllocation";
  EXPECT_EQ(sizeof(JobUsage), 56u) << "JobUsage changed: update json_codec.cc and FullJobUsage";
  EXPECT_EQ(sizeof(Job), 1328u) << "Job changed: update json_codec.cc and FullJob";
  EXPECT_EQ(sizeof(GpuInfo), 112u) << "GpuInfo changed: update json_codec.cc and FullGpuInfo";
  EXPECT_EQ(sizeof(NodeInventory), 264u)
      << "NodeInventory changed: update json_codec.cc and FullNodeInventory";
  EXPECT_EQ(sizeof(Node), 336u) << "Node changed: update json_codec.cc and FullNode";
  EXPECT_EQ(sizeof(Partition), 128u) << "Partition changed: update json_codec.cc and FullPartition";
  EXPECT_EQ(sizeof(SubmitResponse), 32u)
      << "SubmitResponse changed: update json_codec.cc and FullSubmitResponse";
  EXPECT_EQ(sizeof(JobInfo), 1376u) << "JobInfo changed: update json_codec.cc and FullJobInfo";
  EXPECT_EQ(sizeof(NodeInfo), 464u) << "NodeInfo changed: update json_codec.cc and FullNodeInfo";
  EXPECT_EQ(sizeof(PartitionInfo), 144u)
      << "PartitionInfo changed: update json_codec.cc and FullPartitionInfo";
  EXPECT_EQ(sizeof(DrainRequest), 32u)
      << "DrainRequest changed: update json_codec.cc and FullDrainRequest";
  EXPECT_EQ(sizeof(RunningJobRef), 16u)
      << "RunningJobRef changed: update json_codec.cc and FullRunningJobRef";
  EXPECT_EQ(sizeof(RegisterRequest), 288u)
      << "RegisterRequest changed: update json_codec.cc and FullRegisterRequest";
  EXPECT_EQ(sizeof(RegisterResponse), 72u)
      << "RegisterResponse changed: update json_codec.cc and FullRegisterResponse";
  EXPECT_EQ(sizeof(HeartbeatRequest), 144u)
      << "HeartbeatRequest changed: update json_codec.cc and FullHeartbeatRequest";
  EXPECT_EQ(sizeof(HeartbeatResponse), 56u)
      << "HeartbeatResponse changed: update json_codec.cc and FullHeartbeatResponse";
  EXPECT_EQ(sizeof(JobEvent), 184u) << "JobEvent changed: update json_codec.cc and FullJobEvent";
  EXPECT_EQ(sizeof(JobEventsRequest), 56u)
      << "JobEventsRequest changed: update json_codec.cc and FullJobEventsRequest";
  EXPECT_EQ(sizeof(LaunchRequest), 1392u)
      << "LaunchRequest changed: update json_codec.cc and FullLaunchRequest";
  EXPECT_EQ(sizeof(SignalRequest), 24u)
      << "SignalRequest changed: update json_codec.cc and FullSignalRequest";
  EXPECT_EQ(sizeof(InjectRequest), 104u)
      << "InjectRequest changed: update json_codec.cc and FullInjectRequest";
  EXPECT_EQ(sizeof(CancelRequest), 16u)
      << "CancelRequest changed: update json_codec.cc and FullCancelRequest";
  EXPECT_EQ(sizeof(StepSpec), 424u) << "StepSpec changed: update json_codec.cc and FullStepSpec";
  EXPECT_EQ(sizeof(StepTask), 56u) << "StepTask changed: update json_codec.cc and FullStepTask";
  EXPECT_EQ(sizeof(StepLayout), 80u) << "StepLayout changed: update json_codec.cc and FullStepLayout";
  EXPECT_EQ(sizeof(StepTaskInfo), 104u) << "StepTaskInfo changed: update json_codec.cc and FullStepInfo";
  EXPECT_EQ(sizeof(StepInfo), 384u) << "StepInfo changed: update json_codec.cc and FullStepInfo";
  EXPECT_EQ(sizeof(StepLaunchRequest), 1976u)
      << "StepLaunchRequest changed: update json_codec.cc and FullStepLaunchRequest";
  EXPECT_EQ(sizeof(StepSignalRequest), 24u)
      << "StepSignalRequest changed: update json_codec.cc and FullStepSignalRequest";
}
#endif

// --- The wire form ----------------------------------------------------------------------------

TEST(JsonCodecTest, WritesFieldsInDeclarationOrderCompactly) {
  EXPECT_EQ(EncodeSignalRequest(FullSignalRequest()),
            R"({"job":4242,"generation":77,"signal":10,"batch_only":true})");
  EXPECT_EQ(EncodeCancelRequest(CancelRequest{}), R"({"job":0,"generation":0})");
  EXPECT_EQ(EncodeRegisterResponse(FullRegisterResponse()),
            R"({"node_id":3,"heartbeat_interval":15,"kill":[{"job":4247,"generation":82}],"cluster_name":"selene"})");
  EXPECT_EQ(EncodeJobInfoList({}), R"({"jobs":[]})");
  EXPECT_EQ(EncodeNodeInfoList({}), R"({"nodes":[]})");
  EXPECT_EQ(EncodePartitionInfoList({}), R"({"partitions":[]})");
}

TEST(JsonCodecTest, EncodingIsDeterministic) {
  JobInfo a = FullJobInfo();
  JobInfo b = FullJobInfo();
  // The environment map is written in key order whatever the insertion order.
  b.job.spec.environment.clear();
  b.job.spec.environment["PATH"] = "/usr/bin:/bin";
  b.job.spec.environment["EMPTY"] = "";
  b.job.spec.environment["NCCL_DEBUG"] = "INFO";
  EXPECT_EQ(EncodeJobInfo(a), EncodeJobInfo(b));
  EXPECT_THAT(
      EncodeJobSpec(a.job.spec),
      HasSubstr(R"("environment":{"EMPTY":"","NCCL_DEBUG":"INFO","PATH":"/usr/bin:/bin"})"));
}

TEST(JsonCodecTest, WritesTimesDurationsGpusAndStatesInTheDocumentedForms) {
  std::string json = EncodeJobInfo(FullJobInfo());
  EXPECT_THAT(json, StartsWith(R"({"id":4242,"spec":{"name":"llama-finetune",)"));
  EXPECT_THAT(json, HasSubstr(R"("submit_time":"2026-11-29T16:51:03.000123Z")"));
  EXPECT_THAT(json, HasSubstr(R"("state":"OUT_OF_MEMORY")"));
  EXPECT_THAT(json, HasSubstr(R"("time_limit":7200,)"));
  EXPECT_THAT(json, HasSubstr(R"("time_limit":176400,)"));
  EXPECT_THAT(json, HasSubstr(R"("gpus":[0,2,60,61,63])"));
  EXPECT_THAT(json, HasSubstr(R"("type":"aftercorr","jobs":[7,9],"delay":300)"));
  EXPECT_THAT(json, HasSubstr(R"("type":"singleton","jobs":[],"delay":0)"));
  EXPECT_THAT(json, HasSubstr(R"("array_task_id":42,)"));
  EXPECT_THAT(json, HasSubstr(R"("gpu_util_mean":87.25,)"));
  EXPECT_THAT(json, HasSubstr(R"("cpu_seconds":0.1,)"));
  EXPECT_THAT(json, HasSubstr(R"("energy_joules":1.5e+09,)"));
  EXPECT_THAT(json,
              HasSubstr(R"("script":"#!/bin/bash\nsrun python train.py --lr 3e-4 \"$@\"\n\techo )"
                        "\xc3\xa9t\xc3\xa9\\n\""));

  std::string empty = EncodeJobInfo(JobInfo{});
  EXPECT_THAT(empty, HasSubstr(R"("submit_time":null)"));
  EXPECT_THAT(empty, HasSubstr(R"("estimated_start":null)"));
  EXPECT_THAT(empty, HasSubstr(R"("time_limit":null)"));  // the spec's: unset
  EXPECT_THAT(empty, HasSubstr(R"("array_task_id":null)"));
  EXPECT_THAT(empty, HasSubstr(R"("state":"PENDING")"));

  PartitionInfo p;
  EXPECT_THAT(EncodePartitionInfoList({p}),
              HasSubstr(R"("default_time":"UNLIMITED","max_time":"UNLIMITED")"));

  EXPECT_THAT(EncodeNodeInfo(FullNodeInfo()), HasSubstr(R"("state":"DRAINING","alloc_cpus":96,)"));
  JobEventsRequest events = FullJobEventsRequest();
  EXPECT_THAT(EncodeJobEventsRequest(events), HasSubstr(R"({"type":"LAUNCH_FAILED",)"));
  EXPECT_THAT(EncodeJobEventsRequest(events), HasSubstr(R"({"type":"STARTED",)"));
}

TEST(JsonCodecTest, TimestampsBeforeTheEpochAndAtTheLimits) {
  JobEventsRequest r;
  r.events.push_back(JobEvent{.time = FromMicros(-1)});
  std::string json = EncodeJobEventsRequest(r);
  EXPECT_THAT(json, HasSubstr(R"("time":"1969-12-31T23:59:59.999999Z")"));
  auto back = DecodeJobEventsRequest(json);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->events[0].time, FromMicros(-1));

  // Outside RFC 3339's years 0000-9999 a timestamp is clamped, so that it stays readable.
  r.events[0].time = Timestamp::max();
  json = EncodeJobEventsRequest(r);
  EXPECT_THAT(json, HasSubstr(R"("time":"9999-12-31T23:59:59.999999Z")"));
  ASSERT_TRUE(DecodeJobEventsRequest(json).has_value());
  r.events[0].time = Timestamp::min();
  json = EncodeJobEventsRequest(r);
  EXPECT_THAT(json, HasSubstr(R"("time":"0000-01-01T00:00:00.000000Z")"));
  ASSERT_TRUE(DecodeJobEventsRequest(json).has_value());
}

TEST(JsonCodecTest, EncodesInvalidUtf8AsReplacementCharacters) {
  JobSpec s;
  s.name = "bad\xff\xc3(byte";
  s.comment = std::string("nul\0ctl\x01", 8);
  std::string json = EncodeJobSpec(s);
  EXPECT_THAT(json, HasSubstr("\"name\":\"bad\xEF\xBF\xBD\xEF\xBF\xBD(byte\""));
  EXPECT_THAT(json, HasSubstr(R"("comment":"nul\u0000ctl\u0001")"));
  auto back = DecodeJobSpec(json);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->name, "bad\xEF\xBF\xBD\xEF\xBF\xBD(byte");
  EXPECT_EQ(back->comment, s.comment);
}

TEST(JsonCodecTest, NonFiniteUsageIsWrittenAsZero) {
  JobEvent e;
  e.usage.gpu_util_mean = std::numeric_limits<double>::quiet_NaN();
  e.usage.energy_joules = std::numeric_limits<double>::infinity();
  auto back = DecodeJobEventsRequest(EncodeJobEventsRequest(JobEventsRequest{.events = {e}}));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->events[0].usage.gpu_util_mean, 0);
  EXPECT_EQ(back->events[0].usage.energy_joules, 0);
}

// --- Lenient input forms ----------------------------------------------------------------------

TEST(JsonCodecTest, JobSpecMayOmitAnyField) {
  auto spec = DecodeJobSpec(R"({"script":"#!/bin/sh\necho hi\n"})");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  JobSpec expected;
  expected.script = "#!/bin/sh\necho hi\n";
  EXPECT_EQ(*spec, expected);
  EXPECT_EQ(spec->resources.nodes, 1u);
  EXPECT_TRUE(spec->container.mount_home);

  auto empty = DecodeJobSpec(" { } ");
  ASSERT_TRUE(empty.has_value()) << empty.error().message;
  EXPECT_EQ(*empty, JobSpec{});

  auto partial = DecodeJobSpec(R"({"resources":{"gpus":4},"container":{"image":"ubuntu"}})");
  ASSERT_TRUE(partial.has_value()) << partial.error().message;
  EXPECT_EQ(partial->resources.gpus, 4u);
  EXPECT_EQ(partial->resources.ntasks, 1u);
  EXPECT_TRUE(partial->container.mount_home);
}

TEST(JsonCodecTest, FieldsMayComeInAnyOrder) {
  auto r = DecodeSignalRequest(R"({"signal":15,"job":3,"generation":9})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, (SignalRequest{.job = JobId(3), .generation = Generation(9), .signal = 15}));
}

TEST(JsonCodecTest, TimeLimitsAcceptSlurmDurations) {
  struct Case {
    std::string json;
    std::optional<Duration> want;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"time_limit":3600})", Seconds(3600)},
           {R"({"time_limit":"1:00:00"})", Seconds(3600)},
           {R"({"time_limit":"90"})", Minutes(90)},  // a bare Slurm number is minutes
           {R"({"time_limit":"2-12"})", Seconds(2 * 86400 + 12 * 3600)},
           {R"({"time_limit":"UNLIMITED"})", kUnlimited},
           {R"({"time_limit":"infinite"})", kUnlimited},
           {R"({"time_limit":null})", std::nullopt},
           {R"({"time_limit":0})", Seconds(0)},
       }) {
    auto spec = DecodeJobSpec(c.json);
    ASSERT_TRUE(spec.has_value()) << c.json << ": " << spec.error().message;
    EXPECT_EQ(spec->time_limit, c.want) << c.json;
  }
  auto parts = DecodePartitionInfoList(
      R"({"partitions":[{"name":"p","default_time":"30:00","max_time":"7-00:00:00"}]})");
  ASSERT_TRUE(parts.has_value()) << parts.error().message;
  EXPECT_EQ((*parts)[0].partition.default_time, Minutes(30));
  EXPECT_EQ((*parts)[0].partition.max_time, Seconds(7 * 86400));
}

TEST(JsonCodecTest, OtherDurationsAreSecondsOrUnlimited) {
  auto r = DecodeRegisterResponse(R"({"heartbeat_interval":"UNLIMITED"})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->heartbeat_interval, kUnlimited);
  auto bad = DecodeRegisterResponse(R"({"heartbeat_interval":"1:00"})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(
      bad.error().message,
      R"(field "heartbeat_interval": expected a non-negative integer (seconds) or "UNLIMITED", got "1:00")");
}

TEST(JsonCodecTest, TimestampsAcceptRfc3339Forms) {
  struct Case {
    std::string text;
    int64_t micros;
  };
  const int64_t base = 1'795'971'063'000'000;  // 2026-11-29T16:51:03Z
  for (const Case& c : std::vector<Case>{
           {"2026-11-29T16:51:03Z", base},
           {"2026-11-29t16:51:03z", base},
           {"2026-11-29T16:51:03.5Z", base + 500'000},
           {"2026-11-29T16:51:03.000123Z", base + 123},
           {"2026-11-29T16:51:03.123456789Z", base + 123'456},
           {"2026-11-29T17:51:03+01:00", base},
           {"2026-11-29T14:21:03-02:30", base},
           {"1970-01-01T00:00:00Z", 0},
           {"2024-02-29T00:00:00Z", 1'709'164'800'000'000},
       }) {
    std::string json = R"({"time":")" + c.text + R"("})";
    auto r = DecodeJobEventsRequest(R"({"events":[)" + json + "]}");
    ASSERT_TRUE(r.has_value()) << c.text << ": " << r.error().message;
    EXPECT_EQ(ToMicros(r->events[0].time), c.micros) << c.text;
  }
  for (std::string bad : {"2026-11-29", "2026-11-29T16:51:03", "2026-13-01T00:00:00Z",
                          "2026-02-29T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T16:51:60Z",
                          "2026-11-29T16:51:03.Z", "2026-11-29T16:51:03+0100",
                          "2026-11-29 16:51:03Z", "2026-11-29T16:51:03Zjunk", "1795971063"}) {
    auto r = DecodeJobEventsRequest(R"({"events":[{"time":")" + bad + R"("}]})");
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(r.error().message, StartsWith(R"(field "events[0].time": expected an RFC 3339)"))
        << bad;
  }
}

TEST(JsonCodecTest, JobStatesAcceptSlurmNamesAndCodes) {
  for (auto [text, want] :
       std::vector<std::pair<std::string, JobState>>{{"RUNNING", JobState::kRunning},
                                                     {"cancelled", JobState::kCancelled},
                                                     {"CD", JobState::kCompleted},
                                                     {"NODE_FAIL", JobState::kNodeFail}}) {
    auto j = DecodeJobInfo(R"({"state":")" + text + R"("})");
    ASSERT_TRUE(j.has_value()) << text << ": " << j.error().message;
    EXPECT_EQ(j->job.state, want) << text;
  }
}

TEST(JsonCodecTest, ResponsesIgnoreUnknownFields) {
  auto j = DecodeJobInfoList(
      R"({"jobs":[{"id":5,"new_field":{"nested":[1,2]},"spec":{"future":true,"name":"x"}}],"total":1})");
  ASSERT_TRUE(j.has_value()) << j.error().message;
  ASSERT_EQ(j->size(), 1u);
  EXPECT_EQ((*j)[0].job.id, JobId(5));
  EXPECT_EQ((*j)[0].job.spec.name, "x");
  auto missing = DecodeNodeInfoList("{}");
  ASSERT_TRUE(missing.has_value());
  EXPECT_TRUE(missing->empty());
  // Unknown fields are skipped, wrong types are not.
  auto wrong = DecodeJobInfo(R"({"id":"5"})");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().message, R"(field "id": expected a non-negative integer, got "5")");
}

TEST(JsonCodecTest, TenMegabyteScriptIsAccepted) {
  JobSpec s;
  s.script = "#!/bin/sh\n" + std::string(10 * 1024 * 1024, 'x') + "\n";
  auto back = DecodeJobSpec(EncodeJobSpec(s));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->script, s.script);
}

// --- Strict decoding errors -------------------------------------------------------------------

// Decodes `json` as a JobSpec and returns the error message; fails the test on success or on a
// code other than kInvalidArgument.
std::string SpecError(std::string_view json) {
  auto r = DecodeJobSpec(json);
  if (r.has_value()) {
    ADD_FAILURE() << "decoded: " << json;
    return "";
  }
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << r.error().message;
  return r.error().message;
}

TEST(JsonCodecTest, RejectsMalformedJsonSayingWhere) {
  EXPECT_THAT(SpecError(R"({"name": "x",})"),
              StartsWith("invalid JSON: parse error at line 1, column 14"));
  EXPECT_THAT(SpecError("{\n  \"name\": x\n}"), StartsWith("invalid JSON: parse error at line 2"));
  EXPECT_THAT(SpecError(""), StartsWith("invalid JSON: "));
  EXPECT_THAT(SpecError(R"({"name":"x"} trailing)"), StartsWith("invalid JSON: parse error"));
  EXPECT_THAT(SpecError(R"({"name":"unterminated)"), StartsWith("invalid JSON: parse error"));
  EXPECT_EQ(SpecError(R"({"name":"x","name":"y"})"), R"(invalid JSON: duplicate key "name")");
  EXPECT_EQ(SpecError(R"({"dependencies":[{},{"jobs":[],"type":"after","jobs":[1]}]})"),
            R"(invalid JSON: duplicate key "dependencies[1].jobs")");
  // The parser's own words, without escaping.
  EXPECT_EQ(SpecError(R"({"a" 1})"),
            "invalid JSON: parse error at line 1, column 6: syntax error while parsing object "
            "separator - unexpected number literal; expected ':'");
  EXPECT_THAT(SpecError(R"({"nice":1e999})"), StartsWith("invalid JSON: "));
}

TEST(JsonCodecTest, RejectsNonObjectTopLevel) {
  EXPECT_EQ(SpecError("[]"), "top level: expected an object, got an array");
  EXPECT_EQ(SpecError("42"), "top level: expected an object, got 42");
  EXPECT_EQ(SpecError("null"), "top level: expected an object, got null");
  EXPECT_EQ(SpecError(R"("script")"), R"(top level: expected an object, got "script")");
}

TEST(JsonCodecTest, RejectsUnknownFieldsNamingThePath) {
  EXPECT_EQ(SpecError(R"({"resources":{"gpu":1}})"), R"(unknown field "resources.gpu")");
  EXPECT_EQ(SpecError(R"({"scirpt":""})"), R"(unknown field "scirpt")");
  EXPECT_EQ(SpecError(R"({"dependencies":[{"type":"afterok"},{"jobz":[1]}]})"),
            R"(unknown field "dependencies[1].jobz")");
  auto launch = DecodeLaunchRequest(R"({"job":{"spec":{"container":{"imag":"x"}}}})");
  ASSERT_FALSE(launch.has_value());
  EXPECT_EQ(launch.error().message, R"(unknown field "job.spec.container.imag")");
  // A response field is not a request field: JobInfo's extras are unknown in a LaunchRequest.
  launch = DecodeLaunchRequest(R"({"job":{"reason_detail":"x"}})");
  ASSERT_FALSE(launch.has_value());
  EXPECT_EQ(launch.error().message, R"(unknown field "job.reason_detail")");
}

TEST(JsonCodecTest, RejectsWrongTypesNamingThePath) {
  EXPECT_EQ(SpecError(R"({"resources":{"gpus":-1}})"),
            R"(field "resources.gpus": expected a non-negative integer, got -1)");
  EXPECT_EQ(SpecError(R"({"resources":{"gpus":1.5}})"),
            R"(field "resources.gpus": expected a non-negative integer, got 1.5)");
  EXPECT_EQ(SpecError(R"({"resources":{"gpus":2.0}})"),
            R"(field "resources.gpus": expected a non-negative integer, got 2.0)");
  EXPECT_EQ(SpecError(R"({"resources":{"gpus":"4"}})"),
            R"(field "resources.gpus": expected a non-negative integer, got "4")");
  EXPECT_EQ(SpecError(R"({"name":7})"), R"(field "name": expected a string, got 7)");
  EXPECT_EQ(SpecError(R"({"name":null})"), R"(field "name": expected a string, got null)");
  EXPECT_EQ(SpecError(R"({"hold":"yes"})"), R"(field "hold": expected true or false, got "yes")");
  EXPECT_EQ(SpecError(R"({"hold":1})"), R"(field "hold": expected true or false, got 1)");
  EXPECT_EQ(SpecError(R"({"partitions":"a100"})"),
            R"(field "partitions": expected an array, got "a100")");
  EXPECT_EQ(SpecError(R"({"partitions":["a100",3]})"),
            R"(field "partitions[1]": expected a string, got 3)");
  EXPECT_EQ(SpecError(R"({"resources":[]})"),
            R"(field "resources": expected an object, got an array)");
  EXPECT_EQ(SpecError(R"({"nice":"high"})"), R"(field "nice": expected an integer, got "high")");
  EXPECT_EQ(
      SpecError(R"({"begin_time":12345})"),
      R"(field "begin_time": expected an RFC 3339 UTC timestamp ("2026-11-29T16:51:03.000123Z") or null, got 12345)");
  EXPECT_EQ(SpecError(R"({"dependencies":[{"type":"afterok","jobs":[{}]}]})"),
            R"(field "dependencies[0].jobs[0]": expected a non-negative integer, got an object)");
  auto usage = DecodeJobEventsRequest(R"({"events":[{"usage":{"gpu_seconds":"1"}}]})");
  ASSERT_FALSE(usage.has_value());
  EXPECT_EQ(usage.error().message,
            R"(field "events[0].usage.gpu_seconds": expected a number, got "1")");
}

TEST(JsonCodecTest, RejectsNumbersOutOfRangeForTheField) {
  EXPECT_EQ(SpecError(R"({"uid":4294967296})"),
            R"(field "uid": 4294967296 is out of range (max 4294967295))");
  EXPECT_EQ(SpecError(R"({"nice":2147483648})"),
            R"(field "nice": 2147483648 is out of range (max 2147483647))");
  EXPECT_EQ(SpecError(R"({"nice":-2147483649})"),
            R"(field "nice": -2147483649 is out of range (min -2147483648))");
  EXPECT_EQ(
      SpecError(R"({"resources":{"mem_per_node_mb":18446744073709551616}})"),
      R"(field "resources.mem_per_node_mb": expected a non-negative integer, got 18446744073709551616)");
  EXPECT_EQ(SpecError(R"({"time_limit":9223372036855})"),
            R"(field "time_limit": 9223372036855 is out of range (max 9223372036854))");
  EXPECT_EQ(
      SpecError(R"({"time_limit":-60})"),
      R"(field "time_limit": expected a non-negative integer (seconds), "UNLIMITED" or a Slurm time, got -60)");
  auto ok =
      DecodeJobSpec(R"({"resources":{"mem_per_node_mb":18446744073709551615},"nice":-2147483648})");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->resources.mem_per_node_mb, std::numeric_limits<uint64_t>::max());
  auto node = DecodeRegisterResponse(R"({"node_id":4294967296})");
  ASSERT_FALSE(node.has_value());
  EXPECT_EQ(node.error().message,
            R"(field "node_id": 4294967296 is out of range (max 4294967295))");
}

TEST(JsonCodecTest, RejectsBadGpuIndices) {
  auto launch = [](std::string gpus) {
    return DecodeLaunchRequest(R"({"job":{"allocation":{"nodes":[{"gpus":)" + gpus + "}]}}}");
  };
  auto ok = launch("[63,0,7]");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->job.allocation.nodes[0].gpus.ToString(), "0,7,63");
  auto r = launch("[0,64]");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            R"(field "job.allocation.nodes[0].gpus[1]": GPU index 64 is out of range (max 63))");
  r = launch("[3,3]");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, R"(field "job.allocation.nodes[0].gpus[1]": duplicate GPU index 3)");
  r = launch("[-1]");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(
      r.error().message,
      R"(field "job.allocation.nodes[0].gpus[0]": expected a GPU index (a non-negative integer), got -1)");
  r = launch("3");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            R"(field "job.allocation.nodes[0].gpus": expected an array of GPU indices, got 3)");
  auto reg = DecodeRegisterRequest(R"({"inventory":{"gpus":[{"index":0,"nvlink_peers":[1,99]}]}})");
  ASSERT_FALSE(reg.has_value());
  EXPECT_EQ(reg.error().message,
            R"(field "inventory.gpus[0].nvlink_peers[1]": GPU index 99 is out of range (max 63))");
  reg = DecodeRegisterRequest(R"({"inventory":{"gpus":[{"index":64}]}})");
  ASSERT_FALSE(reg.has_value());
  EXPECT_EQ(reg.error().message,
            R"(field "inventory.gpus[0].index": GPU index 64 is out of range (max 63))");
}

TEST(JsonCodecTest, RejectsInvalidEnumNames) {
  auto r = DecodeLaunchRequest(R"({"job":{"state":"RUNNNING"}})");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, R"(field "job.state": unknown job state "RUNNNING")");
  r = DecodeLaunchRequest(R"({"job":{"state":1}})");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, R"(field "job.state": expected a string, got 1)");
  EXPECT_EQ(SpecError(R"({"dependencies":[{"type":"before"}]})"),
            R"(field "dependencies[0].type": unknown dependency type "before")");
  auto e = DecodeJobEventsRequest(R"({"events":[{"type":"EXPLODED"}]})");
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().message, R"(field "events[0].type": unknown job event type "EXPLODED")");
  auto n = DecodeNodeInfo(R"({"state":"ON_FIRE"})");
  ASSERT_FALSE(n.has_value());
  EXPECT_EQ(n.error().message, R"(field "state": unknown node state "ON_FIRE")");
}

TEST(JsonCodecTest, RejectsInvalidDurationStringsWithTheParsersMessage) {
  std::string message = ParseSlurmDuration("1:xx").error().message;
  EXPECT_EQ(SpecError(R"({"time_limit":"1:xx"})"), R"(field "time_limit": )" + message);
  EXPECT_EQ(SpecError(R"({"time_limit":""})"),
            R"(field "time_limit": )" + ParseSlurmDuration("").error().message);
  EXPECT_EQ(
      SpecError(R"({"time_limit":true})"),
      R"(field "time_limit": expected a non-negative integer (seconds), "UNLIMITED" or a Slurm time, got true)");
  EXPECT_EQ(
      SpecError(R"({"signal":{"before":"5"}})"),
      R"(field "signal.before": expected a non-negative integer (seconds) or "UNLIMITED", got "5")");
}

TEST(JsonCodecTest, RejectsNonStringEnvironmentValues) {
  EXPECT_EQ(SpecError(R"({"environment":{"OMP_NUM_THREADS":8}})"),
            R"(field "environment.OMP_NUM_THREADS": expected a string, got 8)");
  EXPECT_EQ(SpecError(R"({"environment":{"A":"1","B":null}})"),
            R"(field "environment.B": expected a string, got null)");
  EXPECT_EQ(SpecError(R"({"environment":["A=1"]})"),
            R"(field "environment": expected an object of strings, got an array)");
}

TEST(JsonCodecTest, RejectsDeepNestingWithoutRecursing) {
  // Far deeper than any stack would survive if the parser or decoder recursed per level.
  const size_t depth = 1'000'000;
  std::string arrays = std::string(depth, '[') + std::string(depth, ']');
  EXPECT_EQ(SpecError(arrays), "invalid JSON: nested deeper than 64 levels");
  std::string objects;
  for (size_t i = 0; i < 200'000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(200'000, '}');
  EXPECT_EQ(SpecError(objects), "invalid JSON: nested deeper than 64 levels");
  // Unterminated garbage too.
  EXPECT_EQ(SpecError(R"({"script":)" + std::string(depth, '[')),
            "invalid JSON: nested deeper than 64 levels");

  // 64 levels are fine (lenient decoding skips the unknown field); 65 are not.
  auto nested = [](size_t levels) {  // the top-level object is level 1
    return R"({"x":)" + std::string(levels - 1, '[') + std::string(levels - 1, ']') + "}";
  };
  auto ok = DecodeJobInfo(nested(64));
  EXPECT_TRUE(ok.has_value()) << ok.error().message;
  auto too_deep = DecodeJobInfo(nested(65));
  ASSERT_FALSE(too_deep.has_value());
  EXPECT_EQ(too_deep.error().message, "invalid JSON: nested deeper than 64 levels");
}

TEST(JsonCodecTest, RejectsInvalidUtf8) {
  std::string message = SpecError("{\"script\":\"bad \xff byte\"}");
  EXPECT_THAT(message, StartsWith("invalid JSON: parse error at line 1, column 16"));
  EXPECT_THAT(message, HasSubstr("UTF-8"));
  // The message itself stays valid UTF-8: the raw byte is shown escaped.
  EXPECT_EQ(message.find('\xff'), std::string::npos);
  EXPECT_THAT(SpecError("{\"scr\xc3\":1}"), StartsWith("invalid JSON: "));
  EXPECT_THAT(SpecError(R"({"script":"\ud800"})"), StartsWith("invalid JSON: "));  // lone surrogate
  // Escaped non-ASCII is fine.
  auto ok = DecodeJobSpec(R"({"name":"\u00e9t\u00e9 \ud83d\ude80"})");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->name, "\xc3\xa9t\xc3\xa9 \xf0\x9f\x9a\x80");
}

TEST(JsonCodecTest, ErrorMessagesQuoteLongValuesShortly) {
  std::string long_value(1000, 'y');
  std::string message = SpecError(R"({"uid":")" + long_value + R"("})");
  EXPECT_EQ(message, R"(field "uid": expected a non-negative integer, got ")" +
                         std::string(40, 'y') + R"(...")");
}

TEST(JsonCodecTest, StringMapRejectsNonStrings) {
  auto r = DecodeStringMap(R"({"ok":true})");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message, R"(field "ok": expected a string, got true)");
  r = DecodeStringMap("[]");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "top level: expected an object, got an array");
}

TEST(JsonCodecTest, WhyAndPriorityRoundTrip) {
  WhyInfo w{.job = JobId(7),
            .state = JobState::kPending,
            .reason = "AssocGrpGRES",
            .detail = "account nlp at its GPU limit 64/64",
            .estimated_start = FromMicros(1'800'000'000'000'001),
            .priority = 4242,
            .blockers = {{.code = "AssocGrpGRES", .detail = "d", .scope = "account", .entity = "nlp",
                          .resource = "gpu", .used = 64, .limit = 64, .requested = 8,
                          .jobs = {JobId(3), JobId(4)}},
                         {.code = "Dependency", .jobs = {JobId(2)}}}};
  auto w2 = DecodeWhyInfo(EncodeWhyInfo(w));
  ASSERT_TRUE(w2.has_value()) << w2.error().message;
  EXPECT_EQ(*w2, w);
  std::vector<PriorityInfo> list = {
      {.job = JobId(1), .user = "u", .account = "a", .qos = "q", .age = 0.25, .fairshare = 0.5,
       .job_size = 0.125, .partition = 1, .qos_factor = 0.75, .age_points = 1, .fairshare_points = 2,
       .job_size_points = 3, .partition_points = 4, .qos_points = 5, .nice = -3, .priority_tier = 2,
       .priority = 18}};
  auto l2 = DecodePriorityList(EncodePriorityList(list));
  ASSERT_TRUE(l2.has_value()) << l2.error().message;
  EXPECT_EQ(*l2, list);
}

}  // namespace
}  // namespace corral::api
