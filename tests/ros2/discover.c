/* discover.c - what DDS discovery says of the writers on some topics: Cyclone DDS's builtin
 * DCPSPublication topic read by a participant of its own (no ardnet code), as a ROS 2 tool
 * (`ros2 topic info -v`) learns a topic's type.
 *
 * usage: discover SECONDS TOPIC...   (the DDS domain: ROS_DOMAIN_ID, default 0)
 * Prints "TOPIC TYPE" once for each DDS writer of another participant seen on one of the
 * topics (DDS names: rt/arm/state), and exits 0 when every topic has one, 1 when SECONDS
 * passed first (naming the topics not seen), 100 on bad usage. */
#include <dds/dds.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: discover SECONDS TOPIC...\n");
        return 100;
    }
    int n = argc - 2;
    bool *seen = calloc((size_t)n, sizeof *seen);
    const char *dom = getenv("ROS_DOMAIN_ID"); /* as ROS 2 and ardnet take the domain */
    dds_entity_t pp =
        dds_create_participant(dom && *dom ? (dds_domainid_t)atoi(dom) : 0, NULL, NULL);
    if (!seen || pp < 0) {
        fprintf(stderr, "discover: cannot create a DDS participant\n");
        return 1;
    }
    dds_guid_t self;
    dds_get_guid(pp, &self);
    dds_entity_t rd = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
    if (rd < 0) {
        fprintf(stderr, "discover: cannot read DCPSPublication: %s\n", dds_strretcode(rd));
        return 1;
    }
    dds_time_t end = dds_time() + DDS_SECS(atoi(argv[1]));
    int left = n;
    while (left > 0 && dds_time() < end) {
        void *buf[16] = {NULL};
        dds_sample_info_t si[16];
        int k = dds_take(rd, buf, si, 16, 16);
        for (int i = 0; i < k; i++) {
            const dds_builtintopic_endpoint_t *b = buf[i];
            if (!si[i].valid_data || !b->topic_name || !b->type_name ||
                memcmp(&b->participant_key, &self, sizeof self) == 0)
                continue;
            for (int t = 0; t < n; t++)
                if (!seen[t] && strcmp(b->topic_name, argv[2 + t]) == 0) {
                    printf("%s %s\n", b->topic_name, b->type_name);
                    seen[t] = true;
                    left--;
                }
        }
        if (k > 0)
            dds_return_loan(rd, buf, k);
        else
            dds_sleepfor(DDS_MSECS(20));
    }
    fflush(stdout);
    for (int t = 0; t < n; t++)
        if (!seen[t])
            fprintf(stderr, "discover: no writer seen on %s\n", argv[2 + t]);
    dds_delete(pp);
    free(seen);
    return left == 0 ? 0 : 1;
}
