/*
 * part.h — the life of a job and its partitions in czk-gpud (part.c).  This
 * module is the only code that changes gpud_part.state; every change goes
 * through one check against the table below, and an illegal one is a bug: it
 * is logged (czk_err, naming job, partition, from and to) and refused with
 * -EINVAL, the partition unchanged.
 *
 *   from      to         trigger (caller)
 *   QUEUED    SYNTH      a free slot and a synth: ASSIGN sent (sched.c)
 *   QUEUED    READY      a restarted gpud adopts a READY slot (sched.c, pools)
 *   QUEUED    DONE/FAILED  journal replay of DONE; spool or circuit gone (jobs.c)
 *   QUEUED    CANCELLED  CANCEL (or its replay)
 *   SYNTH     READY      READY from the synth, or its link closed after publishing READY
 *   SYNTH     QUEUED     the synth's link closed, or its lease ran out (front of the lane)
 *   SYNTH     FAILED     READY with an error, or a slot that is not READY
 *   SYNTH     CANCELLED  CANCEL: the synth is asked to stop (RELEASE)
 *   READY     GPU        a backend context takes it (worker.c)
 *   READY     QUEUED     the slot could not be moved to DMA (no longer ours)
 *   READY     CANCELLED  CANCEL: the slot is freed and RELEASEd
 *   GPU       FINALIZE   computed (worker.c)
 *   GPU       QUEUED     its slot failed the checksum before the copy: synthesised again (worker.c, twice at most)
 *   GPU       FAILED     copy-in or compute failed, or no memory for the result
 *   GPU       CANCELLED  CANCEL: the worker's result is discarded when it comes
 *   FINALIZE  DONE/FAILED  the finalizer's DONE (results.c), RESULT too large
 *   FINALIZE  CANCELLED  CANCEL: the computed result is dropped
 *   DONE, FAILED, CANCELLED: final, no way out.
 *
 * Journaled transitions (records in table.c): a job's acceptance (ACCEPT,
 * before the client hears ACCEPTED), a partition's DONE/FAILED (DONE), the
 * job's last partition (COMPLETE), a job's cancellation (CANCEL, before its
 * resources go).  The finalizer's DONE goes through the group commit
 * (ipc/commit.h): the record is written, the partition stays FINALIZE with
 * done_pending set, and it becomes DONE (event, counters, the job's end) in
 * the callback once a sync has made the record durable; the loop does not
 * wait for the disk.  Records settle in seq order, and a CANCEL first
 * settles the job's pending DONEs (clients.c), so memory always follows the
 * journal's order, as a replay does.  Every other record is synced before
 * its function goes on.  Journal replay calls the same functions with
 * g->replaying set, which only suppresses journal writes, EVENTs, counters
 * and logs.
 *
 * Slot accounting is kept here and nowhere else: a slot's partition and
 * synth, the synth's inflight count and the pool's in_use (and its gauge).
 * gpud_slot_clear() is the one place a slot leaves use.
 *
 * Loop thread only.
 */
#ifndef CZK_GPUD_PART_H
#define CZK_GPUD_PART_H

const char *gpud_part_state_name(int state);
int gpud_part_may_move(int from, int to); /* 1 when the table above allows it */
/* 1 while its synth still owes the READY of the slot it holds: SYNTH, or
 * CANCELLED there (not on a backend context, whose copy frees the slot) */
int gpud_part_awaits_ready(const gpud_part *p);

/* jobs: gpud_job_accept makes the job of an ACCEPT record in memory for
 * journal replay only (jobs.c; returns 0 with *out NULL when memory ran out,
 * and the replay fails); a live SUBMIT allocates its job before the ACCEPT is
 * written and adopts it once the record is durable (gpud_job_alloc,
 * gpud_job_adopt in gpud.h).  Then the end of a job, its cancellation
 * (journals CANCEL; `by`, when not NULL, is added as a watcher before the
 * CANCELLED event) */
int gpud_job_accept(gpud *g, const gpud_rec *r, gpud_job **out);
void gpud_job_finished(gpud *g, gpud_job *j, int state);
int gpud_job_cancel(gpud *g, gpud_job *j, czk_conn *by);
void gpud_job_maybe_release(gpud *g, gpud_job *j); /* free a final job's partitions when unreferenced */
int gpud_job_done_pending(const gpud_job *j);      /* 1 while a partition's DONE awaits its sync */
void gpud_job_free_parts(gpud *g, gpud_job *j);    /* shutdown */

/* partition transitions; each returns 0 or -EINVAL (illegal, logged) */
int gpud_part_assign(gpud *g, gpud_part *p, uint32_t pool, uint32_t slot, uint32_t gen, gpud_synth *s);
int gpud_part_ready(gpud *g, gpud_part *p, int from_ready_msg); /* 0: the synth died after READY */
int gpud_part_adopt(gpud *g, gpud_part *p, uint32_t pool, uint32_t slot, uint32_t gen);
int gpud_part_gpu(gpud *g, gpud_part *p);
/* takes res and pub; t_computed: when the compute ended (same clock as gpud_now) */
int gpud_part_computed(gpud *g, gpud_part *p, czk_groth16_any_msm_out *res, czk_fr *pub, uint64_t t_computed);
/* back to the front of its lane; what happens to the slot it holds: */
enum {
    GPUD_SLOT_RECLAIM,    /* ASSIGNED/FILLING slot reclaimed (generation + 1), back in use */
    GPUD_SLOT_QUARANTINE, /* kept by the synth, out of use, RELEASE asks it to stop (none when its link closed) */
    GPUD_SLOT_LOST,       /* somebody else's now: only our accounting is dropped */
};
int gpud_part_requeue(gpud *g, gpud_part *p, int slot_action);
int gpud_part_finish(gpud *g, gpud_part *p, int status, const char *reason, const czk_bytes *proof,
                     const czk_bytes *pub); /* -> DONE (status 0) or FAILED; journals DONE */

/* the end of a slot a partition holds, whatever the partition's state (a
 * cancelled partition keeps its slot until the synth or the copy lets go).
 * p may be freed by these when its job is over: do not touch it after. */
void gpud_part_slot_free(gpud *g, gpud_part *p, int send_release); /* READY/DMA -> FREE */
void gpud_part_slot_reclaim(gpud *g, gpud_part *p);                /* ASSIGNED/FILLING -> FREE */
void gpud_slot_clear(gpud *g, gpud_pool *gp, uint32_t slot);       /* accounting only */
void gpud_send_release(gpud *g, gpud_synth *s, uint32_t pool_id, uint32_t slot, uint32_t gen);

#endif
