// The system's libpq (PostgreSQL's client library), seen by Swift as the CLibPQ module.
// Linux: libpq-dev (pkg-config libpq, headers in /usr/include/postgresql). macOS: Homebrew's libpq.
#include <libpq-fe.h>
