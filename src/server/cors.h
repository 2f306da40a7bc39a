/* SPDX-License-Identifier: MIT */
/*
 * Cross-origin requests (CORS) as LangGraph's server answers them, configured by
 * langgraph.json's "http": {"cors": {...}} (cors.c, docs/server.md "Browsers on other
 * origins"): the preflight OPTIONS, and the Access-Control-* headers of every response.
 */
#ifndef SUPERSTEP_SERVER_CORS_H
#define SUPERSTEP_SERVER_CORS_H

#include "server_int.h"

struct MHD_Response;

typedef struct srv_cors srv_cors;

/*
 * The rules of langgraph.json's "http.cors" object @p conf (borrowed; NULL: the default,
 * loopback origins only), new; NULL with SST_EINVAL naming the member of @p file that is
 * wrong (an unknown member, a wrong type, a bad allow_origin_regex), or SST_ENOMEM.
 */
srv_cors *srv_cors_new(const sst_value *conf, const char *file, sst_error *err);
void srv_cors_free(srv_cors *c);

/*
 * When the request on @p conn is a CORS preflight (OPTIONS with Origin and
 * Access-Control-Request-Method), queues its answer (200 with the rules, or 400 naming
 * what is not allowed) and returns true; else false. Preflights need no token.
 */
bool srv_cors_preflight(const srv_cors *c, struct MHD_Connection *conn, const char *method,
                        int *queued);

/* Adds the Access-Control-* headers the request on @p conn gets (none when it has no
 * Origin, or one not allowed) to @p resp. */
void srv_cors_apply(const srv_cors *c, struct MHD_Connection *conn, struct MHD_Response *resp);

#endif
