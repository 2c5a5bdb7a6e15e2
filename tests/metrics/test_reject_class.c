/*
 * test_reject_class.c — czk_gpud_rejections_total{reason}: every error code
 * a REJECTED can carry (gpud/jobs.c, gpud/intake.c) lands in its documented
 * class, and gpud_count_reject bumps exactly that class's counter, as the
 * rendered metrics show.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpud/gpud.h"

#define T_STOP_AT_FAILURE
#include "tests/common/test_util.h"

int main(void)
{
    static const struct {
        int code, cls;
        const char *name;
    } cases[] = {
        {-EBUSY, GPUD_REJ_QUEUE_FULL, "queue_full"},
        {-EINVAL, GPUD_REJ_BAD_WITNESS, "bad_witness"},
        {-EFBIG, GPUD_REJ_BAD_WITNESS, "bad_witness"},
        {-ENOENT, GPUD_REJ_UNKNOWN_CIRCUIT, "unknown_circuit"},
        {-EEXIST, GPUD_REJ_DUPLICATE_MISMATCH, "duplicate_mismatch"},
        {-E2BIG, GPUD_REJ_TOO_MANY_PARTITIONS, "too_many_partitions"},
        {-EMSGSIZE, GPUD_REJ_TOO_MANY_PUBLICS, "too_many_publics"},
        {-EAGAIN, GPUD_REJ_IN_PROGRESS, "in_progress"},
        {-ENOSPC, GPUD_REJ_JOURNAL_FULL, "journal_full"},
        {-EDQUOT, GPUD_REJ_JOURNAL_FULL, "journal_full"},
        {-ENOMEM, GPUD_REJ_OUT_OF_MEMORY, "out_of_memory"},
        {-EIO, GPUD_REJ_IO_ERROR, "io_error"},
        {-EROFS, GPUD_REJ_IO_ERROR, "io_error"},
    };
    static gpud G;
    char label[64], want[128], *buf = malloc(1 << 20);
    unsigned seed = (unsigned)time(NULL);
    int counts[GPUD_REJ_COUNT] = {0};
    czk_metrics *m;

    CHECK(buf && czk_metrics_new(&m) == 0);
    for (int k = 0; k < GPUD_REJ_COUNT; k++) {
        snprintf(label, sizeof(label), "class=\"%d\"", k);
        CHECK((G.m_rejects[k] = czk_metrics_add(m, CZK_METRIC_COUNTER, "t_rejections_total", label, "x")));
    }
    printf("seed %u\n", seed);
    srand(seed);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK(gpud_reject_class(cases[i].code) == cases[i].cls);
    for (int n = 0; n < 200; n++) { /* random rejections, counted per class */
        size_t i = (size_t)rand() % (sizeof(cases) / sizeof(cases[0]));
        gpud_count_reject(&G, cases[i].code);
        counts[cases[i].cls]++;
    }
    CHECK(czk_metrics_render(m, buf, 1 << 20) > 0);
    for (int k = 0; k < GPUD_REJ_COUNT; k++) {
        snprintf(want, sizeof(want), "t_rejections_total{class=\"%d\"} %d\n", k, counts[k]);
        CHECK(strstr(buf, want));
    }
    czk_metrics_free(m);
    free(buf);
    printf("rejection classes ok\n");
    return 0;
}
