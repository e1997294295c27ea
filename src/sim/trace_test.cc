#include "sim/trace.h"

#include <gtest/gtest.h>

namespace corral::sim {
namespace {

TEST(TraceTest, ParsesAndSortsBySubmitThenId) {
  auto t = ParseTraceCsv(
      "job_id,submit_time_s,duration_s,num_gpus,user,queue\n"
      "# a comment\n"
      "7,10,100,2,alice,vc1\n"
      "\n"
      "3,10,5.5,1,bob,vc2\n"
      "9,0,1,8,carol,vc1\n");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->jobs[0].job_id, 9u);
  EXPECT_EQ(t->jobs[1].job_id, 3u);
  EXPECT_EQ(t->jobs[1].duration, Millis(5500));
  EXPECT_EQ(t->jobs[2].job_id, 7u);
  EXPECT_EQ(t->jobs[2].submit, Seconds(10));
  EXPECT_EQ(t->jobs[2].num_gpus, 2u);
  EXPECT_EQ(t->jobs[2].user, "alice");
  EXPECT_EQ(t->jobs[2].queue, "vc1");
  EXPECT_FALSE(t->jobs[2].time_limit.has_value());
}

TEST(TraceTest, OptionalColumnsInAnyOrderAndUnknownOnesIgnored) {
  auto t = ParseTraceCsv(
      "queue,user,extra,num_gpus,duration_s,submit_time_s,job_id,time_limit_s,num_nodes,gpu_type,"
      "account\n"
      "vc,u,x,16,100,0,1,3600,2,a100,acct\n"
      "vc,u,y,1,100,0,2,,,,\n");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->jobs[0].time_limit, Seconds(3600));
  EXPECT_EQ(t->jobs[0].num_nodes, 2u);
  EXPECT_EQ(t->jobs[0].gpu_type, "a100");
  EXPECT_EQ(t->jobs[0].account, "acct");
  EXPECT_FALSE(t->jobs[1].time_limit.has_value());
  EXPECT_EQ(t->jobs[1].num_nodes, 0u);
}

TEST(TraceTest, RejectsBadInputNamingLineAndColumn) {
  auto err = [](const std::string& text) {
    auto t = ParseTraceCsv(text, "t.csv");
    return t.has_value() ? std::string("ok") : t.error().message;
  };
  const std::string h = "job_id,submit_time_s,duration_s,num_gpus,user,queue\n";
  EXPECT_EQ(err("job_id,submit_time_s,duration_s,num_gpus,user\n1,0,1,1,u\n"),
            "t.csv:1: missing column queue (required: "
            "job_id,submit_time_s,duration_s,num_gpus,user,queue)");
  EXPECT_EQ(err(h + "1,0,x,1,u,q\n"), "t.csv:2: duration_s: not a number of seconds \"x\"");
  EXPECT_EQ(err(h + "1,0,0,1,u,q\n"), "t.csv:2: duration_s: must be > 0");
  EXPECT_EQ(err(h + "1,-5,1,1,u,q\n"), "t.csv:2: submit_time_s: negative");
  EXPECT_EQ(err(h + "1,0,1,0,u,q\n"), "t.csv:2: num_gpus: must be in [1, 1000000]");
  EXPECT_EQ(err(h + "1,0,1,1,u,q\n1,0,1,1,u,q\n"), "t.csv:3: job_id 1 given twice");
  EXPECT_EQ(err(h + "1,0,1,1,u\n"), "t.csv:2: expected 6 cells, found 5");
  EXPECT_EQ(err(h + "1,0,1,1,\"u\",q\n"), "t.csv:2: quoted cells are not supported");
  EXPECT_EQ(err(h), "t.csv: no jobs");
  EXPECT_EQ(err("job_id,submit_time_s,duration_s,num_gpus,user,queue,num_nodes\n1,0,1,6,u,q,4\n"),
            "t.csv:2: num_nodes: must divide num_gpus 6");
}

TEST(TraceTest, FormatRoundTrips) {
  auto t = ParseTraceCsv(
      "job_id,submit_time_s,duration_s,num_gpus,user,queue,time_limit_s,num_nodes,gpu_type,"
      "account\n"
      "1,0,100,16,u,q,3600,2,a100,acct\n"
      "2,0.5,2.25,1,v,q,,,,\n");
  ASSERT_TRUE(t.has_value());
  std::string text = FormatTraceCsv(*t);
  EXPECT_EQ(text,
            "job_id,submit_time_s,duration_s,num_gpus,user,queue,time_limit_s,num_nodes,gpu_type,"
            "account\n"
            "1,0,100,16,u,q,3600,2,a100,acct\n"
            "2,0.500000,2.250000,1,v,q,,,,\n");
  auto again = ParseTraceCsv(text);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *t);
}

TEST(TraceTest, ParsesTheSharedTracesHeader) {
  auto t = ParseTraceCsv(
      "job_id,submit_time_s,duration_s,num_gpus,user,queue\r\n31566,0,2240194,8,unknown,"
      "7f04ca\r\n");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(t->jobs[0].queue, "7f04ca");
}

}  // namespace
}  // namespace corral::sim
