// Which queue a location names, for every command that opens a queue.

#include "service/job_queue.h"

namespace accelopt::service {

Result<std::unique_ptr<JobQueue>> OpenJobQueue(const std::string& location, const QueueOptions& options) {
  if (IsPostgresUri(location)) return OpenPostgresJobQueue({location, options});
  SqliteQueueOptions sqlite;
  sqlite.path = location;
  sqlite.queue = options;
  return OpenSqliteJobQueue(sqlite);
}

}  // namespace accelopt::service
