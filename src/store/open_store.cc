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

Result<std::unique_ptr<Store>> OpenStoreReadOnly(const std::string& location) {
  if (IsPostgresUri(location)) return OpenPostgresStoreReadOnly(location);
  SqliteOptions options;
  options.path = location;
  options.create = false;
  options.read_only = true;
  return OpenSqliteStore(options);
}

}  // namespace accelopt::store
