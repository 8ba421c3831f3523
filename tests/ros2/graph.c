/* graph.c - what a ROS 2 tool learns of the graph: the ros_discovery_info samples
 * (rmw_dds_common's ParticipantEntitiesInfo, decoded by the C code Cyclone's idlc generates
 * from rmw_dds_common.idl, written by hand from the message definitions) and DDS discovery
 * (Cyclone's builtin DCPSParticipant, DCPSPublication and DCPSSubscription topics), read by a
 * participant of its own (no ardnet code).
 *
 * usage: graph SECONDS   (the DDS domain: ROS_DOMAIN_ID, default 0)
 * Prints, for every other participant and its endpoints (GUIDs as 32 hex digits):
 *   participant GUID name=NAME user_data=TEXT
 *   writer GUID PARTICIPANT TOPIC TYPE   /   reader GUID PARTICIPANT TOPIC TYPE
 *   info PARTICIPANT NAMESPACE NAME readers=GID,... writers=GID,...   (one line per node)
 * and exits 0 as soon as an info sample has come and every GID it lists has been seen as an
 * endpoint of that participant (then it reads on 0.5 s more), 1 when SECONDS passed first,
 * 100 on bad usage. */
#include "rmw_dds_common.h"

#include <dds/dds.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EPS 1024

struct seen {
    unsigned char guid[16], pp[16];
};
static struct seen eps[MAX_EPS];
static int neps;

static void hex(const unsigned char *g, char *out)
{
    for (int i = 0; i < 16; i++)
        sprintf(out + 2 * i, "%02x", g[i]);
}

static bool have_ep(const unsigned char *g, const unsigned char *pp)
{
    for (int i = 0; i < neps; i++)
        if (memcmp(eps[i].guid, g, 16) == 0 && memcmp(eps[i].pp, pp, 16) == 0)
            return true;
    return false;
}

static void endpoints(dds_entity_t rd, const char *kind, const dds_guid_t *self)
{
    void *buf[16] = {NULL};
    dds_sample_info_t si[16];
    int k = dds_take(rd, buf, si, 16, 16);
    for (int i = 0; i < k; i++) {
        const dds_builtintopic_endpoint_t *b = buf[i];
        if (!si[i].valid_data || memcmp(&b->participant_key, self, sizeof *self) == 0)
            continue;
        char g[33], p[33];
        hex(b->key.v, g);
        hex(b->participant_key.v, p);
        printf("%s %s %s %s %s\n", kind, g, p, b->topic_name, b->type_name);
        if (neps < MAX_EPS && !have_ep(b->key.v, b->participant_key.v)) {
            memcpy(eps[neps].guid, b->key.v, 16);
            memcpy(eps[neps].pp, b->participant_key.v, 16);
            neps++;
        }
    }
    if (k > 0)
        dds_return_loan(rd, buf, k);
}

static void participants(dds_entity_t rd, const dds_guid_t *self)
{
    void *buf[16] = {NULL};
    dds_sample_info_t si[16];
    int k = dds_take(rd, buf, si, 16, 16);
    for (int i = 0; i < k; i++) {
        const dds_builtintopic_participant_t *b = buf[i];
        if (!si[i].valid_data || memcmp(&b->key, self, sizeof *self) == 0)
            continue;
        char g[33], *name = NULL;
        void *ud = NULL;
        size_t udlen = 0;
        hex(b->key.v, g);
        if (!dds_qget_entity_name(b->qos, &name))
            name = NULL;
        if (!dds_qget_userdata(b->qos, &ud, &udlen))
            ud = NULL;
        printf("participant %s name=%s user_data=%.*s\n", g, name ? name : "(none)", (int)udlen,
               ud ? (const char *)ud : "");
        dds_free(name);
        dds_free(ud);
    }
    if (k > 0)
        dds_return_loan(rd, buf, k);
}

/* Take the info samples; true when one lists only endpoints already seen. */
static bool infos(dds_entity_t rd)
{
    void *buf[8] = {NULL};
    dds_sample_info_t si[8];
    bool complete = false;
    int k = dds_take(rd, buf, si, 8, 8);
    for (int i = 0; i < k; i++) {
        const rmw_dds_common_msg_dds__ParticipantEntitiesInfo_ *m = buf[i];
        if (!si[i].valid_data)
            continue;
        char p[33], g[33];
        hex(m->gid.data, p);
        bool all = m->node_entities_info_seq._length > 0;
        for (uint32_t n = 0; n < m->node_entities_info_seq._length; n++) {
            const rmw_dds_common_msg_dds__NodeEntitiesInfo_ *e =
                &m->node_entities_info_seq._buffer[n];
            printf("info %s %s %s readers=", p, e->node_namespace, e->node_name);
            for (uint32_t r = 0; r < e->reader_gid_seq._length; r++) {
                hex(e->reader_gid_seq._buffer[r].data, g);
                printf("%s%s", r ? "," : "", g);
                all &= have_ep(e->reader_gid_seq._buffer[r].data, m->gid.data);
            }
            printf(" writers=");
            for (uint32_t w = 0; w < e->writer_gid_seq._length; w++) {
                hex(e->writer_gid_seq._buffer[w].data, g);
                printf("%s%s", w ? "," : "", g);
                all &= have_ep(e->writer_gid_seq._buffer[w].data, m->gid.data);
            }
            printf("\n");
        }
        complete |= all;
    }
    if (k > 0)
        dds_return_loan(rd, buf, k);
    return complete;
}

int main(int argc, char **argv)
{
    if (argc != 2 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: graph SECONDS\n");
        return 100;
    }
    const char *dom = getenv("ROS_DOMAIN_ID"); /* as ROS 2 and ardnet take the domain */
    dds_entity_t pp =
        dds_create_participant(dom && *dom ? (dds_domainid_t)atoi(dom) : 0, NULL, NULL);
    if (pp < 0) {
        fprintf(stderr, "graph: cannot create a DDS participant: %s\n", dds_strretcode(pp));
        return 1;
    }
    dds_guid_t self;
    dds_get_guid(pp, &self);
    /* As rmw's own reader of the topic: reliable, transient local. */
    dds_entity_t tp = dds_create_topic(pp, &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc,
                                       "ros_discovery_info", NULL, NULL);
    dds_qos_t *q = dds_create_qos();
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
    dds_qset_durability(q, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
    dds_entity_t info = tp < 0 ? tp : dds_create_reader(pp, tp, q, NULL);
    dds_delete_qos(q);
    dds_entity_t parts = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSPARTICIPANT, NULL, NULL);
    dds_entity_t pubs = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
    dds_entity_t subs = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSSUBSCRIPTION, NULL, NULL);
    if (info < 0 || parts < 0 || pubs < 0 || subs < 0) {
        fprintf(stderr, "graph: cannot create the readers\n");
        return 1;
    }
    dds_time_t end = dds_time() + DDS_SECS(atoi(argv[1])), linger = 0;
    int rc = 1;
    while (dds_time() < end && (linger == 0 || dds_time() < linger)) {
        participants(parts, &self);
        endpoints(pubs, "writer", &self);
        endpoints(subs, "reader", &self);
        if (infos(info) && linger == 0) {
            rc = 0;
            linger = dds_time() + DDS_MSECS(500);
        }
        fflush(stdout);
        dds_sleepfor(DDS_MSECS(20));
    }
    dds_delete(pp);
    return rc;
}
