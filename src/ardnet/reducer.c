/* reducer.c - --every and --max-rate (see reducer.h). */
#include "reducer.h"

void ardn_reducer_init(struct ardn_reducer *red, uint64_t every, double max_rate)
{
    *red = (struct ardn_reducer){.every = every};
    if (max_rate > 0)
        red->period_ns = (int64_t)(1e9 / max_rate);
}

enum ardn_red_action ardn_reducer_offer(struct ardn_reducer *red, int64_t now_ns, bool *replaced)
{
    *replaced = false;
    red->seen++;
    if (red->every > 1 && red->seen % red->every != 0)
        return ARDN_RED_DROP;
    *replaced = red->pending;
    if (red->period_ns && now_ns < red->next_ns) {
        red->pending = true;
        return ARDN_RED_HOLD;
    }
    red->pending = false;
    return ARDN_RED_SEND;
}

bool ardn_reducer_due(const struct ardn_reducer *red, int64_t now_ns)
{
    return red->pending && now_ns >= red->next_ns;
}

void ardn_reducer_sent(struct ardn_reducer *red, int64_t now_ns)
{
    red->pending = false;
    /* Keep a steady grid under load; the first forward, or one after a quiet spell, starts
     * a new one. */
    if (red->period_ns)
        red->next_ns = red->started && now_ns < red->next_ns + red->period_ns
                           ? red->next_ns + red->period_ns
                           : now_ns + red->period_ns;
    red->started = true;
}

int64_t ardn_reducer_timeout(const struct ardn_reducer *red, int64_t now_ns, int64_t idle_ns)
{
    if (!red->pending)
        return idle_ns;
    int64_t t = red->next_ns - now_ns;
    return t < 0 ? 0 : (t > idle_ns ? idle_ns : t);
}
