// The codecs' wire forms, lenient input forms and strict decoding errors (json_codec_test.cc
// has the round trips).
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
// --- The wire form ----------------------------------------------------------------------------

TEST(JsonCodecTest, WritesFieldsInDeclarationOrderCompactly) {
  EXPECT_EQ(EncodeSignalRequest(FullSignalRequest()),
            R"({"job":4242,"generation":77,"signal":10,"batch_only":true,"suspend":true})");
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
  b.job.spec.environment.Mutable()["PATH"] = "/usr/bin:/bin";
  b.job.spec.environment.Mutable()["EMPTY"] = "";
  b.job.spec.environment.Mutable()["NCCL_DEBUG"] = "INFO";
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
