/* SPDX-License-Identifier: MIT */
/*
 * The web page's files (src/server/web/), built into the server by
 * cmake/embed_web.cmake: web_files.c in the build tree defines the table.
 */
#ifndef SST_SERVER_WEB_H
#define SST_SERVER_WEB_H

#include <stddef.h>

typedef struct srv_web_asset {
    const char *name;          /* the file's name, served at /ui/<name> */
    const unsigned char *data; /* its bytes (NUL-terminated past len) */
    size_t len;
} srv_web_asset;

/* Every file, ended by an entry whose name is NULL. */
extern const srv_web_asset srv_web_assets[];

#endif /* SST_SERVER_WEB_H */
