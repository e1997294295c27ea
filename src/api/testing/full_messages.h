// Messages and model values with every field set to a value that differs from its default,
// for codec and store tests: a field a codec forgets makes a round trip with them fail.
#pragma once

#include <cstdint>

#include "api/messages.h"
#include "core/job.h"
#include "core/node.h"
#include "core/partition.h"
#include "core/resources.h"
#include "core/time.h"

namespace corral::api::fixtures {

Timestamp At(int64_t plus_seconds = 0);
ResourceRequest FullResourceRequest();
Dependency FullDependency();
SignalSpec FullSignalSpec();
ContainerSpec FullContainerSpec();
JobSpec FullJobSpec();
NodeAllocation FullNodeAllocation(uint32_t i);
Allocation FullAllocation();
JobUsage FullJobUsage();
Job FullJob();
GpuInfo FullGpuInfo(uint32_t i);
NodeInventory FullNodeInventory();
Node FullNode();
Partition FullPartition();
SubmitResponse FullSubmitResponse();
JobInfo FullJobInfo();
NodeInfo FullNodeInfo();
PartitionInfo FullPartitionInfo();
DrainRequest FullDrainRequest();
RunningJobRef FullRunningJobRef(uint64_t i);
RegisterRequest FullRegisterRequest();
RegisterResponse FullRegisterResponse();
HeartbeatRequest FullHeartbeatRequest();
HeartbeatResponse FullHeartbeatResponse();
JobEvent FullJobEvent();
InjectRequest FullInjectRequest();
JobEventsRequest FullJobEventsRequest();
LaunchRequest FullLaunchRequest();
SignalRequest FullSignalRequest();
StepSpec FullStepSpec();
StepTask FullStepTask();
StepLayout FullStepLayout();
StepInfo FullStepInfo();
StepLaunchRequest FullStepLaunchRequest();
StepSignalRequest FullStepSignalRequest();
CancelRequest FullCancelRequest();
TimeLimitRequest FullTimeLimitRequest();

}  // namespace corral::api::fixtures
