/*
 * ardn.h - internal declarations of the ardnet program (routes, endpoints, configuration).
 */
#ifndef ARDN_H
#define ARDN_H

#include "ard_common.h"
#include "ardc_opt.h"
#include "ardnet.h"
#include "reducer.h"
#include "seal.h"
#include "wire.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* Exit codes (docs/ardnet.md). */
#define ARDN_EXIT_OK ARDC_EXIT_OK
#define ARDN_EXIT_USAGE ARDC_EXIT_USAGE /* bad option, bad YAML, unknown host, unknown size */
#define ARDN_EXIT_SYSTEM                                                                           \
    ARDC_EXIT_SYS /* socket/bind failure, port in use, attach or realtime refused */

#define ARDN_MAX_OUT 16
#define ARDN_EP_TEXT 256

enum ardn_ep_kind { ARDN_EP_LOCAL, ARDN_EP_UDP, ARDN_EP_ROS2 };

struct ardn_dds_ep; /* dds.c: a ros2: endpoint's topic, writer or reader */

/* --qos of ros2: endpoints (route key "qos"), a set of these; 0 is best effort, volatile. */
#define ARDN_QOS_RELIABLE 1u
#define ARDN_QOS_TRANSIENT_LOCAL 2u

struct ardn_ep {
    enum ardn_ep_kind kind;
    char text[ARDN_EP_TEXT];      /* as written, for messages */
    char conn[ARD_MAX_NAME + 1];  /* LOCAL */
    struct sockaddr_storage addr; /* UDP: destination (out) or listen address (in) */
    socklen_t addrlen;
    ard_port *port;           /* LOCAL, once attached */
    char topic[ARDN_EP_TEXT]; /* ROS2: the ROS 2 topic name ("/arm/state") */
    struct ardn_dds_ep *dds;  /* ROS2: once opened (dds.c) */
    /* LOCAL: the port's name; "": after the connection */
    char port_name[ARD_MAX_NAME + 1];
};

/* Counters: written by the route's thread, read by the main thread (relaxed atomics). */
enum ardn_counter {
    ARDN_C_RECEIVED,    /* packets taken from the input (valid datagrams or local packets) */
    ARDN_C_SENT,        /* datagrams sent + local packets published, summed over outputs */
    ARDN_C_SEND_ERRORS, /* failed sendto (e.g. no route to host); the packet is not queued */
    ARDN_C_RECV_ERRORS, /* UDP input: failed receive calls (each followed by a pause) */
    ARDN_C_REDUCED,     /* packets not forwarded because of --every / --max-rate */
    ARDN_C_SKIPPED,     /* local input: packets the writer sent that this route never saw */
    ARDN_C_SUPERSEDED,  /* UDP input: valid datagrams replaced by a newer one read in the same
                         * burst (latest value: a backlog is not replayed) */
    ARDN_C_FRAGMENTS,   /* fragment datagrams sent (UDP outputs), or kept for reassembly
                         * (UDP input) */
    ARDN_C_PACKED,      /* packets sent in (UDP outputs) or taken from (UDP input) packed
                         * datagrams shared with other connections */
    /* ros2: DDS peers on the topic whose QoS does not match the endpoint's (counted by
     * Cyclone's listener thread, atomically) */
    ARDN_C_QOS_INCOMPATIBLE,
    ARDN_C_PACED, /* --max-bandwidth: packets abandoned part way through their pacing
                   * for a newer one (their rest never sent) */
    ARDN_C_NCOUNTERS
};

struct ardn_counters {
    _Atomic uint64_t c[ARDN_C_NCOUNTERS];
    _Atomic uint64_t drop[ARDW_NCAUSES]; /* index by enum ardw_cause; [0] unused */
};

struct ardn_dest;
struct ardn_input;

/* A route as its configuration gives it (the command line or a route file: config.c), checked
 * by ardn_route_finish; ardn_route_open works out the rest from it into struct ardn_route. */
struct ardn_route_cfg {
    char name[ARD_MAX_NAME + 1];
    struct ardn_ep in;
    struct ardn_ep out[ARDN_MAX_OUT];
    int nout;
    size_t size;                 /* 0: take it from the local connection */
    char type[ARD_MAX_TYPE + 1]; /* "" with type_given false: take it from the connection */
    bool type_given;
    uint32_t conn_id; /* 0: derived from the local connection name */
    bool conn_id_given;
    char from[ARDN_EP_TEXT]; /* configured peer "HOST[:PORT]", "" for any */
    struct sockaddr_storage from_addr;
    socklen_t from_len;
    bool from_port;   /* peer port given: compare it too */
    uint64_t every;   /* 0/1: every packet */
    double max_rate;  /* 0: unlimited */
    double max_bw;    /* --max-bandwidth, bytes a second; 0: unlimited */
    size_t max_dgram; /* largest datagram sent (UDP payload bytes); 0: the default */
    unsigned qos;     /* ros2: endpoints: ARDN_QOS_* */
    bool qos_given;
    char ros2_type[ARD_MAX_NAME + 48]; /* --ros2-type: DDS type name, "" for the default */
};

/* A route: its configuration, and its run-time state (set up by ardn_route_open and
 * ardn_plan_open, used by the route's threads). */
struct ardn_route {
    struct ardn_route_cfg cfg;

    /* What ardn_route_open works out from cfg and the connections (a UDP input may learn
     * size and type from its sender later). */
    size_t size;                 /* packet size, 0: not known yet */
    char type[ARD_MAX_TYPE + 1]; /* type descriptor, "" for none */
    bool type_given;             /* the type is known (given, the connection's or learnt) */
    uint32_t conn_id;            /* connection id on the wire */

    /* Set up by ardn_route_open, then ardn_plan_open (the sockets, shared between routes). */
    int fd_in;                /* UDP input socket, -1 (its input's, shared) */
    int out_fd[ARDN_MAX_OUT]; /* connected socket per UDP output, -1 (its destination's) */
    struct ardn_dest *dest[ARDN_MAX_OUT]; /* UDP outputs: the shared destination */
    int txq[ARDN_MAX_OUT];                /* UDP outputs: queue index in its sending thread */
    struct ardn_input *input;             /* UDP input: the shared listening socket */
    struct ardn_reducer red;              /* --every / --max-rate state */
    bool fresh;                           /* UDP input: a packet was delivered in this batch */
    struct ardw_hdr newest;               /* its header */
    bool desc_due;                        /* send the descriptor with the queued packet */
    struct ardw_hdr tx_h;                 /* header of the packet in r->tx */
    bool in_reported;                     /* local input: a receive error was reported */
    bool in_from_start;                   /* local input: empty when attached, nothing taken */
    int64_t bad_until;                    /* local input: left out of the wait until then */
    uint8_t *buf;                         /* newest packet taken in, host order (size bytes) */
    uint8_t *held;            /* packet being forwarded or held by --max-rate (swapped with buf) */
    struct ardw_hdr held_hdr; /* its header */
    uint8_t *tx;              /* payload being sent, wire order (size bytes) */
    uint8_t *tx_hdr;          /* headers of its datagrams, ARDW_LFRAG_HDR_SIZE apart */
    struct mmsghdr *tx_msg;   /* one per datagram of a packet */
    struct iovec *tx_iov;     /* two per datagram: header, payload piece */
    unsigned nfrag;           /* datagrams per packet (1: not fragmented) */
    size_t chunk;             /* payload bytes per fragment */
    struct ardw_track track;  /* newest delivered (epoch, seq) of a UDP input */
    struct ardw_reasm reasm;  /* the fragmented packet in progress of a UDP input */
    uint8_t *reasm_buf;       /* its own buffer (size bytes), when not assembled in a loan */
    /* UDP input to one local output, no --every/--max-rate: fragments are assembled straight
     * into the output's loaned slot (ard_send_loan), published with ard_send_commit once the
     * packet is complete; `loaned`: a complete packet is in the slot, not yet published. */
    bool asm_loan;
    bool loaned;
    bool skip_offer;    /* the batch's whole packet was overtaken by one published from a loan */
    const uint8_t *txp; /* payload of the packet being sent, wire order (r->held or r->tx) */
    /* Per output: the packet in r->tx is being paced out (--max-bandwidth) or sent in rounds
     * of fragments (pace_busy), its next fragment, and when the next datagram may go (the
     * sending thread's clock; paced only). */
    uint32_t pace_busy;
    unsigned pace_next[ARDN_MAX_OUT];
    int64_t pace_t[ARDN_MAX_OUT];
    struct ard_field *fields;
    size_t nfields;
    uint64_t type_hash;
    uint32_t queued;     /* bit i: output i's packet is queued in the sending thread */
    bool learning;       /* UDP input: size and type still to come from the sender */
    bool learn_reported; /* taking them failed, and was reported */
    uint8_t *desc;       /* descriptor datagram sent to UDP outputs, NULL for none */
    size_t desc_len;
    int64_t desc_next_ns;
    /* UDP input: a sender of another size or type (reported once) */
    char peer_type[ARD_MAX_TYPE + 1]; /* descriptor of the last descriptor datagram */
    bool mismatch_reported;
    int64_t mismatch_ns; /* first datagram dropped for size or type, 0: none */
    struct ardw_hdr mismatch_hdr;
    struct sockaddr_storage mismatch_src;
    struct ardn_counters cnt;
    /* UDP input: the payload of the packet in newest, wire order, still in the receive
     * buffer (delivered by reference); NULL: it is in buf. */
    const uint8_t *wire;
    /* With a key (ardn_seal.on): the packet in tx sealed, one datagram per slot of sslot
     * bytes, and the descriptor sealed before each send. */
    uint8_t *stx;
    size_t sslot;
    struct mmsghdr *smsg;
    struct iovec *siov;
    bool sealed_now; /* stx holds the packet in tx */
    uint8_t *sdesc;
    size_t sdesc_len;
};

/* A UDP destination (host:port) shared by every route that sends there: one connected
 * socket. Its counters are written by the sending threads. */
struct ardn_dest {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char text[ARDN_EP_TEXT];
    int fd;
    size_t limit; /* largest packed datagram: the smallest --max-datagram of its routes */
    int nroutes;
    atomic_bool reported; /* a send error other than the network's was reported */
    atomic_bool aes;      /* with a key: its receiver's challenge said it opens AES-256-GCM */
    _Atomic uint64_t datagrams, packed, packets, send_errors;
};

/* A UDP listening address shared by every route that listens there: one socket and one
 * receiving thread, the routes told apart by connection id. */
struct ardn_input {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    char text[ARDN_EP_TEXT];
    int fd;
    struct ardn_route **routes; /* sorted by connection id */
    int nroutes;
    uint32_t *ids; /* their connection ids, in that order (NULL: read from the routes) */
    struct ardn_route **touched; /* routes with a packet delivered in the current batch */
    int ntouched;
    bool by_reference; /* whole packets are delivered by reference (route's wire): the
                        * receive buffer is not reused before ardn_input_settle */
    uint8_t *rx;
    pthread_t thread;
    bool started;
    atomic_bool halt; /* ardn_plan_halt: this input's thread ends (as with ardn_stop) */
    /* Datagrams that name no route (shared inputs only; with one route, its counters). */
    _Atomic uint64_t datagrams, packed;
    _Atomic uint64_t drop[ARDW_NCAUSES];
    /* With a key: the senders' epochs seen here, the seal of the datagram being taken in
     * (given to its packets' headers) and when a refused peer was last named in the log, per
     * cause. */
    struct ards_table *peers;
    uint64_t seal_ctr;
    int64_t proven_ns;
    int64_t auth_warn_ns[3]; /* per cause: not sealed, another key, failed */
};

struct ardn_txq; /* route.c: the packets a sending thread has for one destination */

/* A sending thread: up to ARD_WAIT_SLEEP_MAX routes with a local input, waited on together. */
struct ardn_sender {
    struct ardn_route **routes;
    int n;
    ard_port **ports; /* the wait set: routes not left out after an error */
    struct ardn_route **wait_r;
    unsigned char *ready;
    struct ardn_txq *q;
    int nq;
    pthread_t thread;
    bool started;
    atomic_bool halt; /* ardn_plan_halt: this thread ends (as with ardn_stop) */
};

/* Every route of the process with its shared sockets and threads. */
struct ardn_plan {
    struct ardn_route *routes;
    int nroutes;
    struct ardn_dest *dests;
    int ndests;
    struct ardn_input *inputs;
    int ninputs;
    struct ardn_sender *senders;
    int nsenders;
    /* With a key: the thread that answers the receivers' challenges on the destinations'
     * sockets (docs/wire.md, "Sealed datagrams"). */
    pthread_t answerer;
    bool answer_started;
    atomic_bool answer_halt;
};

#define ARDN_ROS2_NODE_MAX 256 /* a ROS 2 node name: at most 255 characters */

struct ardn_global {
    char bind[ARDN_EP_TEXT]; /* source address of sockets, "" for any */
    char dev[32];            /* SO_BINDTODEVICE, "" for none */
    int dscp;                /* -1: leave */
    int sock_prio;           /* SO_PRIORITY, -1: leave */
    int prio;                /* SCHED_FIFO priority, 0: leave */
    char cpu[128];           /* affinity list, "" for none */
    char stats_file[1024];
    char counters[ARD_MAX_NAME + 1]; /* --counters: connection of the counters, "" for none */
    uint64_t epoch;
    int ros_domain; /* --ros-domain, -1: ROS_DOMAIN_ID or 0 */
    char key[1024]; /* --key: the key file, "" for none (datagrams are not sealed) */
    char ros2_node[ARDN_ROS2_NODE_MAX]; /* --ros2-node, "" for the program's name */
    uint64_t given;                     /* the options given (bit i: ardn_opts[i]) */
};

extern struct ardn_global ardn_g;

/* Sealing (seal.h), set up once before any route opens. */
struct ardn_seal {
    bool on;             /* a key was given: every datagram is sealed, only sealed ones taken */
    struct ards_key key; /* the key file's key */
    struct ards_sub sub; /* this run's subkey (its epoch's) */
    int64_t start_ns;    /* CLOCK_MONOTONIC at start: the seal counters count from it */
};
extern struct ardn_seal ardn_seal;
/* Load the key file (ardn_g.key) and derive this run's subkey (after the epoch is drawn). 0 or
 * a negative code with the detail naming the file and what is wrong. */
int ardn_seal_open(void);
/* Seal a plain datagram (header hlen bytes, body blen bytes) with this run's subkey and the
 * calling thread's next nonce into out (see ards_seal); returns its length. */
size_t ardn_seal_dgram(const uint8_t *hdr, size_t hlen, const uint8_t *body, size_t blen,
                       uint8_t *out);
/* The same with another subkey (the catalog's, of its host id). */
size_t ardn_seal_with(const struct ards_sub *sub, const uint8_t *hdr, size_t hlen,
                      const uint8_t *body, size_t blen, uint8_t *out);
/* This run's seal clock (ns since the start): what an answer tells. */
uint64_t ardn_seal_clock(void);
/* Answer a challenge (d, opened in place) to my_epoch, sealed with my_sub, on fd (to: the
 * challenger's address, NULL on a connected socket): the challenger's capabilities
 * (ARDS_CAP_*), or -1 when it was none to answer. */
int ardn_seal_answer_as(int fd, uint8_t *d, size_t len, uint64_t my_epoch,
                        const struct ards_sub *my_sub, const struct sockaddr *to, socklen_t tolen);
/* ardn_seal_dgram with the AEAD alg (ARDS_ALG_*). */
size_t ardn_seal_dgram_alg(unsigned alg, const uint8_t *hdr, size_t hlen, const uint8_t *body,
                           size_t blen, uint8_t *out);
/* The AEAD of the packets to d: AES-256-GCM once its receiver said it has it, and this CPU. */
unsigned ardn_seal_alg(const struct ardn_dest *d);
/* Challenge the epoch of p (a fresh nonce into p) at src, from fd, as my_epoch. */
void ardn_seal_challenge(int fd, struct ards_peer *p, uint64_t my_epoch,
                         const struct ards_sub *my_sub, const struct sockaddr_storage *src,
                         int64_t now);
/* p answered with its clock t at receiver time now: proven, and its floor set. */
void ardn_seal_proven(struct ards_peer *p, uint64_t t, int64_t now);
/* The packet encoded in r->tx, sealed (once per packet) into r->smsg: r->nfrag datagrams. */
struct mmsghdr *ardn_sealed_packet(struct ardn_route *r);
/* The route's descriptor datagram, sealed now into r->sdesc; returns its length. */
size_t ardn_sealed_desc(struct ardn_route *r);
/* A datagram received on a destination's socket (a receiver's challenge): answered on fd
 * when it is a valid challenge to this run's epoch (then its capabilities, else -1). d is
 * opened in place. */
int ardn_seal_answer(int fd, uint8_t *d, size_t len);
extern atomic_bool ardn_stop;

/* Errors follow the library's convention: a negative ARD_E* code (ARD_EINVAL for bad
 * configuration; anything else is the system's) with the thread-local detail
 * (ard_errdetail) naming what was wrong. */

/* endpoint.c */
/* Parse "udp://HOST:PORT", "udp://[ADDR]:PORT", "udp://:PORT" or a connection name.
 * `listen` allows an empty host. Resolves the host. */
int ardn_ep_parse(struct ardn_ep *ep, const char *text, bool listen);
/* Resolve "HOST[:PORT]" (IPv4/IPv6) into addr; *has_port says whether a port was given. */
int ardn_resolve(const char *text, struct sockaddr_storage *addr, socklen_t *len, bool *has_port);
/* Put `prefix` before the current detail; returns code. */
int ardn_fail_prefix(int code, const char *prefix);
/* Print an address as "1.2.3.4:7001". */
void ardn_addr_str(const struct sockaddr_storage *a, char *buf, size_t len);

/* route.c */
/* Check the route, attach local ports, allocate its buffers (no socket yet). 0, or a negative
 * code whose detail starts with "route 'NAME': ". */
int ardn_route_open(struct ardn_route *r);
void ardn_route_close(struct ardn_route *r);
void ardn_route_init(struct ardn_route *r);

/* Open every route, group them by UDP destination and listening address (refusing two
 * routes of one listening address with the same connection id, or one that accepts any),
 * open the shared sockets and plan the threads. 0 or a negative code with the detail. */
int ardn_plan_open(struct ardn_plan *p, struct ardn_route *routes, int n);
/* Start the threads: one per listening address, one per ARD_WAIT_SLEEP_MAX local inputs of a
 * destination group. */
int ardn_plan_start(struct ardn_plan *p);
/* Ask the threads of this plan only to end (ardn --auto stops one forward this way); they
 * notice within their idle period. Then ardn_plan_join. */
void ardn_plan_halt(struct ardn_plan *p);
/* After ardn_stop is set (or ardn_plan_halt): join the threads. */
void ardn_plan_join(struct ardn_plan *p);
/* Close sockets and routes, free everything (not p->routes). */
void ardn_plan_close(struct ardn_plan *p);

/* One received datagram for a listening address (from src, NULL: no peer check, at now_ns):
 * checked and, a packed one, unpacked; each packet is checked against its route (by
 * connection id) and counted; a delivered one is in its route's buf (with in->by_reference:
 * a whole packet's payload stays in d, its route's wire points at it), with fresh set, newest
 * its header, and the route in in->touched. */
/* The plain part of ardn_input_datagram (after ardn_unseal, with a key). */
void ardn_input_plain(struct ardn_input *in, const uint8_t *d, size_t len,
                      const struct sockaddr_storage *src, int64_t now);
/* Count a datagram that no single route can be blamed for (the lone route's, or the input's). */
void ardn_input_drop(struct ardn_input *in, enum ardw_cause c);
/* sealing.c: open a datagram received on input in (in place); its plain form, *len updated,
 * or NULL when it is not taken in (counted; or held until its epoch is proven). */
const uint8_t *ardn_unseal(struct ardn_input *in, uint8_t *d, size_t *len,
                           const struct sockaddr_storage *src, int64_t now);
/* With a key, d is first opened in place (it must be writable), and only a sealed datagram of
 * an epoch that proved it holds the key goes on; the others are counted (drop_auth,
 * drop_epoch, drop_old), or answer a challenge this input sent. */
void ardn_input_datagram(struct ardn_input *in, const uint8_t *d, size_t len,
                         const struct sockaddr_storage *src, int64_t now_ns);
/* With in->by_reference: convert the packets delivered by reference into their routes' buf
 * (before the receive buffer is reused). */
void ardn_input_settle(struct ardn_input *in);
/* Check one received datagram, received at now_ns (CLOCK_MONOTONIC), against the route
 * (peer, header, order; src NULL skips the peer check); on ARDW_OK it is recorded as delivered and
 * its payload is in r->buf. A fragment is kept for reassembly (ARDW_PENDING) until its packet is
 * complete (ARDW_OK); a packet given up incomplete is counted here as drop ARDW_PARTIAL.
 * A valid descriptor datagram gives ARDW_DESC, *h and r->peer_type describing the sender. */
enum ardw_cause ardn_route_take(struct ardn_route *r, const uint8_t *d, size_t len,
                                const struct sockaddr_storage *src, struct ardw_hdr *h,
                                int64_t now_ns);

/* Helpers of route.c for plan.c (the threads). */
int ardn_route_fail(const struct ardn_route *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ardn_route_warn(const struct ardn_route *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Add n to a counter that only the calling thread writes (a route's, an input's). */
void ardn_bump(_Atomic uint64_t *c, uint64_t n);
void ardn_count(struct ardn_route *r, enum ardn_counter c, uint64_t n);
void ardn_count_drop(struct ardn_route *r, enum ardw_cause c);
/* Report a failed send to d once, unless it is the network's business (errno e). */
void ardn_send_error(struct ardn_route *r, struct ardn_dest *d, int e);
/* A new packet (in r->buf, header h) through the reducers to the outputs; s: the sending
 * thread that queues the UDP packets, NULL to send them at once. */
void ardn_offer(struct ardn_route *r, const struct ardw_hdr *h, int64_t now, struct ardn_sender *s);
/* Every wake-up: forward a held packet whose slot has come, report a mismatch. */
void ardn_tick(struct ardn_route *r, int64_t now, struct ardn_sender *s);
/* Local input: take the newest packet if there is a new one and offer it. 0, or the error
 * of ard_tryrec (reported once). */
int ardn_take_local(struct ardn_route *r, int64_t now, struct ardn_sender *s);
/* The longest datagram of a connection that can be valid (fragment or descriptor). */
size_t ardn_rx_slot(const struct ardn_route *r);
/* plan.c: queue output i of r (encoded in r->tx) in its sending thread. */
void ardn_txq_add(struct ardn_sender *s, struct ardn_route *r, int i);
/* plan.c: a route that learnt its size from the sender's descriptor: its input socket's
 * receive buffer grown for its packets' bursts, as at open for a route given --size. */
void ardn_learnt_sockbuf(const struct ardn_route *r);

/* dds.c (or dds_none.c when ardnet is built without ROS 2) */
/* Whether ros2: endpoints are built in. */
extern const bool ardn_have_ros2;
/* Parse a --qos value ("reliable", "transient-local", "best-effort", "volatile", or several
 * joined by commas) into r->qos. */
int ardn_qos_parse(struct ardn_route *r, const char *val);
/* The ROS 2 names (src/log/msgdef.c, in libardnet_log, linked only with ARD_ROS2): TOPIC is a
 * topic that maps to a connection name; VAL a ROS 2 type name for a route (ros2-type). */
int ardn_ros2_check_topic(const char *topic);
int ardn_ros2_type_parse(const char *val, char *out, size_t len);
/* Check a --ros2-node / ros2-node: value (a ROS 2 node name) into g->ros2_node. */
int ardn_ros2_node_option(struct ardn_global *g, const char *val);
/* The process's DDS participant, topics, writers and readers for every ros2: endpoint of the
 * plan (nothing without one). 0 or a negative code with the detail. */
int ardn_dds_open(struct ardn_plan *p);
/* The thread that takes ros2: inputs and watches for peers of another type. */
int ardn_dds_start(struct ardn_plan *p);
void ardn_dds_join(struct ardn_plan *p);
void ardn_dds_close(struct ardn_plan *p);
/* Publish the packet (host order, header h) on a ros2: output: 0 or -1 (counted by the caller,
 * the first failure reported). From the route's thread. */
int ardn_dds_write(struct ardn_route *r, struct ardn_ep *ep, const void *packet,
                   const struct ardw_hdr *h);

/* counters.c */
/* One line per route, then one per UDP destination and listening address that routes share. */
void ardn_counters_print(FILE *f, const struct ardn_plan *p);
int ardn_counters_write_file(const char *path, const struct ardn_plan *p);
/* The counters as local connections (--counters CONN): CONN, a packet with one named field per
 * counter (docs/ardnet.md, "Counters"), and CONN.names, ARDN_NAME_BYTES bytes per route,
 * destination and input. Written by the main thread only. */
#define ARDN_NAME_BYTES 64
#define ARDN_COUNTERS_MAX_NAME (ARD_MAX_NAME - 6) /* room for ".names" */
/* The descriptor of CONN for plan p into buf (at least ARD_MAX_TYPE + 1 bytes). */
int ardn_counters_type(const struct ardn_plan *p, char *buf, size_t len);
/* Create (or take over) both connections as their writer and publish the first packets. 0 or a
 * negative code with the detail naming the connection. */
int ardn_counters_open(const char *conn, const struct ardn_plan *p);
/* Publish the counters now (and the names again if `names`). */
int ardn_counters_publish(const struct ardn_plan *p, bool names);
void ardn_counters_close(void);

/* The catalog's configuration (ardnet --auto, auto.c), filled from its options and read-only
 * once the catalog is open. */
#define ARDA_PEERS_TEXT 1024
struct arda_conf {
    bool enabled;                /* --auto */
    char peers[ARDA_PEERS_TEXT]; /* --auto-peers HOST[:PORT],..., "" for none */
    char mcast[ARDN_EP_TEXT];    /* --auto-multicast GROUP:PORT, "" for none */
    int port;                    /* --auto-port, 0: not given (ARDA_DEFAULT_PORT) */
    int limit;                   /* --auto-limit, 0: not given (ARDA_DEFAULT_LIMIT) */
};

/* What ardnet's options are parsed into: the command line's, or a route file's. The table's
 * destinations are fields of it; the route options go to the route being built. */
struct ardn_conf {
    struct ardn_global g;     /* the process options */
    struct arda_conf cat;     /* the catalog's (command line only) */
    struct ardn_route *route; /* the route the route options go to */
    const char *dash; /* "--" on the command line, "" in a file: how details name an option */
    /* command line only */
    bool have_route;           /* a route option since the start or the last --next */
    struct ardn_route *routes; /* the routes ended by --next (malloc'd) */
    int nroutes;
    const char *config; /* --config FILE */
    int stop;           /* ARDN_STOP_HELP or ARDN_STOP_VERSION: print it and exit 0 */
};
enum { ARDN_STOP_HELP = 1, ARDN_STOP_VERSION };

/* options.c: every option of ardnet in one table (src/common/ardc_opt.h), in the order of
 * `ardnet --help`. A row's `where` says where it applies: */
enum ardn_where {
    ARDN_W_ROUTE = 1,   /* a route's: the command line's route, each route of a file (its key) */
    ARDN_W_GLOBAL = 2,  /* the process's: the command line and the top level of a file */
    ARDN_W_CATALOG = 4, /* the catalog's (--auto...): command line only */
    ARDN_W_ARGV = 8,    /* command line only: --next, --config, --help, --version */
    ARDN_W_LIB = 16,    /* taken by ard_init before the table is read (--ard-domain): help only */
};
#define ARDN_W_CLI (ARDN_W_ROUTE | ARDN_W_GLOBAL | ARDN_W_CATALOG | ARDN_W_ARGV)
extern const struct ardc_opt ardn_opts[];    /* ends with a row whose name is NULL */
extern const struct ardc_optset ardn_optset; /* the table, with the help's head and tail */
extern const int ardn_nopts;
/* A conf with no option given (dscp, sock-prio, ros-domain: -1, "leave"). */
void ardn_conf_init(struct ardn_conf *c);
/* The process options given in src override those of dst. */
void ardn_global_merge(struct ardn_global *dst, const struct ardn_global *src);
/* The command line's route is complete: check it (ardn_route_finish), append it to c->routes
 * and start another. 0, or a negative code with the detail. */
int ardn_conf_end_route(struct ardn_conf *c);
/* "routes, bind, dev, ...": the top-level keys of a route file. */
void ardn_yaml_keys(char *buf, size_t len);
/* Set one route option (key as in YAML: in, out, name, size, type, conn-id, from, every,
 * max-rate, max-bandwidth, max-datagram, qos, ros2-type) of r. 0, or ARD_EINVAL with the
 * detail ("unknown route key 'colour'", "size '0' is not a number 1..67108864"). */
int ardn_route_option(struct ardn_route *r, const char *key, const char *val);

/* config.c: read a YAML file into routes (appended to *routes / *n) and the process options
 * (into g; those the file gives are marked in g->given). 0, or a negative code with the detail
 * "FILE:LINE:COLUMN: what is wrong" (or "FILE: cannot open: ..."). */
int ardn_config_load(const char *path, struct ardn_route **routes, int *n, struct ardn_global *g);
/* Check a --counters / counters: value (a connection name of at most ARDN_COUNTERS_MAX_NAME
 * characters) and copy it into g->counters. */
int ardn_counters_option(struct ardn_global *g, const char *val);
/* Check a --ros-domain / ros-domain: value (0..232) into g->ros_domain. */
int ardn_ros_domain_option(struct ardn_global *g, const char *val);
/* Check a complete route and give it a default name. */
int ardn_route_finish(struct ardn_route *r);
/* The exit code for a failure code: ARDN_EXIT_USAGE for configuration, else _SYSTEM. */
int ardn_exit_code(int code);

/* config.c: the numbers of the route options (options.c) and endpoints */
int ardn_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int ardn_parse_double(const char *s, double min, double max, double *out);

#endif /* ARDN_H */
