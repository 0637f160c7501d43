// Which store a location names, for every command that opens one.

#include "store/store.h"

namespace accelopt::store {

Result<std::unique_ptr<Store>> OpenStore(const std::string& location, bool create) {
  if (IsPostgresUri(location)) return OpenPostgresStore(location);
  SqliteOptions options;
  options.path = location;
  options.create = create;
  return OpenSqliteStore(options);
}

}  // namespace accelopt::store
