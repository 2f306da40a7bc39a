/* SPDX-License-Identifier: MIT */
/*
 * The allocator of every lua_State superstep creates: the library's
 * allocator plus a byte count and a limit. The limit applies inside the
 * protected calls this layer makes (sst__lua_pcall); an allocation that
 * would pass it fails, which Lua raises as LUA_ERRMEM after a full
 * collection. Outside them (the setup of a call, C callbacks of the graph
 * layer, finalizers run from C) nothing is refused: an error there would
 * unwind C frames that do not expect it, or reach the panic function.
 */
#include <stdarg.h>
#include <stdio.h>

#include <lualib.h>

#include "lua_int.h"

static void *mem_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    sst__lua_mem *m = ud;
    size_t old = ptr != NULL ? osize : 0; /* for a new block osize is a type tag */
    if (nsize == 0) {
        sst__free(ptr);
        m->used -= old;
        return NULL;
    }
    if (nsize > old && m->armed && (m->used > m->limit || nsize - old > m->limit - m->used)) {
        m->refusals++;
        return NULL; /* Lua collects and asks again, then raises LUA_ERRMEM */
    }
    void *p = sst__realloc(ptr, nsize);
    if (p != NULL) {
        m->used = m->used - old + nsize;
    }
    return p;
}

/* As luaL_newstate's: print the error object and let Lua abort. */
static int panic(lua_State *L) {
    const char *msg =
        lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "error object is not a string";
    lua_writestringerror("PANIC: unprotected error in call to Lua API (%s)\n", msg);
    return 0;
}

/* Lua's warnings, as luaL_newstate sets them up: off until "@on". */
static void warn_off(void *ud, const char *message, int tocont);
static void warn_on(void *ud, const char *message, int tocont);

static int warn_control(lua_State *L, const char *message, int tocont) {
    if (tocont || *(message++) != '@') {
        return 0;
    }
    if (strcmp(message, "off") == 0) {
        lua_setwarnf(L, warn_off, L);
    } else if (strcmp(message, "on") == 0) {
        lua_setwarnf(L, warn_on, L);
    }
    return 1;
}

static void warn_off(void *ud, const char *message, int tocont) {
    warn_control(ud, message, tocont);
}

static void warn_cont(void *ud, const char *message, int tocont) {
    lua_State *L = ud;
    lua_writestringerror("%s", message);
    if (tocont) {
        lua_setwarnf(L, warn_cont, L);
    } else {
        lua_writestringerror("%s", "\n");
        lua_setwarnf(L, warn_on, L);
    }
}

static void warn_on(void *ud, const char *message, int tocont) {
    if (warn_control(ud, message, tocont)) {
        return;
    }
    lua_writestringerror("%s", "Lua warning: ");
    warn_cont(ud, message, tocont);
}

lua_State *sst__lua_newstate(size_t limit, bool fixed) {
    sst__lua_mem *m = sst__calloc(1, sizeof *m);
    if (m == NULL) {
        return NULL;
    }
    m->limit = limit != 0 ? limit : SST_LUA_MEMORY_LIMIT_DEFAULT;
    m->fixed = fixed;
    lua_State *L = lua_newstate(mem_alloc, m);
    if (L == NULL) {
        sst__free(m);
        return NULL;
    }
    lua_atpanic(L, panic);
    lua_setwarnf(L, warn_off, L);
    luaL_openlibs(L);
    return L;
}

sst__lua_mem *sst__lua_mem_of(lua_State *L) {
    void *ud;
    return lua_getallocf(L, &ud) == mem_alloc ? ud : NULL;
}

void sst__lua_close(lua_State *L) {
    if (L == NULL) {
        return;
    }
    sst__lua_mem *m = sst__lua_mem_of(L);
    lua_close(L);
    SST_ASSERT(m->used == 0);
    sst__free(m);
}

bool sst__lua_arm(lua_State *L, bool on) {
    sst__lua_mem *m = sst__lua_mem_of(L);
    if (m == NULL) {
        return false;
    }
    bool was = m->armed;
    m->armed = on;
    return was;
}

int sst__lua_pcall(lua_State *L, int nargs, int nresults, int msgh, bool *over_limit) {
    sst__lua_mem *m = sst__lua_mem_of(L);
    *over_limit = false;
    if (m == NULL) {
        return lua_pcall(L, nargs, nresults, msgh);
    }
    bool outer = m->armed; /* restored for the Lua code that made this call, if any */
    unsigned long refusals = m->refusals, nested = m->nested, enomem = m->enomem;
    m->armed = true;
    int rc = lua_pcall(L, nargs, nresults, msgh);
    m->armed = outer;
    if (rc == LUA_ERRRUN && m->enomem != enomem) {
        rc = LUA_ERRMEM; /* this layer ran out of memory and raised it as an error */
    }
    /*
     * LUA_ERRMEM after a refusal: the limit (else a refusal that a collection
     * cured). Another error after a run of a graph failed so: that failure.
     */
    if ((rc == LUA_ERRMEM && m->refusals != refusals) || (rc != LUA_OK && m->nested != nested)) {
        *over_limit = true;
        /* What the failed call held is garbage now: give it back before anything else runs. */
        lua_gc(L, LUA_GCCOLLECT);
    }
    return rc;
}

void sst__lua_note_limit(lua_State *L) {
    sst__lua_mem *m = sst__lua_mem_of(L);
    if (m != NULL) {
        m->nested++;
    }
}

/* The code named by field "code" of the table at @p idx ("SST_EINVAL"), else SST_ETASK. */
static sst_code code_named(lua_State *L, int idx) {
    sst_code code = SST_ETASK;
    if (lua_getfield(L, idx, "code") == LUA_TSTRING) {
        const char *name = lua_tostring(L, -1);
        for (int c = 1; c < SST_CODE_COUNT; c++) {
            if (strcmp(sst_code_name((sst_code)c), name) == 0) {
                code = (sst_code)c;
            }
        }
    }
    lua_pop(L, 1);
    return code;
}

sst_code sst__lua_pcall_error(lua_State *L, int rc, bool over_limit, char *buf, size_t n,
                              const char **msg) {
    sst__lua_mem *m = sst__lua_mem_of(L);
    if (m != NULL && over_limit && rc == LUA_ERRMEM) {
        snprintf(buf, n, "Lua memory limit of %zu bytes exceeded", m->limit);
        *msg = buf;
        return SST_ELIMIT;
    }
    *msg = lua_tostring(L, -1);
    sst_code code = SST_ETASK;
    if (*msg == NULL && lua_type(L, -1) == LUA_TTABLE) { /* an error object {code, message} */
        code = code_named(L, -1);
        lua_getfield(L, -1, "message");
        *msg = lua_tostring(L, -1);
        lua_insert(L, -2); /* kept on the stack below the error while *msg is used */
    }
    if (*msg == NULL && luaL_getmetafield(L, -1, "__tostring") != LUA_TNIL) {
        lua_pop(L, 1);
        *msg = luaL_tolstring(L, -1, NULL); /* an error object: its message */
    }
    if (*msg == NULL) {
        *msg = "(error object is not a string)";
    }
    return over_limit ? SST_ELIMIT : rc == LUA_ERRMEM ? SST_ENOMEM : code;
}

sst_code sst__lua_call_failed(lua_State *L, int rc, bool over_limit, sst_code task_code,
                              sst_error *err, const char *prefix_fmt, ...) {
    char buf[SST_ERROR_MSG_MAX], prefix[SST_ERROR_MSG_MAX];
    const char *msg;
    sst_code code = sst__lua_pcall_error(L, rc, over_limit, buf, sizeof buf, &msg);
    va_list ap;
    va_start(ap, prefix_fmt);
    vsnprintf(prefix, sizeof prefix, prefix_fmt, ap);
    va_end(ap);
    return sst__error(err, code == SST_ETASK ? task_code : code, "%s%s%s", prefix,
                      prefix[0] != '\0' ? ": " : "", msg);
}
