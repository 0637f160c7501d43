#pragma once
/// The task definitions a run starts with, kept with the run: each task's
/// folder by content (a digest, and a hash per file), so that `resume` goes on
/// only against the same definitions and never mixes two shapes of a task in
/// one run's results.

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "suite/task.h"

namespace accelopt::run {

/// {task: {"digest": service::TaskSpec::digest, "files": {path: digest of that file alone}}}
/// for `tasks` bound at `shape`. An Error names the task whose folder cannot be read.
Result<Json> TaskDefinitions(const std::vector<const suite::Task*>& tasks, const std::string& shape);

/// Ok when every task's folder holds the files `recorded` names, with the
/// same contents; else an Error naming each task that differs and, in it,
/// each file changed, added or gone. A task `recorded` does not name is an
/// error too. Use on resume, with `recorded` as TaskDefinitions made it.
Status CheckTaskDefinitions(const Json& recorded, const std::vector<const suite::Task*>& tasks,
                            const std::string& shape);

}  // namespace accelopt::run
