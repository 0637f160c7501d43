// Which queue a location names: the one place that tells a PostgreSQL URI
// from an SQLite file, for every command that opens a queue.

#include "service/job_queue.h"

namespace accelopt::service {

bool IsPostgresUri(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

Result<std::unique_ptr<JobQueue>> OpenJobQueue(const std::string& location, const QueueOptions& options) {
  if (IsPostgresUri(location)) return OpenPostgresJobQueue({location, options});
  SqliteQueueOptions sqlite;
  sqlite.path = location;
  sqlite.queue = options;
  return OpenSqliteJobQueue(sqlite);
}

}  // namespace accelopt::service
