/* SPDX-License-Identifier: MIT */
/*
 * The usage texts of the superstep commands, each written once here: its
 * --help, `superstep help COMMAND` and its usage errors all print from this
 * table. Options several commands share are one macro each.
 */
#include "cmd_usage.h"

#include <string.h>

#include "cmd_args.h"

/* ---- options several commands take ---------------------------------------- */

#define OPT_THREAD_RUN                                                                             \
    "  --thread ID          the thread to continue (default: a new one, its id printed)\n"
#define OPT_THREAD_READ "  --thread ID          the thread (required)\n"
#define OPT_DB                                                                                     \
    "  --db PATH|URL        the checkpoint database: a SQLite file (default: the\n"                \
    "                       script's checkpointer, else $SUPERSTEP_DB, else\n"                     \
    "                       ./" SST_CLI_DEFAULT_DB "); :memory: keeps the checkpoints in this\n"   \
    "                       process only; postgresql://USER@HOST:PORT/DB uses\n"                   \
    "                       PostgreSQL (postgresql:// alone: libpq's PG* variables)\n"
#define OPT_MEMORY_LIMIT                                                                           \
    "  --memory-limit BYTES most memory each Lua state may hold (one per worker), as\n"            \
    "                       bytes or with K, M or G (KiB, MiB, GiB): 500M, 2G; default\n"          \
    "                       the script's compile{memory_limit}, else 1G\n"
#define OPT_OTLP                                                                                   \
    "  --otlp-endpoint URL  OpenTelemetry spans of the run to this OTLP/HTTP traces URL\n"         \
    "                       (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or\n"                   \
    "                       $OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces; none: no tracing)\n"           \
    "  --trace-content      with tracing: model spans carry the prompts and replies\n"
#define OPT_WORKERS_LEASE_QUIET                                                                    \
    "  --lease S            a worker's lease on a run, in seconds (default 30)\n"                  \
    "  --quiet              no log lines on stderr\n"
#define OPT_GRAPH "  --graph NAME=SCRIPT.lua  serve this graph too (repeatable)\n"
/* --durability and --flush, for every command that makes runs (docs/durability.md). */
#define OPT_DURABILITY_RUN                                                                         \
    "  --durability MODE    when a superstep's checkpoint is committed: sync (before\n"            \
    "                       the next superstep starts), async (while it computes;\n"               \
    "                       the default) or exit (once, when the run ends)\n"                      \
    "  --flush on|off       the database's flush policy: on, a commit returns once\n"              \
    "                       on disk (SQLite synchronous=FULL, PostgreSQL\n"                        \
    "                       synchronous_commit=on); off, before (NORMAL, off);\n"                  \
    "                       default SQLite off, PostgreSQL on\n"
#define OPT_DURABILITY_SERVE                                                                       \
    "  --durability MODE        when a superstep's checkpoint is committed: sync (before\n"        \
    "                           the next superstep starts), async (while it computes;\n"           \
    "                           the default) or exit (once, when the run ends)\n"                  \
    "  --flush on|off           the database's flush policy: on, a commit returns once\n"          \
    "                           on disk (SQLite synchronous=FULL, PostgreSQL\n"                    \
    "                           synchronous_commit=on); off, before (NORMAL, off);\n"              \
    "                           default SQLite off, PostgreSQL on\n"

/* ---- the commands -------------------------------------------------------- */

static const char RUN[] =
    "usage: superstep run SCRIPT.lua [--input JSON|@FILE] [--thread ID] [--db PATH|URL]\n"
    "                     [--checkpoint ID] [--resume JSON] [--stream MODE[,MODE]]\n"
    "                     [--subgraphs] [--workers N] [--memory-limit BYTES]\n"
    "                     [--otlp-endpoint URL] [--trace-content] [--json]\n"
    "                     [--durability sync|async|exit] [--flush on|off]\n"
    "\n"
    "Runs the graph (or entrypoint) SCRIPT.lua returns, durably: each superstep is a\n"
    "checkpoint. The state is printed on stdout, the outcome on stderr. The thread's\n"
    "metadata names its graph: graph_id (SCRIPT's file name without .lua) and\n"
    "script (its absolute path), so `superstep serve` shows it (docs/web.md).\n"
    "\n"
    "options:\n"
    "  --input JSON|@FILE   input of the run (default: none: continue the thread)\n" OPT_THREAD_RUN
        OPT_DB OPT_DURABILITY_RUN
    "  --checkpoint ID      run from this checkpoint (a fork when it is not the latest)\n"
    "  --resume JSON        answer the pending interrupt with this value\n"
    "  --stream MODE[,MODE] values|updates|custom|messages|tasks|checkpoints|debug: JSON\n"
    "                       lines on stdout; with several modes (a list, or repeated)\n"
    "                       each line is [mode, chunk]\n"
    "  --subgraphs          with --stream: the subgraphs' events too; each line is\n"
    "                       [namespace, chunk] ([namespace, mode, chunk] with several\n"
    "                       modes), namespace the list of \"node:task_id\" parts from\n"
    "                       the root, [] for the graph's own events\n"
    "  --workers N          worker threads for parallel nodes (1 to 256; default the\n"
    "                       script's compile{workers}, else 1)\n" OPT_MEMORY_LIMIT OPT_OTLP
    "  --json               one JSON object on stdout: status, thread_id, state,\n"
    "                       interrupts, error, checkpoint_id\n"
    "\n"
    "exit codes: 0 completed, 1 failed or bad input, 2 usage error, 3 interrupted\n";

static const char STATE[] =
    "usage: superstep state SCRIPT.lua --thread ID [--checkpoint ID] [--db PATH|URL]\n"
    "                       [--memory-limit BYTES] [--json]\n"
    "\n"
    "Prints a thread's latest state (or a checkpoint's), as LangGraph's get_state.\n"
    "\n"
    "options:\n" OPT_THREAD_READ
    "  --checkpoint ID      this checkpoint instead of the latest\n" OPT_DB OPT_MEMORY_LIMIT
    "  --json               compact JSON (default: indented)\n";

static const char HISTORY[] =
    "usage: superstep history SCRIPT.lua --thread ID [--db PATH|URL] [--limit N]\n"
    "                         [--before ID] [--values] [--memory-limit BYTES] [--json]\n"
    "\n"
    "Prints a thread's checkpoints as a JSON array, newest first, a page at a time:\n"
    "each entry is the checkpoint's id, parent, step, metadata and updates (what it\n"
    "changed).\n"
    "\n"
    "options:\n" OPT_THREAD_READ OPT_DB "  --limit N            at most N entries (default: all)\n"
    "  --before ID          start below checkpoint ID (to page)\n"
    "  --values             whole states instead of updates\n" OPT_MEMORY_LIMIT
    "  --json               compact JSON (default: indented)\n";

static const char THREADS[] =
    "usage: superstep threads SCRIPT.lua [--db PATH|URL] [--memory-limit BYTES] [--json]\n"
    "\n"
    "Lists every thread of the checkpoint database: its status (idle, busy,\n"
    "interrupted, error), checkpoints, latest step and checkpoint.\n"
    "\n"
    "options:\n" OPT_DB OPT_MEMORY_LIMIT
    "  --json               a JSON array, with created_at, updated_at (ms) and metadata\n";

static const char GRAPH[] =
    "usage: superstep graph SCRIPT.lua [--mermaid | --dot | --svg] [--xray[=N]]\n"
    "                       [--memory-limit BYTES]\n"
    "\n"
    "Draws the graph SCRIPT.lua returns on stdout.\n"
    "\n"
    "options:\n"
    "  --mermaid            Mermaid (the default)\n"
    "  --dot                Graphviz DOT\n"
    "  --svg                SVG, laid out by Graphviz's dot\n"
    "  --xray[=N]           draw each subgraph node as its graph's nodes, N levels deep\n"
    "                       (every level without N)\n" OPT_MEMORY_LIMIT;

static const char CHECK[] =
    "usage: superstep check [--db PATH] [--repair]\n"
    "\n"
    "Checks every record of a SQLite database: SQLite's integrity check, each\n"
    "record's checksum, and that each checkpoint can be rebuilt; prints each\n"
    "damaged checkpoint. Exit 0: no damage (with --repair: every thread readable\n"
    "again); 1: damage remains or the file cannot be checked; 2: usage error.\n"
    "\n"
    "options:\n"
    "  --db PATH            the SQLite file (default $SUPERSTEP_DB, else\n"
    "                       ./" SST_CLI_DEFAULT_DB ")\n"
    "  --repair             copy the file to PATH.bak-<time>, then move each damaged\n"
    "                       thread back to its newest intact checkpoint\n";

static const char AGENT[] =
    "usage: superstep agent --model SPEC [options] PROMPT\n"
    "       superstep agent --model SPEC --thread ID --continue | --resume ANSWER\n"
    "\n"
    "A ReAct agent (model, tool calls in parallel, model...) on a durable thread.\n"
    "Tokens are printed as they stream in; the run's token usage at the end.\n"
    "\n"
    "model:\n"
    "  --model SPEC         URL (OpenAI-compatible), fake:FILE (scripted replies, one\n"
    "                       JSON line each), openai:MODEL or anthropic:MODEL (required)\n"
    "  --model-name NAME    the model a URL serves (default gpt-4o-mini)\n"
    "  --api-key-env VAR    the variable holding the API key (default for a URL:\n"
    "                       OPENAI_API_KEY; never logged)\n"
    "  --temperature X      request parameters (sst_model_set_param)\n"
    "  --max-tokens N\n"
    "  --tool-choice C\n"
    "  --cache-prompt       prompt caching (anthropic:)\n"
    "  --fallback-model SPEC  the model to ask when --model fails\n"
    "tools:\n"
    "  --tools SCRIPT.lua   the tools a Lua script returns\n"
    "  --mcp \"CMD ARGS\"     an MCP server's tools, over stdio (repeatable, up to 8)\n"
    "  --mcp-url URL        an MCP server's tools, over Streamable HTTP (up to 8)\n"
    "  --memory-limit BYTES most memory the tools script's Lua state may hold\n"
    "                       (500M, 2G; default 1G)\n"
    "the loop:\n"
    "  --system TEXT        the system prompt\n"
    "  --max-iterations N   model calls at most, 1 to 1000 (default 10)\n"
    "  --response-format SCHEMA.json|JSON\n"
    "                       structured output: the answer checked against the schema\n"
    "  --structured-strategy auto|tool|provider\n"
    "                       how the model is asked for it (default auto)\n"
    "  --interrupt-on TOOL  wait for a human decision before calling TOOL (up to 16)\n"
    "  --limit-model-calls N  at most N model calls per run\n"
    "  --limit-tool-calls N   at most N tool calls per run\n"
    "  --summarize-at TOKENS  summarize older messages past TOKENS\n"
    "  --summarize-keep N   messages kept unsummarized (default 6)\n"
    "  --approve            each tool call waits (exit 3) for --resume\n"
    "  --resume ANSWER      approve, reject or JSON: answers the waiting tool calls\n"
    "  --continue           finish the thread's cut-off run (no PROMPT)\n"
    "the thread:\n"
    "  --thread ID          the conversation to continue (default: a new one, printed)\n"
    "  --db PATH|URL        the checkpoint database (default $SUPERSTEP_DB, else\n"
    "                       ./" SST_CLI_DEFAULT_DB "; :memory:; postgresql://...)\n" OPT_OTLP
    "  --json               one JSON object on stdout: reply, messages, usage, ...\n"
    "\n"
    "exit codes: 0 completed, 1 failed or bad input, 2 usage error, 3 waiting for\n"
    "--resume\n";

static const char SERVE[] =
    "usage: superstep serve [CONFIG] [--graph NAME=SCRIPT.lua]... [--host HOST]\n"
    "                       [--port N] [--db PATH|URL] [--shared-db] [--workers N]\n"
    "                       [--auth-token-env VAR] [--insecure-listen-any]\n"
    "                       [--max-body BYTES] [--max-connections N] [--timeout S]\n"
    "                       [--stream-backlog N] [--runs-per-thread N]\n"
    "                       [--http-threads N] [--lease S] [--web-dir DIR] [--no-web]\n"
    "                       [--otlp-endpoint URL] [--trace-content] [--open] [--quiet]\n"
    "                       [--durability sync|async|exit] [--flush on|off]\n"
    "\n"
    "Serves LangGraph's HTTP API (assistants, threads, runs, streams, state, store)\n"
    "for the graphs of CONFIG, a langgraph.json-shaped file ({\"graphs\": {\"agent\":\n"
    "\"./agent.lua\"}, \"env\": \".env\"}), and of --graph options, until SIGTERM or\n"
    "SIGINT. Prints \"listening on http://HOST:PORT\" once it serves.\n"
    "\n"
    "options:\n" OPT_GRAPH "  --host HOST              address to listen on (default 127.0.0.1)\n"
    "  --port N                 port (default 2024; 0: any free port)\n"
    "  --db PATH|URL            the database: checkpoints, threads, store, run queue\n"
    "                           (default $SUPERSTEP_DB, else ./" SST_CLI_DEFAULT_DB "; :memory:);\n"
    "                           the server holds a SQLite file's locks while it runs;\n"
    "                           postgresql://USER@HOST:PORT/DB: many serve and worker\n"
    "                           processes on any machines share one PostgreSQL\n"
    "  --shared-db              let other processes (the CLI, another server) use\n"
    "                           the database meanwhile (slower: a file lock per "
    "write)\n" OPT_DURABILITY_SERVE
    "  --workers N              threads that run graphs (default 2; 0 with PostgreSQL:\n"
    "                           API only, `superstep worker` processes run the runs)\n"
    "  --auth-token-env VAR     require 'Authorization: Bearer $VAR' (all but /ok)\n"
    "  --insecure-listen-any    allow a non-loopback --host without a token\n"
    "  --max-body BYTES         largest request body (default 16M)\n"
    "  --max-connections N      open connections at most (default 1024)\n"
    "  --timeout S              seconds an idle connection is kept (default 30)\n"
    "  --stream-backlog N       events kept per run for rejoining streams\n"
    "                           (default 10000)\n"
    "  --runs-per-thread N      pending and running runs per thread (default 100)\n"
    "  --http-threads N         HTTP threads (default 2)\n"
    "  --lease S                a worker's lease on a run, in seconds (default 30)\n"
    "  --web-dir DIR            serve the web page's files from DIR instead of the\n"
    "                           copy built in (default $SST_WEB_DIR; for work on it)\n"
    "  --no-web                 no web page at / (the API only)\n"
    "  --otlp-endpoint URL      OpenTelemetry spans of every run to this OTLP/HTTP\n"
    "                           traces URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT;\n"
    "                           none: no tracing)\n"
    "  --trace-content          with tracing: model spans carry the prompts and replies\n"
    "  --open                   open the web page in a browser once listening\n"
    "                           ($BROWSER, else xdg-open)\n"
    "  --quiet                  no log lines on stderr\n"
    "\n"
    "The web page (threads, checkpoints, state diffs, the graph, live runs) is at\n"
    "http://HOST:PORT/ (docs/web.md).\n";

static const char WORKER[] =
    "usage: superstep worker [CONFIG] [--graph NAME=SCRIPT.lua]... --db URL\n"
    "                        [--workers N] [--lease S] [--otlp-endpoint URL]\n"
    "                        [--trace-content] [--quiet]\n"
    "                        [--durability sync|async|exit] [--flush on|off]\n"
    "\n"
    "Runs the graphs of CONFIG (a langgraph.json-shaped file) and of --graph\n"
    "options for the runs that `superstep serve` processes on the same PostgreSQL\n"
    "database enqueue: workers only, no HTTP. Start as many as you like, on any\n"
    "machines; each run is claimed by one of them, and a run whose worker dies is\n"
    "taken over from its last checkpoint once its lease expires. Prints \"working\"\n"
    "once it runs.\n"
    "\n"
    "options:\n"
    "  --graph NAME=SCRIPT.lua  run this graph too (repeatable)\n"
    "  --db URL                 the PostgreSQL database (postgresql://USER@HOST:PORT/DB;\n"
    "                           postgresql:// alone reads libpq's PG* "
    "variables)\n" OPT_DURABILITY_SERVE
    "  --workers N              threads that run graphs (default 2)\n"
    "  --lease S                a worker's lease on a run, in seconds (default 30)\n"
    "  --otlp-endpoint URL      OpenTelemetry spans of every run to this OTLP/HTTP\n"
    "                           traces URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT)\n"
    "  --trace-content          with tracing: model spans carry the prompts and replies\n"
    "  --quiet                  no log lines on stderr\n";

/* The store: each command's synopsis once; `store --help` is all of them. */
#define STORE_PUT                                                                                  \
    "superstep store put NS KEY JSON|@FILE [--ttl MINUTES] [--no-index]\n"                         \
    "                           [STORE-OPTIONS]\n"
#define STORE_GET    "superstep store get NS KEY [STORE-OPTIONS]\n"
#define STORE_DELETE "superstep store delete NS KEY [STORE-OPTIONS]\n"
#define STORE_SEARCH                                                                               \
    "superstep store search [PREFIX] [--query TEXT] [--filter JSON|@FILE]\n"                       \
    "                              [--limit N] [--offset N] [STORE-OPTIONS]\n"
#define STORE_LS                                                                                   \
    "superstep store ls [--prefix NS] [--suffix NS] [--max-depth N] [--limit N]\n"                 \
    "                          [--offset N] [STORE-OPTIONS]\n"
#define STORE_OPTIONS                                                                              \
    "\n"                                                                                           \
    "  NS, PREFIX           a namespace: its labels joined with '.' (users.42.memories)\n"         \
    "\n"                                                                                           \
    "STORE-OPTIONS:\n"                                                                             \
    "  --db PATH|URL        the store's database (default $SUPERSTEP_DB, else\n"                   \
    "                       ./" SST_CLI_DEFAULT_DB "); it may be the checkpoint database;\n"       \
    "                       only put creates a file\n"                                             \
    "  --json               compact JSON (default: indented)\n"                                    \
    "  --embed URL          semantic search through an OpenAI-compatible embeddings\n"             \
    "                       endpoint (https://api.openai.com/v1); needs --model, --dims\n"         \
    "  --model NAME         the embedding model\n"                                                 \
    "  --dims N             its vectors' dimensions\n"                                             \
    "  --api-key-env VAR    the variable holding the key (default OPENAI_API_KEY)\n"               \
    "  --field PATH         embed this path of the value (repeatable; default: all)\n"

static const char STORE[] = "usage: " STORE_PUT "       " STORE_GET "       " STORE_DELETE
                            "       " STORE_SEARCH "       " STORE_LS "\n"
                            "The long-term memory store (LangGraph's BaseStore) of --db; every\n"
                            "command prints JSON. superstep store COMMAND --help: one command.\n"
                            "\n"
                            "commands:\n"
                            "  put                  store an item (JSON: an object)\n"
                            "  get                  print an item\n"
                            "  delete               delete an item and print it\n"
                            "  search               the items under PREFIX, newest first (or\n"
                            "                       ranked by --query with --embed)\n"
                            "  ls                   the namespaces\n" STORE_OPTIONS;

static const char STORE_PUT_TEXT[] =
    "usage: " STORE_PUT "\n"
    "Stores the item KEY of namespace NS (JSON: an object, inline or @FILE) and\n"
    "prints it; with --embed, its vectors too.\n"
    "\n"
    "  --ttl MINUTES        the item expires after MINUTES (60, or 0.5)\n"
    "  --no-index           store no vectors for this item\n" STORE_OPTIONS;

static const char STORE_GET_TEXT[] = "usage: " STORE_GET "\n"
                                     "Prints the item KEY of namespace NS (exit 1 when absent).\n"
                                     "\n" STORE_OPTIONS;

static const char STORE_DELETE_TEXT[] =
    "usage: " STORE_DELETE "\n"
    "Deletes the item KEY of namespace NS and prints it (exit 1 when absent).\n"
    "\n" STORE_OPTIONS;

static const char STORE_SEARCH_TEXT[] =
    "usage: " STORE_SEARCH "\n"
    "Prints the items under PREFIX (every item without it), newest first.\n"
    "\n"
    "  --query TEXT         rank by meaning (with --embed; score: cosine similarity)\n"
    "  --filter JSON|@FILE  keep items whose value matches ({\"n\": {\"$gt\": 4}}: $eq,\n"
    "                       $ne, $gt, $gte, $lt, $lte)\n"
    "  --limit N            at most N items (default 10)\n"
    "  --offset N           skip the first N\n" STORE_OPTIONS;

static const char STORE_LS_TEXT[] =
    "usage: " STORE_LS "\n"
    "Prints the namespaces of the store.\n"
    "\n"
    "  --prefix NS          only those starting with NS ('*' matches any one label)\n"
    "  --suffix NS          only those ending with NS ('*' matches any one label)\n"
    "  --max-depth N        cut each to its first N labels\n"
    "  --limit N            at most N namespaces (default 100)\n"
    "  --offset N           skip the first N\n" STORE_OPTIONS;

static const char HELP[] = "usage: superstep help [COMMAND [STORE-COMMAND]]\n"
                           "\n"
                           "Prints the usage of COMMAND (as superstep COMMAND --help does), or\n"
                           "without one the list of commands (as superstep --help does).\n";

/* Every command, in the overview's order; a summary of NULL keeps it out of the list. */
static const struct {
    const char *name;
    const char *summary;
    const char *text;
} COMMANDS[] = {
    {"run", "run (or resume) the graph a Lua script returns, durably", RUN},
    {"state", "print a thread's latest state (or a checkpoint's)", STATE},
    {"history", "print a thread's checkpoints, newest first", HISTORY},
    {"threads", "list the threads of the checkpoint database", THREADS},
    {"graph", "draw a script's graph: Mermaid, Graphviz DOT or SVG", GRAPH},
    {"check", "check (and --repair) every record of a SQLite database", CHECK},
    {"agent", "a ReAct agent on a durable thread (a model, Lua and MCP tools)", AGENT},
    {"serve", "LangGraph's HTTP API and the web page for Lua graphs", SERVE},
    {"worker", "run the runs serve processes enqueue on one PostgreSQL", WORKER},
    {"store", "the long-term memory store: put, get, delete, search, ls", STORE},
    {"help", "print a command's usage: superstep help COMMAND", HELP},
    {"store put", NULL, STORE_PUT_TEXT},
    {"store get", NULL, STORE_GET_TEXT},
    {"store delete", NULL, STORE_DELETE_TEXT},
    {"store search", NULL, STORE_SEARCH_TEXT},
    {"store ls", NULL, STORE_LS_TEXT},
};
#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

bool sst_cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

const char *sst_cli_usage(const char *command) {
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(COMMANDS[i].name, command) == 0) {
            return COMMANDS[i].text;
        }
    }
    return NULL;
}

void sst_cli_print_overview(FILE *out) {
    fputs("usage: superstep COMMAND [arguments]\n"
          "\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (COMMANDS[i].summary != NULL) {
            fprintf(out, "  %-9s%s\n", COMMANDS[i].name, COMMANDS[i].summary);
        }
    }
    fputs("\n"
          "superstep COMMAND --help (or -h, or superstep help COMMAND) prints a command's\n"
          "options; superstep --version prints the version.\n"
          "\n"
          "exit codes: 0 completed, 1 failed or bad input, 2 usage error, 3 interrupted\n",
          out);
}

int sst_cli_usage_error(const char *command, const char *fmt, const char *arg) {
    fprintf(stderr, "superstep%s%s: ", command[0] != '\0' ? " " : "", command);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    const char *text = command[0] != '\0' ? sst_cli_usage(command) : NULL;
    if (text == NULL) {
        fputs("(superstep --help: the commands)\n", stderr);
        return SST_CLI_EXIT_USAGE;
    }
    const char *end = strstr(text, "\n\n");
    fwrite(text, 1, end != NULL ? (size_t)(end - text) + 1 : strlen(text), stderr);
    fprintf(stderr, "(superstep %s --help: every option)\n", command);
    return SST_CLI_EXIT_USAGE;
}

/* "store put" for argv {"store", "put"}, "store" for {"store"} or an unknown store command. */
static const char *command_of(const char *cmd, const char *sub, char *buf, size_t size) {
    if (strcmp(cmd, "store") != 0 || sub == NULL) {
        return cmd;
    }
    snprintf(buf, size, "store %s", sub);
    return sst_cli_usage(buf) != NULL ? buf : cmd;
}

bool sst_cli_help_asked(int argc, char **argv) {
    if (argc < 2 || strchr(argv[1], ' ') != NULL || sst_cli_usage(argv[1]) == NULL) {
        return false;
    }
    for (int i = 2; i < argc; i++) {
        if (sst_cli_is_help(argv[i])) {
            char buf[64];
            fputs(sst_cli_usage(command_of(argv[1], argc > 2 ? argv[2] : NULL, buf, sizeof buf)),
                  stdout);
            return true;
        }
    }
    return false;
}

int sst_cli_help(int argc, char **argv) {
    if (argc < 3) {
        sst_cli_print_overview(stdout);
        return 0;
    }
    if (argc > 4 || (argc == 4 && strcmp(argv[2], "store") != 0)) {
        return sst_cli_usage_error("help", "unexpected argument '%s'", argv[argc == 4 ? 3 : 4]);
    }
    char buf[64];
    const char *text = NULL;
    if (argc == 4) {
        snprintf(buf, sizeof buf, "store %s", argv[3]);
        text = sst_cli_usage(buf);
        if (text == NULL) {
            return sst_cli_usage_error("store",
                                       "unknown command '%s' (expected put, get, delete, search "
                                       "or ls)",
                                       argv[3]);
        }
    } else if ((text = sst_cli_usage(argv[2])) == NULL || strchr(argv[2], ' ') != NULL) {
        return sst_cli_usage_error("help",
                                   "unknown command '%s' (expected run, state, history, threads, "
                                   "graph, check, agent, serve, worker, store or help)",
                                   argv[2]);
    }
    fputs(text, stdout);
    return 0;
}
