// make_store: fills a controller store with N finished jobs (realistic records: a 300-byte
// script, 5 environment variables, a 2-node allocation) and the nodes they ran on, for
// bench/restart_bench.sh. Not a test.
//
//   make_store PATH N
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "store/store.h"
#include "store/testing/populated_records.h"

using namespace corral;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_store PATH N\n");
    return 2;
  }
  auto store = store::OpenStore(std::string("sqlite:") + argv[1]);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.error().message.c_str());
    return 1;
  }
  uint64_t n = std::strtoull(argv[2], nullptr, 10);
  std::set<std::string> nodes;
  store::WriteBatch batch;
  for (uint64_t id = 1; id <= n; ++id) {
    Job j = store::testing::RealisticJob(id);
    for (const auto& na : j.allocation.nodes) nodes.insert(na.node_name);
    batch.PutJob(j);
    if (batch.size() == 1000 || id == n) {
      if (auto s = (*store)->Write(batch); !s) {
        std::fprintf(stderr, "%s\n", s.error().message.c_str());
        return 1;
      }
      batch.Clear();
    }
  }
  uint32_t nid = 1;
  for (const auto& name : nodes) {
    Node node;
    node.id = NodeId(nid++);
    node.inventory.name = name;
    node.inventory.address = "http://127.0.0.1:9";
    node.inventory.cpus = 64;
    node.inventory.memory_mb = 512 * 1024;
    node.registered = true;
    batch.PutNode(node);
  }
  batch.PutMeta("next_job_id", std::to_string(n + 1));
  batch.PutMeta("next_node_id", std::to_string(nid));
  if (auto s = (*store)->Write(batch); !s) {
    std::fprintf(stderr, "%s\n", s.error().message.c_str());
    return 1;
  }
  std::printf("wrote %llu jobs and %zu nodes to %s\n", static_cast<unsigned long long>(n), nodes.size(), argv[1]);
  return 0;
}
