/* SPDX-License-Identifier: MIT */
/*
 * Owner identity: the string a process writes into the leases it holds (the
 * SQLite saver's thread lease, the run queue's claims), and the test that a
 * holder on this machine is dead so its lease can be taken at once.
 *
 * The identity is "HOST BOOT-ID PID-NAMESPACE PID START-TIME": the first three
 * fields are the place (hostname, /proc/sys/kernel/random/boot_id, the target
 * of /proc/self/ns/pid), START-TIME is field 22 of /proc/PID/stat (clock ticks
 * since boot), which tells a process from a later one given the same pid. An
 * owner string may carry more after the identity, separated by a space (the
 * server's workers use "IDENTITY wN"); sst__owner_gone reads only the
 * identity. A holder in another place cannot be probed: its lease stands
 * until it expires.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

typedef struct identity {
    pid_t pid;
    unsigned long long start; /* its start time (clock ticks since boot) */
    char place[256];          /* host boot-id pid-namespace */
    char owner[SST__OWNER_MAX];
} identity;

static pthread_mutex_t g_id_mu = PTHREAD_MUTEX_INITIALIZER;
static identity g_id; /* protected by g_id_mu; remade after a fork (pid changes) */

static void read_line(const char *path, char *out, size_t size) {
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (f != NULL) {
        if (fgets(out, (int)size, f) == NULL) {
            out[0] = '\0';
        }
        fclose(f);
    }
    out[strcspn(out, "\n")] = '\0';
}

/* Field 22 of /proc/PID/stat (start time in clock ticks since boot), or 0. */
static unsigned long long start_time(pid_t pid) {
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    read_line(path, line, sizeof line);
    const char *p = strrchr(line, ')'); /* the command name may hold spaces */
    unsigned long long t = 0;
    for (int field = 2; p != NULL && *p != '\0'; p++) {
        if (*p == ' ' && ++field == 22) {
            t = strtoull(p + 1, NULL, 10);
            break;
        }
    }
    return t;
}

/* This process's identity (copied into @p out). */
static void self_identity(identity *out) {
    pthread_mutex_lock(&g_id_mu);
    pid_t pid = getpid();
    if (g_id.pid != pid) {
        char host[80] = "", boot[64], ns[64] = "";
        gethostname(host, sizeof host - 1);
        read_line("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
        ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
        ns[n > 0 ? n : 0] = '\0';
        g_id.pid = pid;
        g_id.start = start_time(pid);
        snprintf(g_id.place, sizeof g_id.place, "%s %s %s", host, boot, ns);
        snprintf(g_id.owner, sizeof g_id.owner, "%s %d %llu", g_id.place, (int)pid, g_id.start);
    }
    *out = g_id;
    pthread_mutex_unlock(&g_id_mu);
}

void sst__owner_self(char out[SST__OWNER_MAX], pid_t *pid) {
    identity me;
    self_identity(&me);
    memcpy(out, me.owner, sizeof me.owner);
    if (pid != NULL) {
        *pid = me.pid;
    }
}

void sst__owner_place(char out[SST__OWNER_MAX]) {
    identity me;
    self_identity(&me);
    snprintf(out, SST__OWNER_MAX, "%s", me.place);
}

/* The text after "PLACE " when @p owner is of @p me's place, else NULL. */
static const char *after_place(const identity *me, const char *owner) {
    size_t plen = strlen(me->place);
    return strncmp(owner, me->place, plen) == 0 && owner[plen] == ' ' ? owner + plen + 1 : NULL;
}

bool sst__owner_local(const char *owner) {
    identity me;
    self_identity(&me);
    return owner != NULL && after_place(&me, owner) != NULL;
}

/* Reads a decimal number ending at a space or the end; false when there is none. */
static bool read_number(const char **p, unsigned long long *out) {
    const char *s = *p;
    unsigned long long v = 0;
    if (*s < '0' || *s > '9') {
        return false;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (ULLONG_MAX - 9) / 10) {
            return false;
        }
        v = v * 10 + (unsigned long long)(*s - '0');
    }
    if (*s != ' ' && *s != '\0') {
        return false;
    }
    *p = s;
    *out = v;
    return true;
}

bool sst__owner_gone(const char *owner) {
    identity me;
    self_identity(&me);
    const char *p = owner != NULL ? after_place(&me, owner) : NULL;
    if (p == NULL) {
        return false; /* elsewhere (or not an identity): cannot be probed */
    }
    unsigned long long pid = 0, start = 0;
    bool ok = read_number(&p, &pid) && *p++ == ' ' && read_number(&p, &start);
    if (!ok || pid == 0 || pid > INT32_MAX) {
        return true; /* of this place, yet no live process's identity */
    }
    if ((pid_t)pid == me.pid) {
        return start != me.start; /* ourselves, or an earlier process with our pid */
    }
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
        return true;
    }
    return start_time((pid_t)pid) != start; /* the pid was reused by another process */
}
