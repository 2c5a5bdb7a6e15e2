/*
 * queue.c — czk-gpud's queues of partitions (a leaf): three priority lanes of
 * P_QUEUED partitions (FIFO inside a lane, lane 0 first) and the queue of
 * P_READY ones waiting for a backend context.  Membership only: part.c
 * decides who is where.  Loop thread only.
 */
#include "common/runtime/metrics.h"
#include "gpud/gpud.h"

static void lane_gauges(gpud *g)
{
    for (int l = 0; l < GPUD_LANES; l++) {
        int64_t n = 0;
        for (gpud_part *p = g->lane_head[l]; p; p = p->next)
            n++;
        czk_metric_set(g->m_lane[l], n);
    }
}

void gpud_lane_push(gpud *g, gpud_part *p, int front)
{
    uint32_t l = p->job->lane;
    p->prev = p->next = NULL;
    if (front) {
        p->next = g->lane_head[l];
        if (p->next)
            p->next->prev = p;
        else
            g->lane_tail[l] = p;
        g->lane_head[l] = p;
    } else {
        p->prev = g->lane_tail[l];
        if (p->prev)
            p->prev->next = p;
        else
            g->lane_head[l] = p;
        g->lane_tail[l] = p;
    }
    p->linked = 1;
    lane_gauges(g);
}

void gpud_ready_push(gpud *g, gpud_part *p)
{
    p->next = NULL;
    p->prev = g->ready_tail;
    if (p->prev)
        p->prev->next = p;
    else
        g->ready_head = p;
    g->ready_tail = p;
    p->linked = 1;
}

void gpud_unlink(gpud *g, gpud_part *p)
{
    gpud_part **head, **tail;
    if (!p->linked)
        return;
    if (p->state == P_QUEUED) {
        head = &g->lane_head[p->job->lane];
        tail = &g->lane_tail[p->job->lane];
    } else {
        head = &g->ready_head;
        tail = &g->ready_tail;
    }
    if (p->prev)
        p->prev->next = p->next;
    else
        *head = p->next;
    if (p->next)
        p->next->prev = p->prev;
    else
        *tail = p->prev;
    p->prev = p->next = NULL;
    p->linked = 0;
    if (p->state == P_QUEUED)
        lane_gauges(g);
}

gpud_part *gpud_lane_first(const gpud *g)
{
    for (int l = 0; l < GPUD_LANES; l++)
        if (g->lane_head[l])
            return g->lane_head[l];
    return NULL;
}
