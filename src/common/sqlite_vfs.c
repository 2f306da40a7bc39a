/* SPDX-License-Identifier: MIT */
/*
 * "sst-wal": the VFS every library connection to a file opens with
 * (sqlite_db.c). It is SQLite's default VFS except for the WAL file, whose
 * appends are gathered in memory and written with one call per commit.
 *
 * Why: SQLite writes a committed transaction's WAL frames one write call
 * each for the 24-byte frame header and for the page (walWriteOneFrame), so
 * a `serve --db FILE` run of ~33 frames made ~66 pwrite calls, ~14 % of the
 * server's CPU (bench/RESULTS.md, issue 37); the kernel's cost is mostly per
 * call (the inode's lock and time stamp, the journal handle), not per byte.
 *
 * Durability is SQLite's own: nothing of a commit stays in the buffer once
 * the commit's last frame is written. A commit frame is the one whose header
 * has a non-zero "database size after commit" (bytes 4..7, the WAL file
 * format); the write of that frame's page flushes the buffer, before SQLite
 * updates the WAL index that makes the frames visible to readers, and
 * before COMMIT returns. Anything else the file is asked (a read, its size,
 * a sync, a truncation, closing, a write anywhere but right after the
 * buffer) flushes first, so SQLite never sees a file that differs from what
 * it wrote. A failed flush fails the call that caused it (the commit's last
 * write, so the commit fails).
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

#define VFS_NAME "sst-wal"
/* Larger transactions are written out as they go. Below 128 KiB: the unix VFS writes at most
 * 128 KiB - 1 bytes a call (seekAndWriteFd) and reports a longer write as a full disk. */
#define BUF_CAP      ((sqlite3_int64)64 * 1024)
#define FRAME_HEADER 24

typedef struct wal_file {
    sqlite3_file base;  /* pMethods: &k_wal_methods */
    sqlite3_file *real; /* the default VFS's file, allocated right after this struct */
    unsigned char *buf; /* sqlite3_malloc'ed, BUF_CAP bytes, on first use */
    sqlite3_int64 buf_off;
    sqlite3_int64 buf_len;
    bool commit_next; /* the last append was a commit frame's header */
} wal_file;

static sqlite3_vfs g_vfs;
static sqlite3_vfs *g_real;
static _Atomic uint64_t g_wal_writes; /* write calls made to WAL files (tests read it) */

static int write_through(wal_file *f, const void *data, int amt, sqlite3_int64 off) {
    atomic_fetch_add_explicit(&g_wal_writes, 1, memory_order_relaxed);
    return f->real->pMethods->xWrite(f->real, data, amt, off);
}

static int flush(wal_file *f) {
    if (f->buf_len == 0) {
        return SQLITE_OK;
    }
    int rc = write_through(f, f->buf, (int)f->buf_len, f->buf_off);
    f->buf_len = 0;
    f->commit_next = false;
    return rc;
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * A frame header starts the buffer; what follows it right after is appended; anything
 * else (the WAL's own header, a write that does not follow, a page whose header was
 * already written out) is written at once, after the buffer.
 */
static int wal_write(sqlite3_file *pf, const void *data, int amt, sqlite3_int64 off) {
    wal_file *f = (wal_file *)pf;
    bool appends = f->buf_len > 0 && off == f->buf_off + f->buf_len;
    bool starts = f->buf_len == 0 && amt == FRAME_HEADER;
    if (appends && f->buf_len + amt > BUF_CAP) { /* full: out with it, then as if empty */
        int rc = flush(f);
        if (rc != SQLITE_OK) {
            return rc;
        }
        appends = false;
        starts = amt == FRAME_HEADER;
    }
    if (!appends && !starts) {
        int rc = flush(f);
        return rc != SQLITE_OK ? rc : write_through(f, data, amt, off);
    }
    if (f->buf == NULL && (f->buf = sqlite3_malloc64(BUF_CAP)) == NULL) {
        return write_through(f, data, amt, off);
    }
    if (f->buf_len == 0) {
        f->buf_off = off;
    }
    memcpy(f->buf + f->buf_len, data, (size_t)amt);
    f->buf_len += amt;
    if (f->commit_next) { /* the commit frame's page: the commit is complete */
        return flush(f);
    }
    f->commit_next = amt == FRAME_HEADER && be32((const unsigned char *)data + 4) != 0;
    return SQLITE_OK;
}

static int wal_close(sqlite3_file *pf) {
    wal_file *f = (wal_file *)pf;
    int rc = flush(f);
    int rc2 = f->real->pMethods->xClose(f->real);
    sqlite3_free(f->buf);
    f->buf = NULL;
    return rc != SQLITE_OK ? rc : rc2;
}

static int wal_read(sqlite3_file *pf, void *data, int amt, sqlite3_int64 off) {
    wal_file *f = (wal_file *)pf;
    int rc = flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, data, amt, off);
}

static int wal_truncate(sqlite3_file *pf, sqlite3_int64 size) {
    wal_file *f = (wal_file *)pf;
    int rc = flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int wal_sync(sqlite3_file *pf, int flags) {
    wal_file *f = (wal_file *)pf;
    int rc = flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int wal_file_size(sqlite3_file *pf, sqlite3_int64 *size) {
    wal_file *f = (wal_file *)pf;
    int rc = flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

/* The rest pass through to the real file. */
#define REAL(pf) (((wal_file *)(pf))->real)
static int wal_lock(sqlite3_file *pf, int l) {
    return REAL(pf)->pMethods->xLock(REAL(pf), l);
}
static int wal_unlock(sqlite3_file *pf, int l) {
    return REAL(pf)->pMethods->xUnlock(REAL(pf), l);
}
static int wal_check_reserved(sqlite3_file *pf, int *out) {
    return REAL(pf)->pMethods->xCheckReservedLock(REAL(pf), out);
}
static int wal_file_control(sqlite3_file *pf, int op, void *arg) {
    wal_file *f = (wal_file *)pf;
    int rc = flush(f);
    return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}
static int wal_sector_size(sqlite3_file *pf) {
    return REAL(pf)->pMethods->xSectorSize(REAL(pf));
}
static int wal_device(sqlite3_file *pf) {
    return REAL(pf)->pMethods->xDeviceCharacteristics(REAL(pf));
}

static const sqlite3_io_methods k_wal_methods = {
    .iVersion = 1, /* no shared memory or mmap on the WAL file itself */
    .xClose = wal_close,
    .xRead = wal_read,
    .xWrite = wal_write,
    .xTruncate = wal_truncate,
    .xSync = wal_sync,
    .xFileSize = wal_file_size,
    .xLock = wal_lock,
    .xUnlock = wal_unlock,
    .xCheckReservedLock = wal_check_reserved,
    .xFileControl = wal_file_control,
    .xSectorSize = wal_sector_size,
    .xDeviceCharacteristics = wal_device,
};

static int vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *pf, int flags,
                    int *out_flags) {
    (void)vfs;
    if ((flags & SQLITE_OPEN_WAL) == 0) { /* everything but the WAL: the default VFS's file */
        return g_real->xOpen(g_real, name, pf, flags, out_flags);
    }
    wal_file *f = (wal_file *)pf;
    memset(f, 0, sizeof *f);
    f->real = (sqlite3_file *)(f + 1);
    int rc = g_real->xOpen(g_real, name, f->real, flags, out_flags);
    if (rc == SQLITE_OK && f->real->pMethods != NULL) {
        f->base.pMethods = &k_wal_methods;
    }
    return rc;
}

/* The VFS's other calls are the default VFS's. */
static int vfs_delete(sqlite3_vfs *v, const char *n, int sync) {
    (void)v;
    return g_real->xDelete(g_real, n, sync);
}
static int vfs_access(sqlite3_vfs *v, const char *n, int flags, int *out) {
    (void)v;
    return g_real->xAccess(g_real, n, flags, out);
}
static int vfs_full_pathname(sqlite3_vfs *v, const char *n, int size, char *out) {
    (void)v;
    return g_real->xFullPathname(g_real, n, size, out);
}
static void *vfs_dlopen(sqlite3_vfs *v, const char *n) {
    (void)v;
    return g_real->xDlOpen(g_real, n);
}
static void vfs_dlerror(sqlite3_vfs *v, int n, char *msg) {
    (void)v;
    g_real->xDlError(g_real, n, msg);
}
static void (*vfs_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void) {
    (void)v;
    return g_real->xDlSym(g_real, h, sym);
}
static void vfs_dlclose(sqlite3_vfs *v, void *h) {
    (void)v;
    g_real->xDlClose(g_real, h);
}
static int vfs_randomness(sqlite3_vfs *v, int n, char *out) {
    (void)v;
    return g_real->xRandomness(g_real, n, out);
}
static int vfs_sleep(sqlite3_vfs *v, int us) {
    (void)v;
    return g_real->xSleep(g_real, us);
}
static int vfs_current_time(sqlite3_vfs *v, double *out) {
    (void)v;
    return g_real->xCurrentTime(g_real, out);
}
static int vfs_last_error(sqlite3_vfs *v, int n, char *out) {
    (void)v;
    return g_real->xGetLastError(g_real, n, out);
}
static int vfs_current_time64(sqlite3_vfs *v, sqlite3_int64 *out) {
    (void)v;
    return g_real->xCurrentTimeInt64(g_real, out);
}

static bool g_ok;
static void vfs_register(void) {
    g_real = sqlite3_vfs_find(NULL);
    if (g_real == NULL || g_real->iVersion < 2 || g_real->xCurrentTimeInt64 == NULL) {
        return;
    }
    g_vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(wal_file) + g_real->szOsFile,
        .mxPathname = g_real->mxPathname,
        .zName = VFS_NAME,
        .xOpen = vfs_open,
        .xDelete = vfs_delete,
        .xAccess = vfs_access,
        .xFullPathname = vfs_full_pathname,
        .xDlOpen = vfs_dlopen,
        .xDlError = vfs_dlerror,
        .xDlSym = vfs_dlsym,
        .xDlClose = vfs_dlclose,
        .xRandomness = vfs_randomness,
        .xSleep = vfs_sleep,
        .xCurrentTime = vfs_current_time,
        .xGetLastError = vfs_last_error,
        .xCurrentTimeInt64 = vfs_current_time64,
    };
    g_ok = sqlite3_vfs_register(&g_vfs, 0) == SQLITE_OK;
}

const char *sst__sqlite_vfs(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, vfs_register);
    return g_ok ? VFS_NAME : NULL; /* NULL: SQLite's default */
}

uint64_t sst__sqlite_vfs_wal_writes(void) {
    return atomic_load_explicit(&g_wal_writes, memory_order_relaxed);
}
