// The system's SQLite, seen by Swift as the CSQLite module.
// Linux: libsqlite3-dev (pkg-config sqlite3). Apple platforms: the SDK's sqlite3.
#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: this fixed form sets one of its
// integer options (SQLITE_DBCONFIG_DEFENSIVE, SQLITE_DBCONFIG_TRUSTED_SCHEMA, ...).
static inline int csqlite_db_config_flag(sqlite3 *db, int option, int value) {
    return sqlite3_db_config(db, option, value, (int *)0);
}
