#include "libpq_bench.h"
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

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

PGconn *libpq_bench_connect(const char *conninfo) {
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "libpq: %s", PQerrorMessage(conn));
        PQfinish(conn);
        return NULL;
    }
    return conn;
}

void libpq_bench_finish(PGconn *conn) { PQfinish(conn); }

static int prepare(PGconn *conn, const char *name, const char *sql) {
    // A statement prepared by an earlier call on this connection stays.
    PGresult *described = PQdescribePrepared(conn, name);
    int known = PQresultStatus(described) == PGRES_COMMAND_OK;
    PQclear(described);
    if (known) return 1;
    PGresult *prepared = PQprepare(conn, name, sql, 0, NULL);
    int good = ok(prepared);
    PQclear(prepared);
    return good;
}

int libpq_bench_insert(PGconn *conn, int count, const libpq_bench_person *people) {
    if (!prepare(conn, "insert",
                 "INSERT INTO \"Person\" (\"id\", \"firstName\", \"lastName\", \"age\", \"createdAt\", \"nickname\") "
                 "VALUES ($1, $2, $3, $4, $5, $6)"))
        return -1;
    if (!exec(conn, "BEGIN")) return -1;
    for (int row = 0; row < count; row++) {
        const libpq_bench_person *person = &people[row];
        uint64_t age = be64((uint64_t)person->age);
        uint64_t created = be64((uint64_t)person->created_at);
        const char *values[6] = {(const char *)person->id, person->first_name, person->last_name,
                                 (const char *)&age, (const char *)&created, person->nickname};
        int lengths[6] = {16, (int)strlen(person->first_name), (int)strlen(person->last_name), 8, 8,
                          person->nickname ? (int)strlen(person->nickname) : 0};
        int formats[6] = {1, 1, 1, 1, 1, 1};
        PGresult *result = PQexecPrepared(conn, "insert", 6, values, lengths, formats, 1);
        if (!ok(result)) {
            PQclear(result);
            exec(conn, "ROLLBACK");
            return -1;
        }
        PQclear(result);
    }
    return exec(conn, "COMMIT") ? 0 : -1;
}

static char *copy_text(const PGresult *result, int row, int column) {
    if (PQgetisnull(result, row, column)) return NULL;
    int length = PQgetlength(result, row, column);
    char *copy = malloc((size_t)length + 1);
    memcpy(copy, PQgetvalue(result, row, column), (size_t)length);
    copy[length] = 0;
    return copy;
}

static int64_t int64_at(const PGresult *result, int row, int column) {
    uint64_t value;
    memcpy(&value, PQgetvalue(result, row, column), 8);
    return (int64_t)be64(value);
}

/// Reads row `row` of `result` into `person`, copying the text out of libpq's buffer.
static void read_person(const PGresult *result, int row, libpq_bench_person *person) {
    memcpy(person->id, PQgetvalue(result, row, 0), 16);
    person->first_name = copy_text(result, row, 1);
    person->last_name = copy_text(result, row, 2);
    person->age = int64_at(result, row, 3);
    person->created_at = int64_at(result, row, 4);
    person->nickname = copy_text(result, row, 5);
}

long libpq_bench_fetch(PGconn *conn, const char *sql, int with_parameter, int64_t parameter,
                       libpq_bench_person **people) {
    uint64_t value = be64((uint64_t)parameter);
    const char *values[1] = {(const char *)&value};
    int lengths[1] = {8};
    int formats[1] = {1};
    PGresult *result = PQexecParams(conn, sql, with_parameter ? 1 : 0, NULL, values, lengths, formats, 1);
    if (!ok(result)) {
        PQclear(result);
        return -1;
    }
    long rows = PQntuples(result);
    *people = malloc(sizeof(libpq_bench_person) * (size_t)(rows > 0 ? rows : 1));
    for (long row = 0; row < rows; row++) read_person(result, (int)row, &(*people)[row]);
    PQclear(result);
    return rows;
}

long libpq_bench_lookups(PGconn *conn, const char *sql, int count, const unsigned char *ids,
                         libpq_bench_person **people) {
    if (!prepare(conn, "lookup", sql)) return -1;
    if (!exec(conn, "BEGIN ISOLATION LEVEL REPEATABLE READ")) return -1;
    *people = malloc(sizeof(libpq_bench_person) * (size_t)(count > 0 ? count : 1));
    long found = 0;
    for (int index = 0; index < count; index++) {
        const char *values[1] = {(const char *)ids + 16 * index};
        int lengths[1] = {16};
        int formats[1] = {1};
        PGresult *result = PQexecPrepared(conn, "lookup", 1, values, lengths, formats, 1);
        if (!ok(result)) {
            PQclear(result);
            exec(conn, "ROLLBACK");
            return -1;
        }
        if (PQntuples(result) == 1) read_person(result, 0, &(*people)[found++]);
        PQclear(result);
    }
    return exec(conn, "COMMIT") ? found : -1;
}

void libpq_bench_free(libpq_bench_person *people, long count) {
    if (!people) return;
    for (long index = 0; index < count; index++) {
        free(people[index].first_name);
        free(people[index].last_name);
        free(people[index].nickname);
    }
    free(people);
}

void libpq_bench_toggle_profiling(void) { CALLGRIND_TOGGLE_COLLECT; }
