/* SPDX-License-Identifier: MIT */
/*
 * Project-wide internals: the allocator every layer uses, error helpers,
 * assertions and small utilities. Nothing here is installed.
 */
#ifndef SUPERSTEP_COMMON_H
#define SUPERSTEP_COMMON_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "superstep/error.h"

#define SST_UNUSED(x)    ((void)(x))
#define SST_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__) || defined(__clang__)
#define SST_LIKELY(x)         __builtin_expect(!!(x), 1)
#define SST_UNLIKELY(x)       __builtin_expect(!!(x), 0)
#define SST_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SST_LIKELY(x)   (x)
#define SST_UNLIKELY(x) (x)
#define SST_PRINTF(fmt, args)
#endif

/*
 * SST_ASSERT checks our own invariants, never user input. It aborts in
 * debug builds and compiles to nothing in release builds (NDEBUG).
 */
#ifdef NDEBUG
#define SST_ASSERT(cond) ((void)0)
#else
#define SST_ASSERT(cond) ((cond) ? (void)0 : sst__assert_fail(#cond, __FILE__, __LINE__))
void sst__assert_fail(const char *cond, const char *file, int line);
#endif

/* The allocator (error.h: sst_set_allocator). All library memory goes here. */
void *sst__malloc(size_t size);
void *sst__calloc(size_t n, size_t size);
void *sst__realloc(void *ptr, size_t size);
void sst__free(void *ptr);
/* A NUL-terminated copy of @p len bytes of @p s; NULL on out of memory. */
char *sst__strndup(const char *s, size_t len);

/*
 * Fills @p err (if not NULL) with @p code and a formatted message, cut at a
 * UTF-8 boundary. Returns @p code so callers can write
 * `return sst__error(err, SST_EINVAL, "...")`.
 */
sst_code sst__error(sst_error *err, sst_code code, const char *fmt, ...) SST_PRINTF(3, 4);
sst_code sst__verror(sst_error *err, sst_code code, const char *fmt, va_list ap);
/* Out of memory, with the standard message. */
sst_code sst__enomem(sst_error *err);

/*
 * The one way to carry an error code (a public function's `err` may be NULL,
 * "not interested"):
 *
 * - SST__ERR_LOCAL(err) starts each public entry point whose internals read
 *   err back (its code, or whether a step recorded anything). When the caller
 *   passed NULL it points err at a cleared local sst_error, so the code below
 *   has somewhere to record a failure and can read the real code back. A
 *   caller's own err is left as it is, not cleared: callers chain
 *   constructors through one err (`sst__set_take(o, "k", sst_string_new(s,
 *   err), err)`), and a clear at the entry of a later call that succeeds
 *   would wipe the failure an earlier one recorded.
 * - sst__code(err) is what internal code returns after a failure that a
 *   callee recorded; no call site guesses the code with its own fallback.
 * - sst__error_unless_set() records a failure that no callee described.
 *
 * Internal helpers still accept a NULL err (sst__error ignores it, sst__code
 * falls back): some internal callers pass NULL for errors they drop.
 */
#define SST__ERR_LOCAL(err)                                                                        \
    sst_error sst__err_local_;                                                                     \
    (err) = sst__err_local((err), &sst__err_local_)
/* For SST__ERR_LOCAL: @p err, or @p local (cleared) when err is NULL. */
sst_error *sst__err_local(sst_error *err, sst_error *local);
/*
 * The code of the failure recorded in @p err, for a caller that just saw a
 * failure. When none was recorded (err is NULL, or holds SST_OK) it returns
 * SST_ENOMEM: with an err, a failure that set no code is a bug, except an
 * allocation made without an err (a constructor given NULL).
 */
sst_code sst__code(const sst_error *err);
/*
 * Records @p code and a formatted message in @p err unless a failure is
 * recorded there already (a callee said more precisely what went wrong): for
 * a step that failed, perhaps through a callee or a callback given no err.
 * Returns the code @p err holds afterwards (@p code when err is NULL).
 */
sst_code sst__error_unless_set(sst_error *err, sst_code code, const char *fmt, ...)
    SST_PRINTF(3, 4);
/*
 * Prepends "prefix: " to an error already in @p err (used to add context such
 * as a file name while keeping the original text).
 */
void sst__error_prefix(sst_error *err, const char *fmt, ...) SST_PRINTF(2, 3);

/* Fills @p buf with @p n cryptographically random bytes; SST_EIO on failure. */
sst_code sst__random_bytes(void *buf, size_t n, sst_error *err);

/* The stable 64-bit hash of bytes (hash.c) and its finaliser. */
uint64_t sst__hash_bytes(const void *data, size_t len, uint64_t seed);
uint64_t sst__hash_mix(uint64_t h);

/*
 * CRC-32C of @p len bytes continuing from @p crc (0 to start): the hardware
 * instruction when present; _soft always uses the tables (for tests).
 */
uint32_t sst__crc32c(uint32_t crc, const void *data, size_t len);
uint32_t sst__crc32c_soft(uint32_t crc, const void *data, size_t len);

/* Sleeps @p ms milliseconds (restarted after signals). */
void sst__sleep_ms(uint64_t ms);
/*
 * Makes room for one more item in the array *items of @p n items (each
 * @p size bytes, *cap allocated): doubles the capacity, starting at @p first.
 * False when out of memory (the array is unchanged).
 */
bool sst__grow(void **items, size_t *cap, size_t n, size_t size, size_t first);

/*
 * A string-keyed table of slot numbers (open addressing, linear probing).
 * Keys are borrowed from what the table indexes (the caller keeps them alive
 * while they are in it). Insertion never loses the table: rebuilding makes
 * the new arrays before the old ones are freed; deleting never allocates.
 * Zero-initialise to start; sst__map_free frees the table, not the keys.
 */
typedef struct sst__strmap {
    const char **keys; /* NULL: empty; SST__MAP_TOMB: deleted */
    size_t *vals;
    size_t cap, used, live; /* used counts deleted slots too */
} sst__strmap;
extern const char SST__MAP_TOMB[1]; /* a deleted slot's key */
/* The slot of @p key, or SIZE_MAX. */
size_t sst__map_find(const sst__strmap *m, const char *key);
/* True with *val when @p key is in the table. */
bool sst__map_get(const sst__strmap *m, const char *key, size_t *val);
/* Adds @p key (not present); false when out of memory (the table is unchanged). */
bool sst__map_put(sst__strmap *m, const char *key, size_t val);
/* Makes room for @p extra more keys: sst__map_put of that many cannot fail then. */
bool sst__map_reserve(sst__strmap *m, size_t extra);
void sst__map_del(sst__strmap *m, const char *key);
void sst__map_free(sst__strmap *m);
/* Wall-clock milliseconds since the epoch (leases, created-at times). */
uint64_t sst__now_ms(void);

/*
 * Owner identity (owner.c): what a process writes into the leases it holds, so
 * that another process can tell when the holder died. An identity is "HOST
 * BOOT-ID PID-NAMESPACE PID START-TIME"; an owner string is an identity,
 * optionally followed by a space and anything (the server's "IDENTITY wN").
 */
#define SST__OWNER_MAX 320
/* This process's identity (and its pid, if @p pid is not NULL); remade after a fork. */
void sst__owner_self(char out[SST__OWNER_MAX], pid_t *pid);
/* "HOST BOOT-ID PID-NAMESPACE": the identity's first three fields (the place). */
void sst__owner_place(char out[SST__OWNER_MAX]);
/* True when @p owner starts with an identity of this host, boot and PID namespace. */
bool sst__owner_local(const char *owner);
/*
 * True only when @p owner is local (sst__owner_local) and no live process has
 * its identity: its pid is gone, or reused by a process with another start
 * time, or the text after the place is not "PID START-TIME". Any other owner
 * (another machine, container or boot; a free-form string) is false: it
 * cannot be probed, and its lease stands until it expires.
 */
bool sst__owner_gone(const char *owner);

/* A random UUIDv4 as 36 lowercase characters plus NUL; SST_EIO if no random bytes. */
sst_code sst__uuid4(char out[37], sst_error *err);
/*
 * A time-ordered UUIDv7 as 36 lowercase characters plus NUL: 48 bits of
 * milliseconds, version 7, a 12-bit counter, the variant and random bits.
 * @p clock (IN/OUT; start it at 0) holds the last id's milliseconds << 16
 * plus its counter; the ids made with one clock strictly increase, as numbers
 * and as text, even within a millisecond or when the wall clock steps back.
 * The ids of the whole process increase too (one shared clock underneath), so
 * ids made for different threads and namespaces sort in creation order.
 * Never fails (without random bytes, the clock's bits stand in). The caller
 * serialises calls that share a clock.
 */
void sst__uuid7(uint64_t *clock, char out[37]);
/*
 * The clock of the UUIDv7 text @p id (as sst__uuid7 keeps it), or 0 when
 * @p id is not one: seeding a clock with it makes the next ids sort after
 * @p id, whichever process made it.
 */
uint64_t sst__uuid7_clock(const char *id);

/* Waits for a locked SQLite database up to @p timeout_ms, in short steps (sqlite_busy.c);
 * the library's connections use it in place of sqlite3_busy_timeout. */
struct sqlite3;
void sst__sqlite_busy(struct sqlite3 *db, int timeout_ms);

/* The VFS the library's connections open files with (sqlite_vfs.c): SQLite's default one,
 * except that the WAL frames of one commit reach the file in one write call, not two per
 * frame; NULL (the default VFS) when it could not be registered. */
const char *sst__sqlite_vfs(void);
/* Write calls made to WAL files through it since the process started (tests). */
uint64_t sst__sqlite_vfs_wal_writes(void);
/* The WAL size, in pages, past which a commit runs a WAL checkpoint on the library's
 * connections (sqlite3_wal_autocheckpoint; SQLite's default is 1 000). */
#define SST__SQLITE_WAL_PAGES 4000

/*
 * Shared connections (sqlite_db.c, include/superstep/sqlite.h). A backend's
 * path-taking open makes its own with sst__sqlite_db_new (@p what names the
 * backend in errors: "checkpoint store", "queue", ...; @p flags adds to
 * sqlite3_open_v2's, e.g. SQLITE_OPEN_URI); its `_db` open takes
 * a reference with sst__sqlite_db_retain (sst__sqlite_db_attach does either). It then uses
 * the handle and the (recursive) mutex, and drops its reference on closing,
 * after finalizing its statements.
 */
struct sst_sqlite_db;
struct sst_sqlite_db *sst__sqlite_db_new(const char *path, bool exclusive, int flags,
                                         const char *what, sst_error *err);
struct sst_sqlite_db *sst__sqlite_db_retain(struct sst_sqlite_db *d);
/* A backend's connection: a reference to @p shared, or (NULL) a new one of its own; its
 * handle in *db and its mutex in *mu. */
struct sst_sqlite_db *sst__sqlite_db_attach(struct sst_sqlite_db *shared, const char *path,
                                            int flags, const char *what, struct sqlite3 **db,
                                            pthread_mutex_t **mu, sst_error *err);
/*
 * The start of every SQLite backend's open (the saver's, the store's, the queue's, the
 * cache's): its own copy of @p path in *path_copy (OUT, owned), its connection
 * (sst__sqlite_db_attach: a reference on @p shared, else one of its own) in *conn (OUT,
 * an owned reference), *db and *mu (OUT, the connection's); then, when @p prepare is
 * not NULL, prepare(self, err) holding *mu (checking the file, making tables, preparing
 * statements). On failure the error's code: whatever was set is the backend's to free
 * with the rest (its destroy), the others are left NULL.
 */
sst_code sst__sqlite_backend_open(struct sst_sqlite_db *shared, const char *path, int flags,
                                  const char *what, char **path_copy, struct sst_sqlite_db **conn,
                                  struct sqlite3 **db, pthread_mutex_t **mu,
                                  sst_code (*prepare)(void *self, sst_error *err), void *self,
                                  sst_error *err);
/*
 * True inside sst_sqlite_db_begin .. commit (call with the mutex held). A
 * backend's own transaction then becomes a savepoint of that one:
 * sst__sqlite_tx(d, SST__TX_BEGIN / SST__TX_COMMIT / SST__TX_ROLLBACK) in
 * place of BEGIN / COMMIT / ROLLBACK; false when SQLite refused.
 */
bool sst__sqlite_db_batch(struct sst_sqlite_db *d);
/* True when the calling thread is inside sst_sqlite_db_begin .. commit (any thread may ask:
 * the store refuses such calls, as its index lock is taken before the connection's). */
bool sst__sqlite_db_batch_mine(struct sst_sqlite_db *d);
enum { SST__TX_BEGIN = 0, SST__TX_COMMIT = 1, SST__TX_ROLLBACK = 2 };
bool sst__sqlite_tx(struct sst_sqlite_db *d, int what);
/* With a batch of the calling thread open on @p d: the next backend transaction of it
 * that commits (its outermost savepoint released) commits the batch with it: a claim
 * and the run's first checkpoint, one commit. No-op without such a batch. */
void sst__sqlite_db_hand_over(struct sst_sqlite_db *d);
/* Whether @p d's commits are flushed (synchronous FULL or EXTRA; call holding its
 * mutex). SQLite applies a change of the setting to the transactions begun after it only,
 * so a batch commits as the connection was set when it began. */
bool sst__sqlite_db_flushes(struct sst_sqlite_db *d);

/*
 * The statement helpers of every SQLite backend (sqlite_db.c). Errors read
 * "KIND 'PATH': WHAT: <SQLite's message>" (KIND names the backend: "queue",
 * "store", "cache", "checkpoint store") with SST_ENOMEM when SQLite ran out
 * of memory, @p busy for a lock still held when the busy timeout ran out
 * (SQLITE_BUSY, SQLITE_LOCKED; each backend says which code its callers
 * retry on), else SST_EIO.
 */
/* The first column of the first row of @p sql (a PRAGMA, a count); *ok false when it failed. */
int64_t sst__sqlite_int(struct sqlite3 *db, const char *sql, bool *ok);
/* The code of SQLite result @p rc as above. */
sst_code sst__sqlite_code(int rc, sst_code busy);
/* Fills @p err for @p db's last error as above; returns its code. */
sst_code sst__sqlite_error(struct sqlite3 *db, const char *kind, const char *path, sst_code busy,
                           const char *what, sst_error *err);
/* Runs @p sql (statements without rows); false with @p err filled as above. */
bool sst__sqlite_exec(struct sqlite3 *db, const char *sql, const char *kind, const char *path,
                      sst_code busy, const char *what, sst_error *err);

/* The SHA-1 digest of @p len bytes (name-based UUIDs only; never for security). */
void sst__sha1(const void *data, size_t len, unsigned char out[20]);

/* Growable byte buffer used by writers. */
typedef struct sst__buf {
    char *data; /* owned, sst__malloc; not NUL-terminated (sst__buf_detach terminates) */
    size_t len;
    size_t cap;
    bool oom; /* set once an append failed; later appends are no-ops */
} sst__buf;

void sst__buf_init(sst__buf *b);
void sst__buf_free(sst__buf *b);
bool sst__buf_reserve(sst__buf *b, size_t extra);
void sst__buf_append_slow(sst__buf *b, const void *data, size_t n);

/* Appends @p n bytes; on out of memory sets b->oom and drops the data. */
static inline void sst__buf_append(sst__buf *b, const void *data, size_t n) {
    if (b->data != NULL && n <= b->cap - b->len) {
        memcpy(b->data + b->len, data, n);
        b->len += n;
    } else {
        sst__buf_append_slow(b, data, n);
    }
}

static inline void sst__buf_putc(sst__buf *b, char c) {
    if (b->data != NULL && b->len < b->cap) {
        b->data[b->len++] = c;
    } else {
        sst__buf_append_slow(b, &c, 1);
    }
}
void sst__buf_printf(sst__buf *b, const char *fmt, ...) SST_PRINTF(2, 3);
/* Hands the NUL-terminated data to the caller; the buffer is left empty. */
char *sst__buf_detach(sst__buf *b, size_t *len_out);
/* Appends what is left of @p f to @p b, stopping once b->len passes @p max (0: no
 * limit). @return false on a read error (b->oom tells about memory). */
bool sst__buf_read_file(sst__buf *b, FILE *f, size_t max);

#endif /* SUPERSTEP_COMMON_H */
