#!/usr/bin/env python3
"""Summarise a `perf record --call-graph dwarf` profile of `superstep serve`
(bench/server/server.sh --perf DIR writes one): where the server's CPU goes.

    perf script -i perf.data -F comm,tid,ip,sym,dso | python3 bench/server/perf_summary.py

Prints, as % of all samples: the top symbols by self time; self time by
component (kernel, SQLite, malloc, locks, Lua, HTTP, JSON, ...); the server
function that issued the SQLite work (the nearest superstep frame above the
outermost SQLite frame), split into SQL parsing (sqlite3_prepare*), commits
and the rest; and inclusive time of selected frames.
"""
import collections
import re
import sys


def samples(lines):
    head, frames = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if head is not None:
                yield head, physical(frames)
            head, frames = None, []
        elif not line.startswith(("\t", " ")) or head is None:
            head, frames = line.split()[0], []
        else:
            m = re.match(r"\s*[0-9a-f]+ (.*?)(?: \((.*)\))?$", line)
            if m:
                sym, dso = m.group(1), m.group(2) or ""
                sym = re.sub(r"\.localalias| \(inlined\)|\.isra\.\d+|\.constprop\.\d+|\.part\.\d+", "", sym)
                frames.append((sym, dso.rsplit("/", 1)[-1]))
    if head is not None:
        yield head, physical(frames)


def physical(frames):
    """An inlined frame's object is that of the next frame that is not inlined."""
    out, dso = [], ""
    for sym, d in reversed(frames):
        if d == "inlined":
            d = dso
        else:
            dso = d
        out.append((sym, d))
    return out[::-1]


MALLOC = re.compile(r"malloc|free|_int_|sysmalloc|realloc|calloc|consolidate|tcache|madvise|arena")
LOCKS = re.compile(r"pthread_mutex|lll_lock|futex|pthread_cond|pthread_rwlock")
STRING = re.compile(r"str|mem|__wmem")
JSON = re.compile(r"json|write_value|parse_value|scan_string|utf8|write_string|number")


def component(sym, dso, frames):
    if dso.startswith("[kernel") or sym.startswith("[k]"):
        return "kernel"
    if dso.startswith("libsqlite3"):
        return "SQLite (user space)"
    if dso.startswith("liblua"):
        return "Lua VM"
    if dso.startswith("libmicrohttpd"):
        return "libmicrohttpd"
    if dso.startswith("libc"):
        if MALLOC.search(sym):
            return "libc malloc/free"
        if LOCKS.search(sym):
            return "libc locks (mutex/futex)"
        if STRING.search(sym):
            return "libc str*/mem*"
        return "libc syscall wrappers, other"
    if dso.startswith("superstep"):
        return "superstep JSON" if JSON.search(sym) else "superstep other"
    return dso or "?"


def main():
    n = 0
    self_sym = collections.Counter()
    comp = collections.Counter()
    issuer = collections.Counter()
    issuer_kind = collections.Counter()
    incl = collections.Counter()
    threads = collections.Counter()
    kernel_under = collections.Counter()
    watch = [
        "on_request", "worker_main", "srv_threads_create", "create", "sst_engine_run",
        "sst__persist_superstep", "sst__persist_start", "sst__qs_enqueue", "sst__qs_claim",
        "sst__qs_end", "sst__qs_finish", "sst__qs_done", "sst_checkpointer_thread_get",
        "sst_checkpointer_put", "srv_thread_exists", "srv_thread_value", "srv_thread_merge_metadata",
        "sqlite3_prepare_v2", "sqlite3_prepare_v3", "sqlite3_step", "sqlite3_finalize",
        "sqlite3_exec", "sqlite3WalFrames", "sqlite3WalCheckpoint", "sqlite3PagerSharedLock",
        "sqlite3BtreeBeginTrans", "fdatasync", "sqlite3VdbeHalt", "lua_pcallk", "luaV_execute",
        "MHD_queue_response", "sst__lua_node",
    ]
    for comm, frames in samples(sys.stdin):
        if not frames:
            continue
        n += 1
        threads[comm] += 1
        sym, dso = frames[0]
        self_sym[f"{sym} [{dso}]"] += 1
        c = component(sym, dso, frames)
        comp[c] += 1
        if c == "kernel":
            # the first user-space frame above the kernel: which call went in
            for s, d in frames:
                if not d.startswith("[kernel"):
                    kernel_under[s] += 1
                    break
        seen = set(s for s, _ in frames)
        for w in watch:
            if w in seen:
                incl[w] += 1
        # the outermost SQLite frame and the superstep function that called it
        top = None
        for i, (s, d) in enumerate(frames):
            if d.startswith("libsqlite3"):
                top = i
        if top is not None:
            caller = next((s for s, d in frames[top + 1:] if d.startswith("superstep")), "?")
            api = frames[top][0]
            kind = ("parse (prepare)" if "prepare" in " ".join(s for s, _ in frames[: top + 1])
                    else "commit / WAL" if any(s in ("sqlite3VdbeHalt", "sqlite3WalFrames", "sqlite3WalCheckpoint")
                                               for s, _ in frames[: top + 1])
                    else api)
            issuer[caller] += 1
            issuer_kind[f"{caller} / {kind}"] += 1
    if not n:
        print("no samples")
        return 1
    pc = lambda k: f"{100.0 * k / n:6.2f}%"
    print(f"{n} samples")
    print("\nthreads:", ", ".join(f"{k} {pc(v).strip()}" for k, v in threads.most_common()))
    print("\ntop symbols (self):")
    for k, v in self_sym.most_common(25):
        print(f"  {pc(v)}  {k}")
    print("\nself time by component:")
    for k, v in comp.most_common():
        print(f"  {pc(v)}  {k}")
    print("\nkernel time, by the user-space function that entered the kernel:")
    for k, v in kernel_under.most_common(12):
        print(f"  {pc(v)}  {k}")
    print("\nSQLite work (inclusive, its kernel time too) by the superstep function calling SQLite:")
    for k, v in issuer.most_common(15):
        print(f"  {pc(v)}  {k}")
    print("\n... and by what SQLite did for it:")
    for k, v in issuer_kind.most_common(20):
        print(f"  {pc(v)}  {k}")
    print("\ninclusive:")
    for k, v in sorted(incl.items(), key=lambda kv: -kv[1]):
        print(f"  {pc(v)}  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
