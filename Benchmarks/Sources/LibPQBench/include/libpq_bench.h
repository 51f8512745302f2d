// The raw libpq contender of the PostgreSQL benchmarks: the same workloads as the Swift side,
// written directly against libpq in C, with binary parameters and results.
#ifndef LIBPQ_BENCH_H
#define LIBPQ_BENCH_H
#include <stdint.h>

/// Inserts `count` rows into "Item" in one transaction, one prepared INSERT per row; ids are
/// 16 bytes each in `ids`. Returns 0 on success.
int libpq_bench_insert(const char *conninfo, int count, const unsigned char *ids);
/// Fetches every row of "Item", reading each column; returns the rows read, or -1.
long libpq_bench_fetch(const char *conninfo);
/// Looks up `count` rows by id; returns the rows found, or -1.
long libpq_bench_lookups(const char *conninfo, int count, const unsigned char *ids);
/// Fetches the rows with rating > `bound` ordered by title; returns the rows read, or -1.
long libpq_bench_filtered(const char *conninfo, int64_t bound);
#endif
