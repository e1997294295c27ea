// Fuzzes the small value parsers of the Slurm front end: --array, --dependency, --begin, -t,
// --signal, --export, --mem and output file patterns.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/slurm/begin_time.h"
#include "cli/slurm/dependency.h"
#include "cli/slurm/environment.h"
#include "cli/slurm/option_values.h"
#include "cli/slurm/submit.h"
#include "core/array_spec.h"
#include "core/output_pattern.h"
#include "core/resources.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto a = corral::ParseArraySpec(text); a.has_value()) {
    if (a->indices.empty() || a->indices.back() >= corral::kDefaultMaxArraySize) std::abort();
    std::string formatted = corral::FormatArrayIndices(a->indices);
    auto again = corral::ParseArraySpec(formatted);
    if (!again.has_value() || again->indices != a->indices) std::abort();
  }
  if (auto d = corral::slurm::ParseDependencySpec(text); d.has_value()) {
    (void)corral::slurm::FormatDependencies(d->dependencies, d->any);
  }
  (void)corral::slurm::ParseBeginTime(text, corral::Timestamp(corral::Seconds(1'800'000'000)),
                                      3600);
  (void)corral::slurm::ParseTimeLimit(text);
  (void)corral::slurm::ParseSignalSpec(text);
  (void)corral::slurm::ResolveExport(text, {{"A", "1"}, {"SLURM_X", "2"}});
  (void)corral::ParseMemoryMb(text);
  corral::OutputPatternValues v;
  v.job_id = 12;
  v.array_task_id = 3;
  v.job_name = "n";
  (void)corral::ResolveOutputPath(text, v, "/w");
  return 0;
}
