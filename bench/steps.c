/*
 * steps.c - the receive side of ardbench's ping-pong taken apart (white-box: ardi.h), so that
 * what each step of ard_poll + ard_tryrec costs shows as the difference between two rows of
 * one run: the poll of the head word and a bare copy, then the slot's sequence-lock check
 * around the copy, then the send times and the packet info. The API row (pp-poll-stamped)
 * adds the calls and their argument checks. See docs/performance.md.
 */
#include "ardi.h"
#include "bench.h"

static bool aborted(struct bench_shared *sh)
{
    return atomic_load_explicit(&sh->abort, memory_order_relaxed) != 0;
}

/* Spin until the head moves past *last; the new head. */
static uint64_t wait_head(struct bench_shared *sh, const struct ardi_map *m, uint64_t last)
{
    for (unsigned n = 1;; n++) {
        uint64_t h = atomic_load_explicit(&m->seg->head, memory_order_acquire);
        if (h != last)
            return h;
        ardi_cpu_relax();
        if ((n & 1023) == 0 && aborted(sh))
            return 0;
    }
}

int bench_step_receive(struct bench_shared *sh, enum bench_method m, struct ard_port *in,
                       unsigned char *buf)
{
    /* The port's own last sequence number: the API rows of the run share the port. */
    uint64_t *last = &in->last_seq;
    const struct ardi_map *map = &in->map;
    size_t size = in->size;
    uint64_t h = wait_head(sh, map, *last);
    if (h == 0)
        return 1;
    if (m == BM_PP_HEAD) {
        memcpy(buf, ardi_slot_at(map, h) + 1, size);
        *last = h;
        return 0;
    }
    int64_t mono, real;
    if (m == BM_PP_SEQ) {
        for (unsigned tries = 0; !ardi_slot_read(map, h, buf, size, &mono, &real); tries++) {
            if (tries == ARDI_STUCK_TRIES)
                return 1;
            h = atomic_load_explicit(&map->seg->head, memory_order_acquire);
        }
        *last = h;
        return 0;
    }
    /* BM_PP_INFO: what take_newest does, but its calls */
    if (ardi_read_newest(map, buf, size, &h, &mono, &real) != 1 || h < *last)
        return 1;
    in->info = (struct ard_info){
        .seq = h, .mono_ns = mono, .real_ns = real, .skipped = *last ? h - *last - 1 : 0};
    *last = h;
    return 0;
}
