/*
 * waitv.pml - SPIN model of ard_wait (src/lib/port.c): one reader waits on two connections at
 * once with futex_waitv, while each connection's writer sends; the writer of connection 0 may
 * be killed at any step and replaced (the new writer moves the futex word and wakes all).
 * The slot ring is left out: ardnet.pml checks it; here the question is the wake-up.
 *
 * Per round the reader loads both futex words, then looks at both heads; with nothing new it
 * sets the sleeper bit on each word whose bit is clear (a failed CAS means news: look again),
 * then sleeps on both words at once, unless one of them changed (futex_waitv's value check).
 * A send swaps seq << 2 into its word and wakes the word's sleepers if the bit was set.
 *
 * Checked: the reader takes strictly newer packets, and never sleeps for ever while a newer
 * packet exists on either connection (it must end having taken the last packet of both; a lost
 * wake-up is an invalid end state). tests/model/check.sh also runs a mutant that announces
 * the sleeper on the first word only (-DANNOUNCE_FIRST_ONLY), which must fail.
 */
#ifndef MAXSEQ
#define MAXSEQ 3
#endif

byte head[2];
byte wake[2];
bool asleep = false; /* the reader sleeps in futex_waitv on both words */
byte crashes = 0;

inline futex_wake(c) {
    asleep = false /* the reader is queued on both words: a wake of either ends its sleep */
}

#define STEP(c) if :: c == 0 && crashes < 1 -> crashes++; goto attach :: else -> skip fi

proctype writer(byte c)
{
    byte seq, old;
attach:
    atomic { wake[c] = (((wake[c] >> 2) + 1) << 2) | 2; futex_wake(c) };
    seq = head[c] + 1;
    do
    :: seq > MAXSEQ -> break
    :: else ->
        head[c] = seq;                                STEP(c);
        atomic { old = wake[c]; wake[c] = seq << 2 }; STEP(c);
        if
        :: old & 1 -> futex_wake(c)
        :: else -> skip
        fi;
        seq++
    od
}

proctype reader()
{
    byte last[2], w[2], h, c;
    bool moved;
    do
    :: last[0] == MAXSEQ && last[1] == MAXSEQ -> break
    :: else ->
        w[0] = wake[0];
        w[1] = wake[1];
        if
        :: head[0] != last[0] || head[1] != last[1] ->
            /* ready: take what is new (ard_tryrec on each ready port) */
            c = 0;
            do
            :: c == 2 -> break
            :: else ->
                h = head[c];
                if
                :: h != last[c] -> assert(h > last[c]); last[c] = h
                :: else -> skip
                fi;
                c++
            od
        :: else ->
            moved = false;
            c = 0;
            do
            :: c == 2 || moved -> break
            :: else ->
#ifdef ANNOUNCE_FIRST_ONLY
                if :: c == 1 -> goto next :: else -> skip fi;
#endif
                if
                :: (w[c] & 1) == 0 ->
                    atomic {
                        if
                        :: wake[c] == w[c] -> wake[c] = w[c] | 1; w[c] = w[c] | 1
                        :: else -> moved = true
                        fi
                    }
                :: else -> skip
                fi;
#ifdef ANNOUNCE_FIRST_ONLY
next:
#endif
                c++
            od;
            if
            :: !moved ->
                atomic { if :: wake[0] == w[0] && wake[1] == w[1] -> asleep = true :: else -> skip fi };
                (asleep == false)
            :: else -> skip
            fi
        fi
    od
}

init
{
    atomic { run writer(0); run writer(1); run reader() }
}
