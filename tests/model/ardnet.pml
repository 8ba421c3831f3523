/*
 * ardnet.pml - SPIN model of one connection: the slot ring with per-slot sequence locks,
 * the head, and the futex word with its sleeper bit (src/lib/port.c), with a writer that may
 * be killed at any step and replaced by a new writer. On attach the new writer moves the futex
 * word and wakes every sleeper: the dead one may have published a packet without waking.
 *
 * Checked: a reader never returns a torn packet (both words of the payload carry the packet's
 * own sequence number), returned sequence numbers strictly increase, and no reader sleeps
 * forever while a newer packet exists (every reader ends having returned the last packet:
 * a lost wake-up shows as an invalid end state).
 *
 * tests/model/check.sh runs it, and also runs a mutant without the writer's takeover step
 * (-DNO_TAKEOVER), which must fail: proof that the model can find a lost wake-up.
 *
 * -DLOAN models the zero-copy send (ard_send_loan / ard_send_commit): the same steps as a send,
 * with the slot scribbled over between the mark and the packet's words (the loan only
 * stretches the writer's copy). Its mutant -DLOAN_NO_MARK (a loan that does not mark the slot
 * as being written) must fail with a torn packet.
 */
#ifndef NSLOTS
#define NSLOTS 2
#endif
#ifndef MAXSEQ
#define MAXSEQ 5
#endif
#define CRASHES 1

byte head = 0;
byte lock[NSLOTS];       /* 2*seq+1 while writing, 2*seq complete */
byte data[2 * NSLOTS];   /* two payload words per slot, copied one at a time */
byte wake = 0;           /* sends: seq << 2; writer attach: (n << 2) | 2; bit 0: sleeper */
bool asleep[2];          /* reader i waits in FUTEX_WAIT */
byte crashes = 0;

/* The writer may die before any step; a replacement restarts from the published head. */
#define STEP if :: crashes < CRASHES -> crashes++; goto attach :: true -> skip fi

inline futex_wake_all() {
    atomic { asleep[0] = false; asleep[1] = false }
}

active proctype writer()
{
    byte seq, s, old;
attach:
#ifndef NO_TAKEOVER
    atomic { wake = (((wake >> 2) + 1) << 2) | 2 };  /* a value no send ever stores */
    futex_wake_all();                                /* sleepers already asleep are woken */
#endif
    seq = head + 1;
    do
    :: seq > MAXSEQ -> break
    :: else ->
        s = seq % NSLOTS;
#ifndef LOAN_NO_MARK
        lock[s] = 2 * seq + 1;  STEP;
#endif
#ifdef LOAN
        /* ard_send_loan: the caller fills the slot in place, for as long as it likes, in any
         * order and through values that are not the packet (here: 0, second word first); the
         * commit is the unlock below. A crash in between is an abandoned loan. */
        data[2 * s + 1] = 0;    STEP;
        data[2 * s] = 0;        STEP;
#endif
        data[2 * s] = seq;      STEP;
        data[2 * s + 1] = seq;  STEP;
        lock[s] = 2 * seq;      STEP;
        head = seq;             STEP;
        atomic { old = wake; wake = seq << 2 };  STEP;
        if
        :: old & 1 -> futex_wake_all()
        :: else -> skip
        fi;
        seq++
    od
}

proctype reader(byte id)
{
    byte last = 0, h, s, v1, v2, d0, d1, w;
    do
    :: last == MAXSEQ -> break
    :: else ->
        h = head;
        if
        :: h != 0 && h != last ->
            s = h % NSLOTS;
            v1 = lock[s];
            if
            :: v1 == 2 * h ->
                d0 = data[2 * s];
                d1 = data[2 * s + 1];
                v2 = lock[s];
                if
                :: v2 == v1 ->
                    assert(d0 == h && d1 == h);   /* not torn */
                    assert(h > last);             /* strictly newer */
                    last = h
                :: else -> skip                   /* lapped: read head again */
                fi
            :: else -> skip
            fi
        :: else ->
            /* wait_new(): load word, check head, announce, sleep unless the word moved */
            w = wake;
            if
            :: head != 0 && head != last -> skip
            :: else ->
                if
                :: (w & 1) == 0 ->
                    atomic {
                        if
                        :: wake == w -> wake = w | 1; w = w | 1
                        :: else -> w = 255        /* CAS failed: loop */
                        fi
                    }
                :: else -> skip
                fi;
                if
                :: w != 255 ->
                    atomic { if :: wake == w -> asleep[id] = true :: else -> skip fi };
                    (asleep[id] == false)
                :: else -> skip
                fi
            fi
        fi
    od
}

init
{
    atomic { run reader(0); run reader(1) }
}
