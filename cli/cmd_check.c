/* SPDX-License-Identifier: MIT */
/*
 * superstep check [--db PATH] [--repair]: SQLite's integrity check and every
 * record's checksum; prints each damaged checkpoint. --repair moves each
 * damaged thread's head back to its newest intact checkpoint, after copying
 * the file. Exit 0: no damage (or, with --repair, every thread readable
 * again); 1: damage remains or the file cannot be checked; 2: usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_args.h"
#include "cmd_check.h"
#include "cmd_usage.h"
#include "superstep/checkpoint.h"
#include "superstep/postgres.h"

static void print_damage(const sst_sqlite_damage *d, void *ud) {
    (void)ud;
    if (d->thread == NULL) {
        printf("damaged: the file: %s\n", d->problem);
    } else if (d->checkpoint_id == NULL) {
        printf("damaged: thread '%s': %s\n", d->thread, d->problem);
    } else {
        printf("damaged: thread '%s' checkpoint %s: %s\n", d->thread, d->checkpoint_id, d->problem);
    }
}

int sst_cli_check(int argc, char **argv) {
    const char *db = NULL;
    bool repair = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--repair") == 0) {
            repair = true;
        } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            db = argv[++i];
        } else if (strcmp(argv[i], "--db") == 0) {
            return sst_cli_usage_error("check", "option '%s' needs a value", argv[i]);
        } else {
            return sst_cli_usage_error("check", "unexpected argument '%s'", argv[i]);
        }
    }
    db = sst_cli_default_db(db);
    if (sst_pg_is_url(db)) {
        fprintf(stderr, "superstep check: checks SQLite files; PostgreSQL checks its own pages "
                        "(see its data_checksums and amcheck)\n");
        return 1;
    }
    sst_sqlite_check_report rep;
    sst_error err = {0};
    if (sst_sqlite_check(db, repair, print_damage, NULL, &rep, &err) != SST_OK) {
        fprintf(stderr, "superstep: %s\n", err.msg);
        return 1;
    }
    printf("%s: %zu checkpoints checked, %zu problem%s found%s\n", db, rep.checkpoints, rep.damaged,
           rep.damaged == 1 ? "" : "s",
           rep.file_ok ? "" : "; SQLite's own structures are damaged: restore a backup");
    if (rep.threads_repaired > 0) {
        printf("repaired: %zu thread%s moved back to an intact checkpoint (%zu checkpoints "
               "removed); the file before repair is %s\n",
               rep.threads_repaired, rep.threads_repaired == 1 ? "" : "s", rep.removed, rep.backup);
    }
    if (rep.damaged == 0) {
        return 0;
    }
    return repair && rep.file_ok ? 0 : 1;
}
