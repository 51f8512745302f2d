#include "libpq_bench.h"
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t be64(uint64_t value) {
    return ((uint64_t)htonl((uint32_t)(value & 0xffffffffu)) << 32) | htonl((uint32_t)(value >> 32));
}

static int ok(PGresult *result) {
    ExecStatusType status = PQresultStatus(result);
    int good = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    if (!good) fprintf(stderr, "libpq: %s", PQresultErrorMessage(result));
    return good;
}

static int exec(PGconn *conn, const char *sql) {
    PGresult *result = PQexec(conn, sql);
    int good = ok(result);
    PQclear(result);
    return good;
}

int libpq_bench_insert(const char *conninfo, int count, const unsigned char *ids) {
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) return -1;
    PGresult *prepared = PQprepare(conn, "insert",
        "INSERT INTO \"Item\" (id, title, rating, score) VALUES ($1, $2, $3, $4)", 0, NULL);
    if (!ok(prepared)) return -1;
    PQclear(prepared);
    exec(conn, "BEGIN");
    char title[32];
    for (int row = 0; row < count; row++) {
        snprintf(title, sizeof title, "item %d", row);
        uint64_t rating = be64((uint64_t)(row % 100));
        double score = row * 0.5;
        uint64_t bits;
        memcpy(&bits, &score, 8);
        bits = be64(bits);
        const char *values[4] = {(const char *)ids + 16 * row, title, (const char *)&rating, (const char *)&bits};
        int lengths[4] = {16, (int)strlen(title), 8, 8};
        int formats[4] = {1, 1, 1, 1};
        PGresult *result = PQexecPrepared(conn, "insert", 4, values, lengths, formats, 1);
        if (!ok(result)) return -1;
        PQclear(result);
    }
    exec(conn, "COMMIT");
    PQfinish(conn);
    return 0;
}

/// Reads every column of every row, as a decoder would: sums what it reads so nothing is skipped.
static long read_rows(PGresult *result, volatile uint64_t *sink) {
    long rows = PQntuples(result);
    for (long row = 0; row < rows; row++) {
        unsigned char id[16];
        memcpy(id, PQgetvalue(result, row, 0), 16);
        const char *title = PQgetvalue(result, row, 1);
        int length = PQgetlength(result, row, 1);
        char *copy = malloc(length + 1);
        memcpy(copy, title, length);
        copy[length] = 0;
        uint64_t rating, score;
        memcpy(&rating, PQgetvalue(result, row, 2), 8);
        memcpy(&score, PQgetvalue(result, row, 3), 8);
        *sink += id[0] + copy[0] + be64(rating) + be64(score);
        free(copy);
    }
    return rows;
}

long libpq_bench_fetch(const char *conninfo) {
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) return -1;
    PGresult *result = PQexecParams(conn, "SELECT id, title, rating, score FROM \"Item\"", 0, NULL, NULL, NULL, NULL, 1);
    if (!ok(result)) return -1;
    volatile uint64_t sink = 0;
    long rows = read_rows(result, &sink);
    PQclear(result);
    PQfinish(conn);
    return rows;
}

long libpq_bench_lookups(const char *conninfo, int count, const unsigned char *ids) {
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) return -1;
    PGresult *prepared = PQprepare(conn, "lookup",
        "SELECT id, title, rating, score FROM \"Item\" WHERE id = $1", 0, NULL);
    if (!ok(prepared)) return -1;
    PQclear(prepared);
    volatile uint64_t sink = 0;
    long found = 0;
    for (int index = 0; index < count; index++) {
        const char *values[1] = {(const char *)ids + 16 * index};
        int lengths[1] = {16};
        int formats[1] = {1};
        PGresult *result = PQexecPrepared(conn, "lookup", 1, values, lengths, formats, 1);
        if (!ok(result)) return -1;
        found += read_rows(result, &sink);
        PQclear(result);
    }
    PQfinish(conn);
    return found;
}

long libpq_bench_filtered(const char *conninfo, int64_t bound) {
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) return -1;
    uint64_t value = be64((uint64_t)bound);
    const char *values[1] = {(const char *)&value};
    int lengths[1] = {8};
    int formats[1] = {1};
    PGresult *result = PQexecParams(conn,
        "SELECT id, title, rating, score FROM \"Item\" WHERE rating > $1 ORDER BY title", 1, NULL, values, lengths,
        formats, 1);
    if (!ok(result)) return -1;
    volatile uint64_t sink = 0;
    long rows = read_rows(result, &sink);
    PQclear(result);
    PQfinish(conn);
    return rows;
}
