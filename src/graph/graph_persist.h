/* SPDX-License-Identifier: MIT */
/*
 * The graph layer's "persist" level (see graph_int.h for the stack): a
 * durable thread's checkpoints written and read (persist.c), the
 * snapshots made of them (snapshot.c) and their history (history.c).
 * Includes only the "state" level below it.
 */
#ifndef SUPERSTEP_GRAPH_PERSIST_H
#define SUPERSTEP_GRAPH_PERSIST_H

#include "graph_int.h"

/* ---- durable threads (persist.c) ---- */

/*
 * Time travel into another namespace: @p th (a new namespace, loaded) starts with a copy
 * of the checkpoint @p from loaded (its state, tasks, siblings' writes and run), written
 * as a "fork" with no parent; the stored answers are dropped.
 */
sst_code sst__persist_copy(sst_graph_thread *th, const sst_graph_thread *from, sst_error *err);
/* Makes @p th (loaded) start from no state: its next checkpoint is a root of its own. */
sst_code sst__persist_empty(sst_graph_thread *th, sst_error *err);
/* Loads the checkpoint @p id (NULL: latest) into @p th's run fields. */
sst_code sst__persist_load(sst_graph_thread *th, const char *id, sst_error *err);
/*
 * Writes one checkpoint after th->last_id: a snapshot of @p state every K
 * checkpoints (and after sst__persist_rebase), else the delta @p groups.
 */
sst_code sst__persist_put(sst_graph_thread *th, int64_t step, const char *source,
                          const sst_value *state, const sst_value *groups, const sst_value *next,
                          const sst_value *writes_meta, const sst_invoke_opts *o, sst_error *err);
/*
 * Replaying from an older checkpoint: writes a copy of it (source "fork",
 * parent the replayed checkpoint) to run on, whose tasks all run again: the
 * stored resume values, pending writes and interrupts are dropped.
 */
sst_code sst__persist_replay(sst_graph_thread *th, const sst_invoke_opts *o, sst_error *err);
/* The next checkpoint hangs off @p parent_id (NULL: none) at @p parent_step, as a snapshot. */
sst_code sst__persist_rebase(sst_graph_thread *th, const char *parent_id, int64_t parent_step,
                             sst_error *err);
/* The routing of @p node (as if it had just written) on @p state: names and Sends. */
sst_code sst__route_as(const sst_compiled_graph *cg, size_t node, const sst_value *state,
                       sst_value **targets, sst_error *err);
/* The state stored by checkpoint record @p rec (replaying deltas onto a snapshot). */
sst_value *sst__persist_materialize(sst_graph_thread *th, const sst_value *rec, sst_error *err);
/*
 * The start of a run's checkpoints (sst__persist_start, and an entrypoint's start in
 * functional.c): clears th->restart and gives in *groups (new) the one delta group of the
 * input @p prepared (NULL: an empty group); with durability "exit" holds it back on @p th
 * instead (th->exit_groups; *groups NULL), to be written with the run's last checkpoint.
 */
sst_code sst__persist_start_groups(sst_graph_thread *th, const sst_value *prepared,
                                   const sst_invoke_opts *o, sst_value **groups, sst_error *err);
/* Writes the input and first loop checkpoints of a new run; sets th->last_id. */
sst_code sst__persist_start(sst_graph_thread *th, bool restart, const sst_value *input,
                            const sst_value *prepared, const sst_value *state_after,
                            const sst_value *rp, bool fork, const sst_invoke_opts *o,
                            sst_error *err);
/* Writes the checkpoint after a committed superstep. */
sst_code sst__persist_superstep(sst_graph_thread *th, const sst_superstep_stats *st,
                                const sst_invoke_opts *o, sst_error *err);
/*
 * Records on @p th's latest checkpoint what its resume point @p rp holds (the pending
 * writes and answers), @p interrupts (NULL: none) and skip_before; with @p error (NULL:
 * none) the thread's status is error, else idle when @p idle (a cancelled run), else
 * interrupted. Written in the caller's thread, after every checkpoint handed to the
 * writer (durability "async") is stored.
 */
sst_code sst__persist_writes(sst_graph_thread *th, const sst_value *rp, const sst_value *interrupts,
                             bool skip_before, const char *error, bool idle, sst_error *err);
/*
 * The snapshots (sst_graph_get_state's, subgraph tasks' configs included) of the records
 * @p list (newest first, as sst__record_list gives them), each task's result read from
 * its newer neighbour when that is its child; @p newer (NULL: none) is the record above
 * the first. @return new array; NULL on failure.
 */
sst_value *sst__snapshots_of(sst_graph_thread *t, const sst_value *list, const char *newer,
                             sst_error *err);
/* Records how a run stopped (pending writes, interrupts) on the latest checkpoint. */
sst_code sst__persist_stop(sst_graph_thread *th, const sst_run_result *rr,
                           const sst_value *interrupts, bool skip_before, const sst_invoke_opts *o,
                           sst_error *err);
/* Waits for the checkpoints @p th handed to its writer (none: SST_OK at once). */
sst_code sst__persist_flush(sst_graph_thread *th, sst_error *err);
/* The resume point that starts a run at @p superstep with @p targets (names and Sends). */
sst_value *sst__start_point(const sst_compiled_graph *cg, uint64_t superstep,
                            const sst_value *targets, sst_error *err);

/* ---- snapshots (snapshot.c) ---- */

/*
 * LangGraph's metadata "parents" of a checkpoint of @p t with metadata @p meta: each
 * ancestor graph's namespace -> the checkpoint its task ran from (new; {} for a root
 * graph's). Read back through the "pp" chain, one record a level (the last answer kept).
 */
sst_value *sst__parents_of(sst_graph_thread *t, const sst_value *meta, sst_error *err);
/*
 * LangGraph's StateSnapshot of record @p rec (with body and writes) whose
 * state is @p state; @p child is the record that committed rec's tasks (for
 * their results in the history) or NULL; @p head applies successful pending
 * writes to the values.
 */
sst_value *sst__snapshot(const sst_graph_thread *t, const sst_value *rec, const sst_value *state,
                         const sst_value *child, bool head, sst_error *err);

/*
 * Snapshot @p snap (taken) of @p t with each task of a subgraph node given its "state":
 * the subgraph's config {configurable: {thread_id, checkpoint_ns}}, or with @p nested the
 * subgraph's own snapshot (nested in turn) when it has checkpoints. NULL on failure.
 */
sst_value *sst__snapshot_subgraphs(sst_graph_thread *t, sst_value *snap, bool nested,
                                   sst_error *err);

#endif /* SUPERSTEP_GRAPH_PERSIST_H */
