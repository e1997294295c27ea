#include "cli/internal/timeline_view.h"

#include <gtest/gtest.h>

namespace corral::cli::internal {
namespace {

TEST(TimelineViewTest, DurationsInTheirUnit) {
  EXPECT_EQ(FormatTraceDuration(Duration(0)), "0 us");
  EXPECT_EQ(FormatTraceDuration(Duration(87)), "87 us");
  EXPECT_EQ(FormatTraceDuration(Duration(1234)), "1.234 ms");
  EXPECT_EQ(FormatTraceDuration(Duration(2'500'000)), "2.500 s");
  EXPECT_EQ(FormatTraceDuration(Duration(-1500)), "-1.500 ms");  // clocks of two hosts
}

// Every mark on its own line, in the order they happened, with its clock; the time since the
// submission and since the mark before; marks not reached yet come last, with "-".
TEST(TimelineViewTest, MarksInPathOrderWithSteps) {
  const Timestamp t0 = FromMicros(1'796'219'401'000'000);  // 2026-12-02T13:50:01Z
  api::JobTimeline t{.job = JobId(42), .run = Generation(7), .state = "RUNNING"};
  t.trace.submitted = t0;
  t.trace.committed = t0 + Duration(1544);
  t.trace.scheduled = t0 + Duration(1200);  // placed before its submission's commit
  t.trace.launch_sent = t0 + Duration(2100);
  t.trace.agent.launch_received = t0 + Duration(2350);
  t.trace.agent.exec = t0 + Duration(4000);
  std::string text = RenderTimeline(t);
  EXPECT_EQ(text.substr(0, text.find('\n')), "job 42 (RUNNING), run 7");
  EXPECT_NE(text.find("submitted        controller 2026-12-02T13:50:01.000000Z           0 us\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("committed        controller 2026-12-02T13:50:01.001544Z       1.544 ms"
                      "        +344 us\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("launch_received  agent      2026-12-02T13:50:01.002350Z       2.350 ms"
                      "        +250 us"),
            std::string::npos)
      << text;
  // cgroup_ready and spawned were not reached: "-", and exec's step counts from the mark
  // before it.
  EXPECT_NE(text.find("cgroup_ready     agent      -"), std::string::npos) << text;
  EXPECT_NE(text.find("exec             agent      2026-12-02T13:50:01.004000Z       4.000 ms"
                      "      +1.650 ms"),
            std::string::npos)
      << text;
  size_t scheduled = text.find("scheduled"), committed = text.find("committed "),
         exec = text.find("exec "), exited = text.find("exited");
  EXPECT_LT(scheduled, committed);  // the order they happened in
  EXPECT_LT(exec, exited);          // reached ones first
  EXPECT_NE(text.find("exited           agent      -"), std::string::npos) << text;
}

}  // namespace
}  // namespace corral::cli::internal
