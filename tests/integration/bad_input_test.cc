// Bad input over the wire: every malformed or impossible request gets a 4xx whose message
// names the field and the reason, and changes nothing; no request crashes the controller.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/json_codec.h"
#include "tests/integration/test_cluster.h"

namespace corral::testing {
namespace {

class BadInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new TestCluster({.nodes = 1, .gpus_per_node = 4});
    ASSERT_TRUE(cluster_->Start().has_value()) << cluster_->ControllerLog();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  size_t JobCount() {
    auto jobs = cluster_->ListJobs("?all=1");
    EXPECT_TRUE(jobs.has_value());
    return jobs ? jobs->size() : 0;
  }

  // POSTs `body` to /api/v1/jobs and expects `status` with `needle` in the message.
  void ExpectRejected(const std::string& body, int status, const std::string& needle) {
    size_t before = JobCount();
    auto r = cluster_->Request("POST", "/api/v1/jobs", body);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->status, status) << body << "\n" << r->body;
    EXPECT_NE(r->body.find(needle), std::string::npos) << "body: " << body << "\nanswer: " << r->body;
    EXPECT_EQ(JobCount(), before) << body;
  }

  static TestCluster* cluster_;
};

TestCluster* BadInputTest::cluster_ = nullptr;

const std::string kScript = R"("script":"#!/bin/sh\nexit 0\n","working_dir":"/tmp")";

TEST_F(BadInputTest, MalformedJson) {
  ExpectRejected("{\"script\": ", 400, "INVALID_ARGUMENT");
  ExpectRejected("[1,2,3]", 400, "INVALID_ARGUMENT");
  ExpectRejected("", 400, "INVALID_ARGUMENT");
  ExpectRejected(std::string(100000, '['), 400, "INVALID_ARGUMENT");
}

TEST_F(BadInputTest, UnknownFields) {
  ExpectRejected("{" + kScript + ",\"gpuz\":1}", 400, "unknown field \\\"gpuz\\\"");
  ExpectRejected("{" + kScript + ",\"resources\":{\"gpu\":1}}", 400, "unknown field \\\"resources.gpu\\\"");
}

TEST_F(BadInputTest, ZeroOrNegativeResources) {
  ExpectRejected("{" + kScript + ",\"resources\":{\"nodes\":0}}", 400, "resources.nodes: must be at least 1");
  ExpectRejected("{" + kScript + ",\"resources\":{\"ntasks\":0}}", 400, "resources.ntasks: must be at least 1");
  ExpectRejected("{" + kScript + ",\"resources\":{\"gpus\":-1}}", 400, "resources.gpus");
  ExpectRejected("{" + kScript + ",\"resources\":{\"cpus_per_task\":0}}", 400, "cpus_per_task");
}

TEST_F(BadInputTest, MoreGpusThanAnyNodeHas) {
  ExpectRejected("{" + kScript + ",\"resources\":{\"gpus_per_node\":5}}", 400,
                 "5 GPUs per node requested, but no node of partition \\\"main\\\" has more than 4");
}

TEST_F(BadInputTest, UnknownPartition) {
  ExpectRejected("{" + kScript + ",\"partitions\":[\"nope\"]}", 400, "partition: no such partition \\\"nope\\\"");
}

TEST_F(BadInputTest, UnparsableDuration) {
  ExpectRejected("{" + kScript + ",\"time_limit\":\"ten minutes\"}", 400, "time_limit");
  ExpectRejected("{" + kScript + ",\"time_limit\":\"ten minutes\"}", 400, "invalid time");
}

TEST_F(BadInputTest, ScriptProblems) {
  ExpectRejected(R"({"script":"echo no shebang\n"})", 400, "the first line must start with #!");
  ExpectRejected(R"({"working_dir":"/tmp"})", 400, "script: empty");
}

TEST_F(BadInputTest, AuthenticationIsRequired) {
  auto r = cluster_->Request("POST", "/api/v1/jobs", "{" + kScript + "}", /*auth=*/false);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(JobCount(), 0u);
}

TEST_F(BadInputTest, BadIdsAndUnknownThings) {
  auto r = cluster_->Request("GET", "/api/v1/jobs/abc", "");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400);
  r = cluster_->Request("GET", "/api/v1/jobs/999999", "");
  EXPECT_EQ(r->status, 404);
  r = cluster_->Request("POST", "/api/v1/nodes/nosuchnode/drain", R"({"reason":"x"})");
  EXPECT_EQ(r->status, 404);
  r = cluster_->Request("GET", "/api/v1/jobs?state=SLEEPING", "");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("SLEEPING"), std::string::npos);
}

TEST_F(BadInputTest, GarbageOnTheSocketDoesNotHurtTheController) {
  // Raw garbage, a truncated request and an absurd Content-Length, on separate connections.
  std::string port = cluster_->url().substr(cluster_->url().rfind(':') + 1);
  for (std::string payload : {std::string("\x01\x02\xff garbage\r\n\r\n", 15),
                              std::string("POST /api/v1/jobs HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"scr"),
                              std::string("POST /api/v1/jobs HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n")}) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_GT(write(fd, payload.data(), payload.size()), 0);
    shutdown(fd, SHUT_WR);
    char buf[4096];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    close(fd);
  }
  auto r = cluster_->Request("GET", "/api/v1/health", "", false);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(JobCount(), 0u);
}

}  // namespace
}  // namespace corral::testing
