/* SPDX-License-Identifier: MIT */
/* GET /ok and GET /info. */
#include "server_int.h"
#include "superstep/version.h"

void srv_ok(srv_request *r, srv_response *res) {
    SST_UNUSED(r);
    sst_error err = {0};
    srv_json(res, 200, sst__set_take(sst_object_empty(), "ok", sst_bool(true), &err));
}

void srv_info(srv_request *r, srv_response *res) {
    SST_UNUSED(r);
    sst_error err = {0};
    sst_value *flags = sst__set_take(sst_object_empty(), "assistants", sst_bool(true), &err);
    flags = sst__set_take(flags, "crons", sst_bool(true), &err);
    flags = sst__set_take(flags, "langsmith", sst_bool(false), &err);
    flags = sst__set_take(flags, "store", sst_bool(true), &err);
    sst_value *o =
        sst__set_take(sst_object_empty(), "version", sst_string_new(sst_version(), &err), &err);
    o = sst__set_take(o, "context", sst_string_new("superstep", &err), &err);
    o = sst__set_take(o, "flags", flags, &err);
    srv_json(res, 200, o);
}
