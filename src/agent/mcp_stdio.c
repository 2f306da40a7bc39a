/* SPDX-License-Identifier: MIT */
/*
 * The MCP stdio transport (see mcp.h): the server is a child process
 * (posix_spawnp, in a process group of its own) that reads newline-delimited
 * JSON-RPC messages on its stdin and writes them on its stdout. One reader
 * thread per server polls its stdout and stderr: complete lines go to the
 * sink, stderr is kept as a bounded tail, and the end of stdout (the server
 * exited or crashed) closes the transport with the exit status or signal.
 *
 * Locks: `wmu` guards the write side (one message is written whole before
 * the next starts), `mu` the tail and the child's state; neither is held
 * while the sink is called. Only `reap` calls waitpid, under `mu`, so a
 * signal is never sent to a pid that may have been reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp.h"

extern char **environ;

#define TAIL_BYTES 4096
#define READ_CHUNK 65536

typedef struct stdio_tr {
    sst__mcp_transport base; /* first: the transport's functions get a pointer to it */
    sst__mcp_sink sink;
    size_t max_message;    /* bytes of one line */
    long close_timeout_ms; /* sst_mcp_opts.close_timeout_ms */
    int out_fd, err_fd;    /* the server's stdout and stderr: the reader thread's */
    int wake[2];           /* a byte in wake[1] stops the reader thread */
    pthread_t reader;
    bool reader_started;

    pthread_mutex_t wmu;
    pthread_cond_t wcv; /* signalled when a writer is done (CLOCK_MONOTONIC) */
    int in_fd;          /* wmu: the server's stdin (O_NONBLOCK), -1 once closed */
    bool writing;       /* wmu: a message is being written */
    bool broken;        /* wmu: a message was cut off; nothing more can be sent */

    pthread_mutex_t mu;
    char tail[TAIL_BYTES]; /* mu: the last bytes of stderr */
    size_t tail_len;       /* mu */
    bool reaped;           /* mu: waitpid returned the child (or said it is gone) */
    int status;            /* mu: its wait status; -1 unknown (reaped elsewhere) */
    bool ended;            /* mu: stdout ended (the sink was told why) */
    sst_code end_code;     /* mu: why, for later sends */
    char end_why[160];     /* mu */
} stdio_tr;

static stdio_tr *from_base(sst__mcp_transport *t) {
    return (stdio_tr *)t;
}

/* ---- the child ---------------------------------------------------------------------------- */

/*
 * Reaps the child if it has exited, waiting up to @p timeout_ms (-1: until
 * it does). True once it is reaped (by this or an earlier call).
 */
static bool reap(stdio_tr *t, long timeout_ms) {
    uint64_t until = timeout_ms >= 0 ? sst__mcp_now_ms() + (uint64_t)timeout_ms : 0;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        if (!t->reaped) {
            int st = 0;
            pid_t r = waitpid(t->base.pid, &st, timeout_ms < 0 ? 0 : WNOHANG);
            if (r == t->base.pid) {
                t->reaped = true;
                t->status = st;
            } else if (r < 0 && errno != EINTR) {
                t->reaped = true; /* ECHILD: SIGCHLD is ignored, the kernel reaped it */
                t->status = -1;
            }
        }
        bool done = t->reaped;
        pthread_mutex_unlock(&t->mu);
        if (done || (timeout_ms >= 0 && sst__mcp_now_ms() >= until)) {
            return done;
        }
        if (timeout_ms >= 0) {
            sst__sleep_ms(5);
        }
    }
}

/* Sends @p sig to the server's process group, unless it is reaped already. */
static void signal_child(stdio_tr *t, int sig) {
    pthread_mutex_lock(&t->mu);
    if (!t->reaped) {
        if (kill(-t->base.pid, sig) != 0) {
            kill(t->base.pid, sig); /* not a group leader after all */
        }
    }
    pthread_mutex_unlock(&t->mu);
}

/* "the server exited with status 3" and the like, from the state under mu. */
static void describe_exit(stdio_tr *t, char *out, size_t size) {
    if (!t->reaped) {
        snprintf(out, size, "the server (pid %ld) closed its stdout", (long)t->base.pid);
    } else if (t->status == -1) {
        snprintf(out, size, "the server (pid %ld) exited", (long)t->base.pid);
    } else if (WIFEXITED(t->status)) {
        snprintf(out, size, "the server exited with status %d", WEXITSTATUS(t->status));
    } else if (WIFSIGNALED(t->status)) {
        int sig = WTERMSIG(t->status);
        const char *abbrev = sigabbrev_np(sig);
        snprintf(out, size, "the server was killed by signal %d (SIG%s)", sig,
                 abbrev != NULL ? abbrev : "?");
    } else {
        snprintf(out, size, "the server ended (wait status %d)", t->status);
    }
}

/* ---- the reader thread -------------------------------------------------------------------- */

static void tail_add(stdio_tr *t, const char *s, size_t n) {
    pthread_mutex_lock(&t->mu);
    if (n >= TAIL_BYTES) {
        memcpy(t->tail, s + n - TAIL_BYTES, TAIL_BYTES);
        t->tail_len = TAIL_BYTES;
    } else {
        if (t->tail_len + n > TAIL_BYTES) {
            size_t drop = t->tail_len + n - TAIL_BYTES;
            memmove(t->tail, t->tail + drop, t->tail_len - drop);
            t->tail_len -= drop;
        }
        memcpy(t->tail + t->tail_len, s, n);
        t->tail_len += n;
    }
    pthread_mutex_unlock(&t->mu);
}

/* Reads what stderr has; false at its end (or on an error). */
static bool read_stderr(stdio_tr *t) {
    char buf[4096];
    ssize_t n = read(t->err_fd, buf, sizeof buf);
    if (n > 0) {
        tail_add(t, buf, (size_t)n);
        return true;
    }
    return n < 0 && (errno == EINTR || errno == EAGAIN);
}

/* Hands one line (without its '\n') to the sink; blank lines are skipped. */
static void deliver(stdio_tr *t, char *line, size_t len) {
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t')) {
        len--;
    }
    if (len == 0) {
        return;
    }
    char keep = line[len];
    line[len] = '\0';
    t->sink.message(t->sink.ud, line, len);
    line[len] = keep;
}

/* Marks the transport ended with @p code and @p why and tells the sink. */
static void end(stdio_tr *t, sst_code code, const char *why) {
    pthread_mutex_lock(&t->mu);
    t->ended = true;
    t->end_code = code;
    snprintf(t->end_why, sizeof t->end_why, "%s", why);
    pthread_mutex_unlock(&t->mu);
    t->sink.closed(t->sink.ud, code, why);
}

/*
 * Stdout ended: the server exited, crashed or closed it. Reads the rest of
 * stderr (briefly: a grandchild may hold it open) and reaps the child when
 * it has exited, so the reason names its status.
 */
static void on_eof(stdio_tr *t, bool err_open) {
    uint64_t until = sst__mcp_now_ms() + 500;
    while (err_open && sst__mcp_now_ms() < until) {
        struct pollfd p[2] = {{.fd = t->err_fd, .events = POLLIN},
                              {.fd = t->wake[0], .events = POLLIN}};
        int r = poll(p, 2, 50);
        if (r > 0 && (p[1].revents & POLLIN)) {
            break; /* closing */
        }
        if (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            err_open = read_stderr(t);
        }
    }
    reap(t, 1000);
    char why[160];
    pthread_mutex_lock(&t->mu);
    describe_exit(t, why, sizeof why);
    pthread_mutex_unlock(&t->mu);
    end(t, SST_EIO, why);
}

static void *reader_main(void *arg) {
    stdio_tr *t = arg;
    sst__buf line;
    sst__buf_init(&line);
    char *chunk = sst__malloc(READ_CHUNK);
    bool err_open = true;
    if (chunk == NULL) {
        end(t, SST_ENOMEM, "out of memory reading the server's output");
        return NULL;
    }
    for (;;) {
        struct pollfd p[3] = {{.fd = t->out_fd, .events = POLLIN},
                              {.fd = t->wake[0], .events = POLLIN},
                              {.fd = err_open ? t->err_fd : -1, .events = POLLIN}};
        int r = poll(p, 3, -1);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            end(t, SST_EIO, "cannot poll the server's output");
            break;
        }
        if (p[1].revents & POLLIN) {
            break; /* closing */
        }
        if (p[2].revents & (POLLIN | POLLHUP | POLLERR)) {
            err_open = read_stderr(t);
        }
        if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            continue;
        }
        ssize_t n = read(t->out_fd, chunk, READ_CHUNK);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            if (line.len > 0 && !line.oom) {
                deliver(t, line.data, line.len); /* a last message without its newline */
            }
            on_eof(t, err_open);
            break;
        }
        const char *s = chunk, *stop = chunk + n;
        bool failed = false;
        while (s < stop && !failed) {
            const char *nl = memchr(s, '\n', (size_t)(stop - s));
            size_t take = (size_t)((nl != NULL ? nl : stop) - s);
            if (line.len + take > t->max_message) {
                char why[160];
                snprintf(why, sizeof why, "the server sent a message larger than %zu bytes",
                         t->max_message);
                end(t, SST_ELIMIT, why);
                failed = true;
                break;
            }
            if (nl != NULL && line.len == 0) {
                deliver(t, (char *)s, take); /* the whole line is in the chunk: no copy */
            } else {
                sst__buf_append(&line, s, take);
                if (nl != NULL && !line.oom) {
                    sst__buf_putc(&line, '\0'); /* room for deliver's terminator */
                    deliver(t, line.data, line.len - 1);
                }
                if (nl != NULL || line.oom) {
                    if (line.oom) {
                        end(t, SST_ENOMEM, "out of memory reading the server's output");
                        failed = true;
                    }
                    sst__buf_free(&line);
                    sst__buf_init(&line);
                }
            }
            s = nl != NULL ? nl + 1 : stop;
        }
        if (failed) {
            break;
        }
    }
    sst__free(chunk);
    sst__buf_free(&line);
    return NULL;
}

/* ---- writing ------------------------------------------------------------------------------ */

/*
 * write() that cannot kill the process with SIGPIPE: the signal is blocked
 * for this thread while writing, and a SIGPIPE the write raised is taken
 * off the pending set before it is unblocked (pipes have no MSG_NOSIGNAL).
 */
static ssize_t write_nosigpipe(int fd, const char *p, size_t n) {
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigemptyset(&pending);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    ssize_t w = write(fd, p, n);
    int saved = errno;
    if (w < 0 && saved == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return w;
}

/* The reason the transport ended, once the reader thread has said it (up to @p wait_ms). */
static bool ended_why(stdio_tr *t, long wait_ms, sst_code *code, char *why, size_t size) {
    uint64_t until = sst__mcp_now_ms() + (uint64_t)wait_ms;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        bool ended = t->ended;
        if (ended) {
            *code = t->end_code;
            snprintf(why, size, "%s", t->end_why);
        }
        pthread_mutex_unlock(&t->mu);
        if (ended || sst__mcp_now_ms() >= until) {
            return ended;
        }
        sst__sleep_ms(5);
    }
}

static sst_code stdio_send(sst__mcp_transport *base, const char *json, size_t len,
                           const sst__mcp_wait *w, sst_error *err) {
    stdio_tr *t = from_base(base);
    char why[160];
    sst_code code;
    if (ended_why(t, 0, &code, why, sizeof why)) {
        return sst__error(err, code, "%s", why);
    }
    pthread_mutex_lock(&t->wmu);
    while (t->writing && !t->broken && t->in_fd >= 0) {
        code = sst__mcp_wait_check(w);
        if (code != SST_OK) {
            pthread_mutex_unlock(&t->wmu);
            return sst__error(err, code, "stopped waiting to write");
        }
        struct timespec ts;
        sst__mcp_abstime(&ts, 50);
        pthread_cond_timedwait(&t->wcv, &t->wmu, &ts);
    }
    if (t->broken || t->in_fd < 0) {
        pthread_mutex_unlock(&t->wmu);
        return sst__error(err, SST_EIO,
                          t->broken ? "the server stopped reading its stdin (a message was cut off)"
                                    : "the connection is closed");
    }
    t->writing = true;
    int fd = t->in_fd;
    pthread_mutex_unlock(&t->wmu);

    const char *seg[2] = {json, "\n"};
    size_t seg_len[2] = {len, 1};
    size_t sent = 0;
    code = SST_OK;
    for (int i = 0; i < 2 && code == SST_OK; i++) {
        size_t off = 0;
        while (off < seg_len[i]) {
            ssize_t n = write_nosigpipe(fd, seg[i] + off, seg_len[i] - off);
            if (n > 0) {
                off += (size_t)n;
                sent += (size_t)n;
                continue;
            }
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0 && errno == EAGAIN) {
                code = sst__mcp_wait_check(w);
                if (code != SST_OK) {
                    sst__error(err, code, "stopped writing: the server does not read its stdin");
                    break;
                }
                struct pollfd p = {.fd = fd, .events = POLLOUT};
                poll(&p, 1, 50);
                continue;
            }
            if (n < 0 && errno == EPIPE && ended_why(t, 1000, &code, why, sizeof why)) {
                sst__error(err, code, "%s", why); /* the exit status says more than EPIPE */
            } else {
                char buf[128];
                code = sst__error(err, SST_EIO, "cannot write to the server's stdin: %s",
                                  strerror_r(errno, buf, sizeof buf));
            }
            break;
        }
    }
    pthread_mutex_lock(&t->wmu);
    t->writing = false;
    t->broken = t->broken || (code != SST_OK && sent > 0);
    pthread_cond_broadcast(&t->wcv);
    pthread_mutex_unlock(&t->wmu);
    return code;
}

static size_t stdio_stderr_tail(sst__mcp_transport *base, char *buf, size_t size) {
    stdio_tr *t = from_base(base);
    if (size == 0) {
        return 0;
    }
    pthread_mutex_lock(&t->mu);
    size_t n = t->tail_len < size - 1 ? t->tail_len : size - 1;
    memcpy(buf, t->tail + t->tail_len - n, n);
    pthread_mutex_unlock(&t->mu);
    buf[n] = '\0';
    return n;
}

/* ---- opening and closing ------------------------------------------------------------------ */

static void close_fd(int *fd) {
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void stdio_close(sst__mcp_transport *base) {
    stdio_tr *t = from_base(base);
    /* The server's stdin first: a well-behaved server exits when it ends. */
    pthread_mutex_lock(&t->wmu);
    while (t->writing) {
        pthread_cond_wait(&t->wcv, &t->wmu); /* a writer gives up by its own deadline */
    }
    close_fd(&t->in_fd);
    pthread_mutex_unlock(&t->wmu);
    if (t->base.pid > 0) {
        long grace = t->close_timeout_ms;
        if (!reap(t, grace)) {
            signal_child(t, SIGTERM);
            if (!reap(t, grace)) {
                signal_child(t, SIGKILL);
                reap(t, -1);
            }
        }
        /* Whatever it left behind in its group (a shell's children) goes too. */
        if (kill(-t->base.pid, 0) == 0) {
            kill(-t->base.pid, SIGKILL);
        }
    }
    if (t->reader_started) {
        ssize_t n;
        do {
            n = write(t->wake[1], "x", 1);
        } while (n < 0 && errno == EINTR);
        pthread_join(t->reader, NULL);
    }
    close_fd(&t->out_fd);
    close_fd(&t->err_fd);
    close_fd(&t->wake[0]);
    close_fd(&t->wake[1]);
    pthread_mutex_destroy(&t->wmu);
    pthread_cond_destroy(&t->wcv);
    pthread_mutex_destroy(&t->mu);
    sst__free(t);
}

/*
 * The environment for the child: ours, with each "NAME=value" of @p add
 * replacing the entry of that name or appended. The array is new (sst__free);
 * its strings are borrowed. NULL with SST_EINVAL or SST_ENOMEM.
 */
static char **child_env(const char *const *add, sst_error *err) {
    size_t n_env = 0, n_add = 0;
    while (environ != NULL && environ[n_env] != NULL) {
        n_env++;
    }
    while (add != NULL && add[n_add] != NULL) {
        const char *eq = strchr(add[n_add], '=');
        if (eq == NULL || eq == add[n_add]) {
            sst__error(err, SST_EINVAL,
                       "MCP stdio server: the environment entry '%.60s' is not "
                       "NAME=value",
                       add[n_add]);
            return NULL;
        }
        n_add++;
    }
    char **env = sst__calloc(n_env + n_add + 1, sizeof *env);
    if (env == NULL) {
        sst__enomem(err);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < n_env; i++) {
        env[n++] = environ[i];
    }
    for (size_t i = 0; i < n_add; i++) {
        size_t name_len = (size_t)(strchr(add[i], '=') - add[i]) + 1; /* with the '=' */
        size_t j = 0;
        while (j < n && strncmp(env[j], add[i], name_len) != 0) {
            j++;
        }
        env[j] = (char *)add[i]; /* posix_spawn's type; it is not written to */
        n += j == n ? 1 : 0;
    }
    env[n] = NULL;
    return env;
}

/* Starts the child with its three pipes; SST_OK with t->base.pid set. */
static sst_code spawn(stdio_tr *t, const char *const *argv, const sst_mcp_opts *o, int in[2],
                      int out[2], int errp[2], sst_error *err) {
    char **env = child_env(o->env, err);
    if (env == NULL) {
        return sst__code(err);
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    if (o->cwd != NULL) {
        posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
    }
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE); /* the server gets the usual signals, whatever we ignore */
    sigaddset(&dfl, SIGINT);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGCHLD);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETPGROUP);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, (char *const *)argv, env);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    sst__free(env);
    if (rc != 0) {
        char buf[128];
        return sst__error(err, SST_EIO, "MCP stdio server: cannot start '%.80s'%s%.80s: %s",
                          argv[0], o->cwd != NULL ? " in " : "", o->cwd != NULL ? o->cwd : "",
                          strerror_r(rc, buf, sizeof buf));
    }
    t->base.pid = pid;
    return SST_OK;
}

sst__mcp_transport *sst__mcp_stdio_open(const char *const *argv, const sst_mcp_opts *o,
                                        const sst__mcp_sink *sink, sst_error *err) {
    if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0') {
        sst__error(err, SST_EINVAL, "MCP stdio server: no command given");
        return NULL;
    }
    stdio_tr *t = sst__calloc(1, sizeof *t);
    if (t == NULL) {
        sst__enomem(err);
        return NULL;
    }
    t->base.kind = "stdio";
    t->base.send = stdio_send;
    t->base.stderr_tail = stdio_stderr_tail;
    t->base.close = stdio_close;
    t->base.pid = -1;
    t->sink = *sink;
    t->max_message = o->max_message_bytes;
    t->close_timeout_ms = o->close_timeout_ms;
    t->in_fd = t->out_fd = t->err_fd = t->wake[0] = t->wake[1] = -1;
    pthread_mutex_init(&t->wmu, NULL);
    sst__mcp_cond_init(&t->wcv);
    pthread_mutex_init(&t->mu, NULL);

    /* O_CLOEXEC: another server started at the same time must not inherit these ends. */
    int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
    sst_code code = SST_OK;
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
        pipe2(t->wake, O_CLOEXEC) != 0) {
        char buf[128];
        code = sst__error(err, SST_EIO, "MCP stdio server: cannot make pipes: %s",
                          strerror_r(errno, buf, sizeof buf));
    }
    if (code == SST_OK) {
        code = spawn(t, argv, o, in, out, errp, err);
    }
    close_fd(&in[0]); /* the child's ends */
    close_fd(&out[1]);
    close_fd(&errp[1]);
    t->in_fd = in[1];
    t->out_fd = out[0];
    t->err_fd = errp[0];
    if (code == SST_OK) {
        fcntl(t->in_fd, F_SETFL, fcntl(t->in_fd, F_GETFL) | O_NONBLOCK);
        if (pthread_create(&t->reader, NULL, reader_main, t) != 0) {
            code = sst__error(err, SST_ENOMEM, "MCP stdio server: cannot start a reader thread");
        } else {
            t->reader_started = true;
        }
    }
    if (code != SST_OK) {
        t->close_timeout_ms = 0;
        stdio_close(&t->base);
        return NULL;
    }
    return &t->base;
}
