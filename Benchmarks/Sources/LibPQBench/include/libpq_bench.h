// The raw libpq contender of the PostgreSQL benchmarks: the same workloads as the Swift side,
// written directly against libpq in C, with binary parameters and results, reading rows into C
// structs as a hand-written data layer would. Each call takes a connection opened beforehand, so
// no timing includes a connect.
#ifndef LIBPQ_BENCH_H
#define LIBPQ_BENCH_H
#include <stdint.h>

struct pg_conn;

/// A person as C holds it: the same fields as the Swift `Person` record.
typedef struct {
    unsigned char id[16];
    char *first_name;
    char *last_name;
    int64_t age;
    /// Microseconds since 2000-01-01 00:00 UTC, as `timestamptz` sends it.
    int64_t created_at;
    /// NULL when the person has none.
    char *nickname;
} libpq_bench_person;

/// Connects with `conninfo`; NULL when that fails.
struct pg_conn *libpq_bench_connect(const char *conninfo);
/// Closes a connection from `libpq_bench_connect`.
void libpq_bench_finish(struct pg_conn *conn);
/// Inserts `count` people in one transaction, one prepared INSERT per row. Returns 0 on success.
int libpq_bench_insert(struct pg_conn *conn, int count, const libpq_bench_person *people);
/// Runs `sql` with one bigint parameter `$1` (or none when `with_parameter` is 0) and reads every
/// row into `*people` (allocated here; release it with `libpq_bench_free`). Returns the rows read, or -1.
long libpq_bench_fetch(struct pg_conn *conn, const char *sql, int with_parameter, int64_t parameter,
                       libpq_bench_person **people);
/// Looks up `count` people by id (16 bytes each in `ids`) with one prepared SELECT in one
/// REPEATABLE READ transaction, reading each into `*people` (allocated here). Returns the rows found, or -1.
long libpq_bench_lookups(struct pg_conn *conn, const char *sql, int count, const unsigned char *ids,
                         libpq_bench_person **people);
/// Releases people read by the calls above.
void libpq_bench_free(libpq_bench_person *people, long count);
/// Turns callgrind's collection on or off (`valgrind --tool=callgrind --collect-atstart=no`), so
/// a profile counts only the timed workloads; does nothing outside valgrind.
void libpq_bench_toggle_profiling(void);
#endif
