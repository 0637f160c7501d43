#pragma once
/// Jobs long enough to kill a worker in the middle of (tests only): the
/// fixture task `scale`, each with a correct kernel that takes a few
/// milliseconds per call.

#include <string>
#include <vector>

#include "core/result.h"
#include "service/job_queue.h"
#include "suite/task.h"
#include "targets/registry.h"
#include "testing/test_paths.h"

namespace accelopt::testing {

/// A correct kernel of the `scale` task that takes a few milliseconds per call.
inline std::string SlowKernel(int variant) {
  return "// variant " + std::to_string(variant) +
         "\nextern \"C\" void kernel(const float* x, float* out) {\n"
         "  volatile float sink = 0;\n"
         "  for (long r = 0; r < 40000; ++r) for (long i = 0; i < M * N; i += 8) sink = sink + x[i];\n"
         "  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];\n"
         "}\n";
}

/// Enqueues `count` evaluations of slow kernels for `machine_class`; their ids.
inline Result<std::vector<int64_t>> EnqueueSlowJobs(service::JobQueue& queue, const std::string& machine_class,
                                                    int count) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale");
  if (!task) return task.error();
  auto spec = service::TaskSpecOf(*task, "test");
  if (!spec) return spec.error();
  std::vector<int64_t> ids;
  for (int i = 0; i < count; ++i) {
    service::EvalJob job;
    job.task = *spec;
    job.target = targets::kDefaultTarget;
    job.settings = {{"seeds", 1}, {"timeout", 60}};
    job.machine_class = machine_class;
    job.sources = {{"candidate", SlowKernel(i), "slow-" + std::to_string(i), {}}};
    auto id = queue.Enqueue(job);
    if (!id) return id.error();
    ids.push_back(*id);
  }
  return ids;
}

}  // namespace accelopt::testing
