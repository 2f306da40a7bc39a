/* SPDX-License-Identifier: MIT */
/*
 * superstep store: the long-term memory store (superstep/store.h) of a
 * SQLite file from the command line: put, get, delete, search and list the
 * namespaces, printing items as the store returns them (JSON). With --embed
 * the store gets an index over an OpenAI-compatible embeddings endpoint
 * (superstep/agent.h): put embeds the item, search --query ranks by meaning.
 *
 * A namespace is written as its labels joined with '.' ("users.42.memories"):
 * a label cannot hold a '.', so the text is never ambiguous, and it is how
 * LangGraph's SQL stores write a namespace prefix too.
 */
#define _POSIX_C_SOURCE 200809L
#include "cmd_store.h"
#include "cmd_args.h"
#include "cmd_db.h"
#include "cmd_usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "superstep/agent.h"
#include "superstep/json.h"
#include "superstep/postgres.h"
#include "superstep/store.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct store_args {
    const char *cmd;    /* put, get, delete, search or ls */
    const char *pos[3]; /* the positional arguments after the command, in order */
    size_t n_pos;
    const char *db, *query, *filter, *prefix, *suffix;
    const char *embed, *model, *key_env; /* --embed URL, --model, --api-key-env */
    const char **fields;                 /* --field PATH, repeatable; owned array of argv strings */
    size_t n_fields;
    size_t dims, limit, offset, max_depth; /* 0: not given */
    double ttl_minutes;                    /* --ttl; 0: not given */
    bool no_index, json;
} store_args;

/* The store command being parsed ("store put", ...), for usage errors. */
static char g_usage_cmd[32] = "store";

static int usage(const char *fmt, const char *arg) {
    return sst_cli_usage_error(g_usage_cmd, fmt, arg);
}

static int fail(const sst_error *err) {
    fprintf(stderr, "superstep store: %s\n", err->msg);
    return EXIT_FAILED;
}

/* The options and the commands that take them ("*": every command). */
static const struct {
    const char *name;
    const char *cmds;
    bool flag; /* takes no value */
} OPTIONS[] = {
    {"--db", "*", false},
    {"--json", "*", true},
    {"--embed", "*", false},
    {"--model", "*", false},
    {"--dims", "*", false},
    {"--api-key-env", "*", false},
    {"--field", "*", false},
    {"--ttl", "put", false},
    {"--no-index", "put", true},
    {"--query", "search", false},
    {"--filter", "search", false},
    {"--limit", "search ls", false},
    {"--offset", "search ls", false},
    {"--prefix", "ls", false},
    {"--suffix", "ls", false},
    {"--max-depth", "ls", false},
};

/* True when the space-separated list @p cmds holds @p cmd (or is "*"). */
static bool takes(const char *cmds, const char *cmd) {
    size_t n = strlen(cmd);
    for (const char *p = cmds; *p != '\0';) {
        size_t k = strcspn(p, " ");
        if (k == 1 && p[0] == '*') {
            return true;
        }
        if (k == n && strncmp(p, cmd, n) == 0) {
            return true;
        }
        p += k + (p[k] == ' ');
    }
    return false;
}

/* A count option's value: -1 when good (stored in *out), else a usage error. */
static int count_option(const char *name, const char *val, size_t min, size_t *out) {
    char *end = NULL;
    errno = 0;
    /* (strtoull would accept a sign or spaces: the value must start with a digit) */
    bool digits = val[0] >= '0' && val[0] <= '9';
    unsigned long long n = digits ? strtoull(val, &end, 10) : 0;
    if (!digits || errno != 0 || *end != '\0' || n < min || n > 100000000ULL) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: expected a number %s, got '%.60s'", name,
                 min == 0 ? "of 0 or more" : "above 0", val);
        return usage("%s", msg);
    }
    *out = (size_t)n;
    return -1;
}

/* Stores the value of option @p name; -1 when good, else a usage error. */
static int set_option(store_args *a, const char *name, const char *val) {
    const char **slot = strcmp(name, "--db") == 0            ? &a->db
                        : strcmp(name, "--embed") == 0       ? &a->embed
                        : strcmp(name, "--model") == 0       ? &a->model
                        : strcmp(name, "--api-key-env") == 0 ? &a->key_env
                        : strcmp(name, "--query") == 0       ? &a->query
                        : strcmp(name, "--filter") == 0      ? &a->filter
                        : strcmp(name, "--prefix") == 0      ? &a->prefix
                        : strcmp(name, "--suffix") == 0      ? &a->suffix
                                                             : NULL;
    if (slot != NULL) {
        *slot = val;
        return -1;
    }
    if (strcmp(name, "--field") == 0) {
        a->fields[a->n_fields++] = val;
        return -1;
    }
    if (strcmp(name, "--ttl") == 0) {
        char *end;
        errno = 0;
        double t = strtod(val, &end);
        /* (also refuses NaN and infinity: every comparison with NaN is false) */
        if (errno != 0 || end == val || *end != '\0' || !(t > 0 && t <= 1e9)) {
            return usage("--ttl: expected minutes above 0 (e.g. 60 or 0.5), got '%s'", val);
        }
        a->ttl_minutes = t;
        return -1;
    }
    if (strcmp(name, "--offset") == 0) {
        return count_option(name, val, 0, &a->offset);
    }
    return count_option(name, val, 1,
                        strcmp(name, "--dims") == 0    ? &a->dims
                        : strcmp(name, "--limit") == 0 ? &a->limit
                                                       : &a->max_depth);
}

/* The positional arguments each command takes: at least, at most, and their names. */
static int check_positionals(const store_args *a) {
    size_t want_min = 0, want_max = 0;
    const char *shape = "";
    if (strcmp(a->cmd, "put") == 0) {
        want_min = want_max = 3;
        shape = "put NS KEY JSON|@FILE";
    } else if (strcmp(a->cmd, "get") == 0 || strcmp(a->cmd, "delete") == 0) {
        want_min = want_max = 2;
        shape = strcmp(a->cmd, "get") == 0 ? "get NS KEY" : "delete NS KEY";
    } else if (strcmp(a->cmd, "search") == 0) {
        want_max = 1;
        shape = "search [PREFIX] [options]";
    } else {
        shape = "ls [options] (no positional arguments)";
    }
    if (a->n_pos < want_min || a->n_pos > want_max) {
        return usage("expected: superstep store %s", shape);
    }
    if (a->embed != NULL && (a->model == NULL || a->dims == 0)) {
        return usage("%s", "--embed needs --model NAME and --dims N");
    }
    if (a->embed == NULL &&
        (a->model != NULL || a->dims != 0 || a->n_fields > 0 || a->key_env != NULL)) {
        return usage("%s", "--model, --dims, --field and --api-key-env go with --embed URL");
    }
    return -1;
}

/* Parses argv into @p a (a->fields must be freed); -1 when good, else the exit code. */
static int parse(int argc, char **argv, store_args *a) {
    memset(a, 0, sizeof *a);
    if (argc < 3) {
        return usage("%s", "missing COMMAND (put, get, delete, search or ls)");
    }
    a->cmd = argv[2];
    if (!takes("put get delete search ls", a->cmd)) {
        return usage("unknown command '%s' (expected put, get, delete, search or ls)", a->cmd);
    }
    snprintf(g_usage_cmd, sizeof g_usage_cmd, "store %s", a->cmd);
    a->fields = calloc((size_t)argc, sizeof *a->fields);
    if (a->fields == NULL) {
        fprintf(stderr, "superstep store: out of memory\n");
        return EXIT_FAILED;
    }
    for (int i = 3; i < argc; i++) {
        const char *o = argv[i];
        if (o[0] != '-' || o[1] == '\0') {
            if (a->n_pos == 3) {
                return usage("unexpected argument '%s'", o);
            }
            a->pos[a->n_pos++] = o;
            continue;
        }
        size_t k = 0;
        while (k < sizeof OPTIONS / sizeof OPTIONS[0] && strcmp(OPTIONS[k].name, o) != 0) {
            k++;
        }
        if (k == sizeof OPTIONS / sizeof OPTIONS[0]) {
            return usage("unknown option '%s'", o);
        }
        if (!takes(OPTIONS[k].cmds, a->cmd)) {
            char msg[128];
            snprintf(msg, sizeof msg, "%s: not an option of '%s' (only of: %s)", o, a->cmd,
                     OPTIONS[k].cmds);
            return usage("%s", msg);
        }
        if (OPTIONS[k].flag) {
            a->json = a->json || strcmp(o, "--json") == 0;
            a->no_index = a->no_index || strcmp(o, "--no-index") == 0;
            continue;
        }
        if (i + 1 >= argc) {
            return usage("option '%s' needs a value", o);
        }
        int rc = set_option(a, o, argv[++i]);
        if (rc >= 0) {
            return rc;
        }
    }
    return check_positionals(a);
}

/* A namespace's labels: pointers into a copy of the text, split at '.'. */
typedef struct ns_labels {
    char *text;          /* owned copy, its dots replaced by NULs */
    const char **labels; /* owned array of n pointers into text */
    size_t n;
} ns_labels;

static void ns_free(ns_labels *ns) {
    free(ns->text);
    free(ns->labels);
    memset(ns, 0, sizeof *ns);
}

/*
 * Splits @p text ("" is no label); false with a message printed for an empty
 * label (the store checks everything else and names what it refuses).
 */
static bool ns_split(const char *what, const char *text, ns_labels *ns) {
    memset(ns, 0, sizeof *ns);
    if (text == NULL || text[0] == '\0') {
        return true;
    }
    size_t n = 1;
    for (const char *p = text; *p != '\0'; p++) {
        n += *p == '.';
    }
    ns->text = strdup(text);
    ns->labels = calloc(n, sizeof *ns->labels);
    if (ns->text == NULL || ns->labels == NULL) {
        ns_free(ns);
        fprintf(stderr, "superstep store: out of memory\n");
        return false;
    }
    for (char *p = ns->text;;) {
        size_t k = strcspn(p, ".");
        if (k == 0) {
            fprintf(stderr,
                    "superstep store: %s '%s': label %zu is empty (labels are joined with '.', "
                    "as in users.42.memories)\n",
                    what, text, ns->n + 1);
            ns_free(ns);
            return false;
        }
        ns->labels[ns->n++] = p;
        if (p[k] == '\0') {
            return true;
        }
        p[k] = '\0';
        p += k + 1;
    }
}

/* Parses JSON given inline or as @FILE; NULL with a message printed. */
static sst_value *json_arg(const char *what, const char *text) {
    sst_error err = {0};
    sst_value *v =
        text[0] == '@' ? sst_json_read_file(text + 1, NULL, &err) : sst_json_parse(text, &err);
    if (v == NULL && err.line > 0) {
        fprintf(stderr, "superstep store: %s: bad JSON at line %zu, column %zu: %s\n", what,
                err.line, err.column, err.msg);
    } else if (v == NULL) {
        fprintf(stderr, "superstep store: %s: %s\n", what, err.msg);
    }
    return v;
}

static void print_json(const store_args *a, const sst_value *v) {
    sst_error err = {0};
    char *text = sst_json_write(v, a->json ? SST_JSON_COMPACT : SST_JSON_PRETTY, NULL, &err);
    if (text != NULL) {
        printf("%s\n", text);
    } else {
        fprintf(stderr, "superstep store: %s\n", err.msg);
    }
    sst_free(text);
}

/*
 * Opens the store of --db, with an index when --embed is given (*emb is then
 * the embedder, freed after the store). Only put creates a missing file: a
 * read of a mistyped path says so instead of creating an empty database.
 * NULL with @p err filled.
 */
static sst_store *open_store(const store_args *a, sst_embedder **emb, sst_error *err) {
    const char *db = sst_cli_default_db(a->db);
    bool file = strcmp(db, ":memory:") != 0 && !sst_pg_is_url(db);
    if (strcmp(a->cmd, "put") != 0 && file && strncmp(db, "file:", 5) != 0 &&
        access(db, F_OK) != 0) {
        err->code = SST_ENOTFOUND;
        snprintf(err->msg, sizeof err->msg, "no database '%s' (store put creates one; --db PATH)",
                 db);
        return NULL;
    }
    sst_store_opts o;
    sst_store_opts_init(&o);
    if (a->embed != NULL) {
        sst_embedder_opts eo;
        sst_embedder_opts_init(&eo);
        eo.base_url = a->embed;
        eo.model = a->model;
        eo.api_key_env = a->key_env != NULL ? a->key_env : "OPENAI_API_KEY";
        if ((*emb = sst_embedder_openai(&eo, err)) == NULL) {
            return NULL;
        }
        o.index.dims = a->dims;
        o.index.embed = sst_embedder_embed;
        o.index.embed_user_data = *emb;
        o.index.fields = a->n_fields > 0 ? a->fields : NULL;
        o.index.n_fields = a->n_fields;
    }
    return sst_cli_open_store(db, &o, err);
}

/* The item (NS, KEY) (new), sst_null() when absent; NULL with a message printed. */
static sst_value *get_item(sst_store *st, const store_args *a, const ns_labels *ns) {
    sst_error err = {0};
    /* An inspection does not refresh the item's TTL (reads by the graph do, by default). */
    sst_value *item = sst_store_get(st, ns->labels, ns->n, a->pos[1], 0, &err);
    if (item == NULL) {
        fail(&err);
    }
    return item;
}

/* put, get and delete: one item, printed (after a put as stored, before a delete as it was). */
static int cmd_item(sst_store *st, const store_args *a) {
    ns_labels ns;
    if (!ns_split("namespace", a->pos[0], &ns)) {
        return EXIT_FAILED;
    }
    if (ns.n == 0) {
        ns_free(&ns);
        fprintf(stderr, "superstep store: the namespace is empty (e.g. users.42.memories)\n");
        return EXIT_FAILED;
    }
    int rc = EXIT_OK;
    sst_error err = {0};
    if (strcmp(a->cmd, "put") == 0) {
        sst_value *v = json_arg("value", a->pos[2]);
        sst_store_put_opts po;
        sst_store_put_opts_init(&po);
        po.ttl_minutes = a->ttl_minutes > 0 ? a->ttl_minutes : SST_STORE_TTL_DEFAULT;
        po.no_index = a->no_index;
        if (v == NULL) {
            rc = EXIT_FAILED;
        } else if (sst_store_put(st, ns.labels, ns.n, a->pos[1], v, &po, &err) != SST_OK) {
            rc = fail(&err);
        }
        sst_value_unref(v);
    }
    sst_value *item = rc == EXIT_OK ? get_item(st, a, &ns) : NULL;
    if (rc == EXIT_OK && item == NULL) {
        rc = EXIT_FAILED;
    } else if (item != NULL && sst_is_null(item)) {
        fprintf(stderr, "superstep store: no item '%s' in namespace '%s'\n", a->pos[1], a->pos[0]);
        rc = EXIT_FAILED;
    } else if (item != NULL && strcmp(a->cmd, "delete") == 0 &&
               sst_store_delete(st, ns.labels, ns.n, a->pos[1], &err) != SST_OK) {
        rc = fail(&err);
    } else if (item != NULL) {
        print_json(a, item);
    }
    sst_value_unref(item);
    ns_free(&ns);
    return rc;
}

static int cmd_search(sst_store *st, const store_args *a) {
    ns_labels prefix;
    if (!ns_split("prefix", a->n_pos > 0 ? a->pos[0] : NULL, &prefix)) {
        return EXIT_FAILED;
    }
    sst_value *filter = a->filter != NULL ? json_arg("--filter", a->filter) : NULL;
    if (a->filter != NULL && filter == NULL) {
        ns_free(&prefix);
        return EXIT_FAILED;
    }
    if (a->query != NULL && sst_store_dims(st) == 0) {
        fprintf(stderr, "superstep store: warning: --query without --embed ranks nothing "
                        "(the items come newest first, with score null)\n");
    }
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = prefix.labels;
    q.prefix_len = prefix.n;
    q.filter = filter;
    q.query = a->query;
    q.limit = a->limit;
    q.offset = a->offset;
    q.refresh_ttl = 0;
    sst_error err = {0};
    sst_value *items = sst_store_search(st, &q, &err);
    int rc = items != NULL ? (print_json(a, items), EXIT_OK) : fail(&err);
    sst_value_unref(items);
    sst_value_unref(filter);
    ns_free(&prefix);
    return rc;
}

static int cmd_ls(sst_store *st, const store_args *a) {
    ns_labels prefix, suffix;
    if (!ns_split("--prefix", a->prefix, &prefix)) {
        return EXIT_FAILED;
    }
    if (!ns_split("--suffix", a->suffix, &suffix)) {
        ns_free(&prefix);
        return EXIT_FAILED;
    }
    sst_store_list_opts q;
    sst_store_list_opts_init(&q);
    q.prefix = prefix.labels;
    q.prefix_len = prefix.n;
    q.suffix = suffix.labels;
    q.suffix_len = suffix.n;
    q.max_depth = a->max_depth;
    q.limit = a->limit;
    q.offset = a->offset;
    sst_error err = {0};
    sst_value *list = sst_store_list_namespaces(st, &q, &err);
    int rc = list != NULL ? (print_json(a, list), EXIT_OK) : fail(&err);
    sst_value_unref(list);
    ns_free(&prefix);
    ns_free(&suffix);
    return rc;
}

int sst_cli_store(int argc, char **argv) {
    store_args a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0) {
        free(a.fields);
        return rc;
    }
    sst_error err = {0};
    sst_embedder *emb = NULL;
    sst_store *st = open_store(&a, &emb, &err);
    if (st == NULL) {
        rc = fail(&err);
    } else if (strcmp(a.cmd, "search") == 0) {
        rc = cmd_search(st, &a);
    } else if (strcmp(a.cmd, "ls") == 0) {
        rc = cmd_ls(st, &a);
    } else {
        rc = cmd_item(st, &a);
    }
    sst_store_free(st);
    sst_embedder_free(emb);
    free(a.fields);
    return rc;
}
