// The system's SQLite, seen by Swift as the CSQLite module.
// Linux: libsqlite3-dev (pkg-config sqlite3). Apple platforms: the SDK's sqlite3.
#include <sqlite3.h>
