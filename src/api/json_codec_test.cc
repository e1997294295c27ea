#include "api/json_codec.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/diag.h"
#include "api/job_stats.h"
#include "api/messages.h"
#include "api/testing/full_messages.h"
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

using namespace fixtures;  // NOLINT: the Full* values of every message

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

TEST(JsonCodecTest, DiagInfoRoundTrips) {
  DiagInfo d{.now = At(40),
             .since = At(1),
             .server_threads = 3,
             .jobs_submitted = 2,
             .jobs_started = 4,
             .jobs_completed = 5,
             .jobs_canceled = 6,
             .jobs_failed = 7,
             .jobs_pending = 8,
             .jobs_running = 9,
             .cycles = 10,
             .last_cycle_seconds = 0.5,
             .max_cycle_seconds = 1.25,
             .total_cycle_seconds = 7.75,
             .examined_total = 11,
             .last_queue_length = 12,
             .last_examined = 13,
             .backfilled_total = 14,
             .last_backfilled = 15,
             .last_reservations = 16,
             .last_pass_time = At(39),
             .routes = {{"POST", "/api/v1/jobs/{id}/suspend", 15, 0.010136}},
             .users = {{"root", 0, 49, 0.046756}, {"agent:node01", 4294967295u, 3, 0.5}}};
  ExpectRoundTrip(d, EncodeDiagInfo, DecodeDiagInfo);
  ExpectRoundTrip(DiagInfo{}, EncodeDiagInfo, DecodeDiagInfo);
}

TEST(JsonCodecTest, JobStatsRoundTripAndBcastQueriesAreChecked) {
  NodeRunStats n{.node = "node01", .job = JobId(12), .generation = Generation(3),
                 .tasks = {{.step = 0, .task = 1, .pids = {4242, 4243}, .cpu_seconds = 1.5,
                            .rss_kb = 64600, .max_rss_kb = 64608, .vmsize_kb = 67772,
                            .max_vmsize_kb = 70000, .pages = 2, .read_bytes = 1685837,
                            .write_bytes = 1696}},
                 .cgroup = true, .cgroup_memory_kb = 70000, .cgroup_memory_peak_kb = 80000,
                 .cgroup_cpu_seconds = 2.25, .cgroup_pids = 3,
                 .gpus = {{.index = 1, .utilization = 87.5, .memory_used_mb = 40960}},
                 .error = "late"};
  ExpectRoundTrip(n, EncodeNodeRunStats, DecodeNodeRunStats);
  JobStatsInfo info{.job = JobId(12), .generation = Generation(3), .nodes = {n, n}};
  ExpectRoundTrip(info, EncodeJobStatsInfo, DecodeJobStatsInfo);
  BcastOptions o{.path = "/tmp/a b&c", .mode = 0750, .force = true, .atime = 10, .mtime = 20};
  std::map<std::string, std::string> query;
  for (const std::string& kv : {std::string("path=/tmp/a b&c"), std::string("mode=488"),
                                std::string("force=1"), std::string("atime=10"),
                                std::string("mtime=20")}) {
    query[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  }
  auto back = DecodeBcastQuery(query);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, o);
  EXPECT_NE(EncodeBcastQuery(o).find("path=%2Ftmp%2Fa%20b%26c"), std::string::npos)
      << EncodeBcastQuery(o);
  query["mode"] = "4095";  // setuid bits: refused
  EXPECT_FALSE(DecodeBcastQuery(query).has_value());
  query["mode"] = "488";
  query["uid"] = "0";  // not the caller's to say
  EXPECT_FALSE(DecodeBcastQuery(query).has_value());
  EXPECT_TRUE(DecodeBcastQuery(query, {"uid"}).has_value());
  EXPECT_FALSE(DecodeBcastQuery({{"mode", "488"}}).has_value());  // no path
}

TEST(JsonCodecTest, SubmitResponseRoundTrips) {
  ExpectRoundTrip(FullSubmitResponse(), EncodeSubmitResponse, DecodeSubmitResponse);
}

TEST(JsonCodecTest, JobInfoRoundTrips) {
  ExpectRoundTrip(FullJobInfo(), EncodeJobInfo, DecodeJobInfo);
  ExpectRoundTrip(JobInfo{}, EncodeJobInfo, DecodeJobInfo);
}

// A timeline's marks keep their microseconds; unset marks are null and read back unset.
TEST(JsonCodecTest, JobTimelineRoundTrip) {
  JobTimeline t{.job = JobId(42), .run = Generation(7), .restart_count = 2, .state = "RUNNING"};
  t.trace.submitted = At(0) + Duration(11);
  t.trace.committed = At(0) + Duration(1'512);
  t.trace.launch_sent = At(1) + Duration(3);
  t.trace.agent.exec = At(2) + Duration(999'999);
  ExpectRoundTrip(t, EncodeJobTimeline, DecodeJobTimeline);
  ExpectRoundTrip(JobTimeline{}, EncodeJobTimeline, DecodeJobTimeline);
  std::string text = EncodeJobTimeline(t);
  EXPECT_NE(text.find("\"scheduled\":null"), std::string::npos) << text;
  EXPECT_NE(text.find(".000134Z\""), std::string::npos) << text;  // At(0) is .000123
}

TEST(JsonCodecTest, GpuStatsAndWasteReportRoundTrip) {
  GpuStatsInfo s{.job = JobId(42),
                 .gpus = {{.node = "gpu01",
                           .gpu = 3,
                           .model = "h100",
                           .memory_mb = 81920,
                           .samples = 360,
                           .util_mean = 4.25,
                           .util_max = 87.5,
                           .idle_fraction = 0.95,
                           .mem_max_mb = 9216,
                           .power_max_watts = 412.5,
                           .energy_joules = 123456.75,
                           .bucket_width = Seconds(20),
                           .buckets = {{.start = At(60),
                                        .samples = 4,
                                        .util_mean = 12.5,
                                        .util_max = 50,
                                        .mem_max_mb = 9000,
                                        .energy_joules = 2800.5}}}},
                 .waste_flagged = At(3600),
                 .waste_note = "GPU gpu01:3 under 5% utilisation for 30m"};
  ExpectRoundTrip(s, EncodeGpuStatsInfo, DecodeGpuStatsInfo);
  ExpectRoundTrip(GpuStatsInfo{}, EncodeGpuStatsInfo, DecodeGpuStatsInfo);
  WasteReport r{.since = At(0),
                .threshold = 5,
                .users = {{.name = "alice", .jobs = 3, .flagged = 1, .gpu_hours = 24.5,
                           .wasted_gpu_hours = 8.25}},
                .accounts = {{.name = "physics", .jobs = 3, .gpu_hours = 24.5}}};
  ExpectRoundTrip(r, EncodeWasteReport, DecodeWasteReport);
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
  EXPECT_EQ(sizeof(JobSpec), 1024u) << "JobSpec changed: update json_codec.cc and FullJobSpec";
  EXPECT_EQ(sizeof(NodeAllocation), 64u)
      << "NodeAllocation changed: update json_codec.cc and FullNodeAllocation";
  EXPECT_EQ(sizeof(Allocation), 64u)
      << "Allocation changed: update json_codec.cc and FullAllocation";
  EXPECT_EQ(sizeof(JobUsage), 56u) << "JobUsage changed: update json_codec.cc and FullJobUsage";
  // `trace` (88 bytes) is not in the job's JSON: GET /api/v1/jobs/{id}/timeline serves it.
  EXPECT_EQ(sizeof(Job), 1392u) << "Job changed: update json_codec.cc and FullJob";
  EXPECT_EQ(sizeof(GpuInfo), 112u) << "GpuInfo changed: update json_codec.cc and FullGpuInfo";
  EXPECT_EQ(sizeof(NodeInventory), 264u)
      << "NodeInventory changed: update json_codec.cc and FullNodeInventory";
  EXPECT_EQ(sizeof(Node), 336u) << "Node changed: update json_codec.cc and FullNode";
  EXPECT_EQ(sizeof(Partition), 200u) << "Partition changed: update json_codec.cc and FullPartition";
  EXPECT_EQ(sizeof(SubmitResponse), 32u)
      << "SubmitResponse changed: update json_codec.cc and FullSubmitResponse";
  EXPECT_EQ(sizeof(JobInfo), 1472u) << "JobInfo changed: update json_codec.cc and FullJobInfo";
  EXPECT_EQ(sizeof(NodeInfo), 464u) << "NodeInfo changed: update json_codec.cc and FullNodeInfo";
  EXPECT_EQ(sizeof(PartitionInfo), 216u)
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
  EXPECT_EQ(sizeof(JobEvent), 224u) << "JobEvent changed: update json_codec.cc and FullJobEvent";
  EXPECT_EQ(sizeof(JobEventsRequest), 56u)
      << "JobEventsRequest changed: update json_codec.cc and FullJobEventsRequest";
  EXPECT_EQ(sizeof(LaunchRequest), 1456u)
      << "LaunchRequest changed: update json_codec.cc and FullLaunchRequest";
  EXPECT_EQ(sizeof(SignalRequest), 24u)
      << "SignalRequest changed: update json_codec.cc and FullSignalRequest";
  EXPECT_EQ(sizeof(InjectRequest), 104u)
      << "InjectRequest changed: update json_codec.cc and FullInjectRequest";
  EXPECT_EQ(sizeof(CancelRequest), 16u)
      << "CancelRequest changed: update json_codec.cc and FullCancelRequest";
  EXPECT_EQ(sizeof(StepSpec), 488u) << "StepSpec changed: update json_codec.cc and FullStepSpec";
  EXPECT_EQ(sizeof(StepTask), 56u) << "StepTask changed: update json_codec.cc and FullStepTask";
  EXPECT_EQ(sizeof(StepLayout), 80u) << "StepLayout changed: update json_codec.cc and FullStepLayout";
  EXPECT_EQ(sizeof(StepTaskInfo), 104u) << "StepTaskInfo changed: update json_codec.cc and FullStepInfo";
  EXPECT_EQ(sizeof(StepInfo), 384u) << "StepInfo changed: update json_codec.cc and FullStepInfo";
  EXPECT_EQ(sizeof(StepLaunchRequest), 2104u)
      << "StepLaunchRequest changed: update json_codec.cc and FullStepLaunchRequest";
  EXPECT_EQ(sizeof(StepSignalRequest), 32u)
      << "StepSignalRequest changed: update json_codec.cc and FullStepSignalRequest";
}
#endif


}  // namespace
}  // namespace corral::api
