/*
 * fastdds_peer.cpp - a second independent DDS peer for the tests of ardnet's ros2: endpoints:
 * eProsima Fast DDS (2.x) on the C++ code fastddsgen generates from ardnet_msgs.idl (the IDL ROS
 * 2 would generate; type names "ardnet_msgs::msg::dds_::ArmState_" ...), no ardnet, no Cyclone.
 *
 *   ros2_fastdds_peer sub arm|cmd|all|image|cloud TOPIC [--count N] [--first-ms F] [--idle-ms I]
 *                     [--max-ms M] [--reliable] [--expect-none] [--matched FILE]
 *                     [--counters FILE]
 *   ros2_fastdds_peer pub arm|cmd|all|image|cloud TOPIC [--count N] [--rate HZ] [--wait-ms W]
 *                     [--reliable] [--settle-ms S] [--linger-ms L]
 *
 * The options, the output and the exit codes are those of peer.c (the Cyclone peer), so that
 * the tests read both alike. sub prints "received=N bad=N older=N first=C last=C lat_med_us=X
 * lat_p99_us=Y" and exits 0 if it got its samples (at least one), every value exact
 * (values.h) and in order; --expect-none: exit 0 if none came; --counters: each intact
 * sample's counter is appended to FILE as it comes, a line each. pub waits up to W ms for a
 * matching reader, writes N samples at HZ (the counter from the realtime clock in
 * microseconds), waits until a reliable writer's samples are acknowledged (at most L ms) and
 * prints "sent=N first=C last=C"; exit 3 when no reader matched.
 *
 * The participant speaks UDPv4 on 127.0.0.1 only (no shared memory transport, no data
 * sharing, no multicast): discovery by unicast to the well-known ports of 127.0.0.1 (the first
 * participant indexes), so that the test's DDS traffic is the wire protocol on loopback, in
 * the test's network namespace. The domain is ROS_DOMAIN_ID (default 0).
 */
#include "ardnet_msgsPubSubTypes.h"

#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "values.h"

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
namespace msg = ardnet_msgs::msg::dds_;

namespace
{

volatile std::sig_atomic_t stop_flag;

void on_term(int)
{
    stop_flag = 1;
}

struct opts {
    int argc;
    char **argv;
    long num(const char *name, long def) const
    {
        for (int i = 4; i + 1 < argc; i++)
            if (std::strcmp(argv[i], name) == 0)
                return std::strtol(argv[i + 1], nullptr, 10);
        return def;
    }
    const char *str(const char *name) const
    {
        for (int i = 4; i + 1 < argc; i++)
            if (std::strcmp(argv[i], name) == 0)
                return argv[i + 1];
        return nullptr;
    }
    bool flag(const char *name) const
    {
        for (int i = 4; i < argc; i++)
            if (std::strcmp(argv[i], name) == 0)
                return true;
        return false;
    }
};

int64_t mono_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int64_t real_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/* One message kind: the generated type, and the conversions between it and the plain structs
 * of values.h (the values are made and checked there, as for the Cyclone peer). */
struct arm_kind {
    using type = msg::ArmState_;
    using pst = msg::ArmState_PubSubType;
    static bool big()
    {
        return false;
    }
    static void fill(type &m, uint64_t n)
    {
        struct arm a;
        fill_arm(&a, n);
        std::copy(a.q, a.q + 7, m.q().begin());
        std::copy(a.qd, a.qd + 7, m.qd().begin());
    }
    /* The first wrong field or nullptr; its counter in *c. */
    static const char *check(const type &m, uint64_t *c)
    {
        struct arm a;
        std::copy(m.q().begin(), m.q().end(), a.q);
        std::copy(m.qd().begin(), m.qd().end(), a.qd);
        *c = arm_counter(&a);
        return bad_arm(&a);
    }
};

/* ArmCmd_: the same fields under another type name. */
struct cmd_kind {
    using type = msg::ArmCmd_;
    using pst = msg::ArmCmd_PubSubType;
    static bool big()
    {
        return false;
    }
    static void fill(type &m, uint64_t n)
    {
        struct arm a;
        fill_arm(&a, n);
        std::copy(a.q, a.q + 7, m.q().begin());
        std::copy(a.qd, a.qd + 7, m.qd().begin());
    }
    static const char *check(const type &m, uint64_t *c)
    {
        struct arm a;
        std::copy(m.q().begin(), m.q().end(), a.q);
        std::copy(m.qd().begin(), m.qd().end(), a.qd);
        *c = arm_counter(&a);
        return bad_arm(&a);
    }
};

struct all_kind {
    using type = msg::AllTypes_;
    using pst = msg::AllTypes_PubSubType;
    static bool big()
    {
        return false;
    }
    static void fill(type &m, uint64_t n)
    {
        struct all v;
        fill_all(&v, n);
        m.counter(v.counter);
        m.a(v.a);
        m.b(v.b);
        m.c(v.c);
        m.d(v.d);
        m.e(v.e);
        m.f(v.f);
        m.g(v.g);
        m.x(v.x);
        m.y(v.y);
        std::copy(v.ai, v.ai + 3, m.ai().begin());
        std::copy(v.au, v.au + 5, m.au().begin());
        std::copy(v.af, v.af + 3, m.af().begin());
        std::copy(v.ad, v.ad + 2, m.ad().begin());
        std::copy(v.ag, v.ag + 2, m.ag().begin());
        std::copy(v.ab, v.ab + 7, m.ab().begin());
    }
    static const char *check(const type &m, uint64_t *c)
    {
        struct all v;
        std::memset(&v, 0, sizeof v);
        v.counter = m.counter();
        v.a = m.a();
        v.b = m.b();
        v.c = m.c();
        v.d = m.d();
        v.e = m.e();
        v.f = m.f();
        v.g = m.g();
        v.x = m.x();
        v.y = m.y();
        std::copy(m.ai().begin(), m.ai().end(), v.ai);
        std::copy(m.au().begin(), m.au().end(), v.au);
        std::copy(m.af().begin(), m.af().end(), v.af);
        std::copy(m.ad().begin(), m.ad().end(), v.ad);
        std::copy(m.ag().begin(), m.ag().end(), v.ag);
        std::copy(m.ab().begin(), m.ab().end(), v.ab);
        *c = v.counter;
        return bad_all(&v);
    }
};

/* The large ones: a counter, then data (values.h's stream of bytes). */
template <class T, class P, size_t SIZE> struct big_kind {
    using type = T;
    using pst = P;
    static bool big()
    {
        return true;
    }
    static void fill(type &m, uint64_t n)
    {
        static std::vector<uint8_t> buf(SIZE);
        fill_big(buf.data(), SIZE, n);
        m.counter(n);
        std::memcpy(m.data().data(), buf.data() + 8, SIZE - 8);
    }
    static const char *check(const type &m, uint64_t *c)
    {
        static std::vector<uint8_t> buf(SIZE);
        uint64_t n = m.counter();
        std::memcpy(buf.data(), &n, 8);
        std::memcpy(buf.data() + 8, m.data().data(), SIZE - 8);
        *c = n;
        return bad_big(buf.data(), SIZE) ? "data" : nullptr;
    }
};
using image_kind = big_kind<msg::CamImage_, msg::CamImage_PubSubType, IMAGE_SIZE>;
using cloud_kind = big_kind<msg::LidarCloud_, msg::LidarCloud_PubSubType, CLOUD_SIZE>;
static_assert(sizeof(msg::CamImage_) >= IMAGE_SIZE, "image layout");

/* UDPv4 on loopback only; discovery by unicast to 127.0.0.1. */
DomainParticipant *make_participant()
{
    DomainParticipantQos pq;
    pq.name("ardnet_fastdds_peer");
    pq.transport().use_builtin_transports = false;
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    /* (large samples: more than the default socket buffers; the kernel caps them at
     * net.core.[rw]mem_max) */
    udp->receiveBufferSize = 4u << 20;
    udp->sendBufferSize = 4u << 20;
    pq.transport().user_transports.push_back(udp);
    Locator_t peer;
    IPLocator::setIPv4(peer, "127.0.0.1");
    pq.wire_protocol().builtin.initialPeersList.push_back(peer);
    /* Unicast metatraffic only (no multicast locator announced or opened); port 0: the
     * participant's well-known port. */
    Locator_t meta;
    IPLocator::setIPv4(meta, "127.0.0.1");
    pq.wire_protocol().builtin.metatrafficUnicastLocatorList.push_back(meta);
    Locator_t user;
    IPLocator::setIPv4(user, "127.0.0.1");
    pq.wire_protocol().default_unicast_locator_list.push_back(user);
    const char *dom = std::getenv("ROS_DOMAIN_ID");
    return DomainParticipantFactory::get_instance()->create_participant(
        dom ? (DomainId_t)std::atoi(dom) : 0, pq);
}

/* History and memory for a kind: the large ones allocate as they go and hold few samples. */
template <class Q> void size_history(Q &q, bool reliable, bool big)
{
    if (big) {
        q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::DYNAMIC_RESERVE_MEMORY_MODE;
        q.resource_limits().allocated_samples = 1;
        q.resource_limits().max_samples = 8;
        q.resource_limits().max_samples_per_instance = 8;
        if (reliable) {
            /* every sample delivered: keep all, at most 8 waiting; a writer waits for acks */
            q.history().kind = KEEP_ALL_HISTORY_QOS;
        } else {
            q.history().kind = KEEP_LAST_HISTORY_QOS;
            q.history().depth = 1;
        }
    } else {
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = reliable ? 1000 : 1;
        q.resource_limits().max_samples = 1000;
        q.resource_limits().max_samples_per_instance = 1000;
        q.resource_limits().allocated_samples = 16;
    }
    q.reliability().kind = reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    q.durability().kind = VOLATILE_DURABILITY_QOS;
    q.data_sharing().off();
}

void touch(const char *path)
{
    if (FILE *f = std::fopen(path, "w"))
        std::fclose(f);
}

template <class K> int run_sub(DomainParticipant *pp, Topic *tp, const opts &o)
{
    long count = o.num("--count", 0);
    int64_t first_ns = o.num("--first-ms", 20000) * 1000000LL;
    int64_t idle_ns = o.num("--idle-ms", 2000) * 1000000LL;
    int64_t end = mono_ns() + o.num("--max-ms", 60000) * 1000000LL;
    bool none = o.flag("--expect-none");
    const char *matched = o.str("--matched");
    FILE *counters = o.str("--counters") ? std::fopen(o.str("--counters"), "w") : nullptr;
    if (o.str("--counters") && !counters) {
        std::fprintf(stderr, "ros2_fastdds_peer: cannot write %s\n", o.str("--counters"));
        return 2;
    }
    Subscriber *sub = pp->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    DataReaderQos q = DATAREADER_QOS_DEFAULT;
    size_history(q, o.flag("--reliable"), K::big());
    DataReader *rd = sub ? sub->create_datareader(tp, q) : nullptr;
    if (!rd) {
        std::fprintf(stderr, "ros2_fastdds_peer: cannot create reader on %s\n", o.argv[3]);
        return 2;
    }
    std::unique_ptr<typename K::type> m(new typename K::type());
    std::vector<int64_t> lat;
    lat.reserve(count > 0 ? (size_t)count + 16 : 100000);
    uint64_t received = 0, bad = 0, older = 0, first = 0, last = 0;
    int64_t last_ns = mono_ns();
    while (!stop_flag && (count == 0 || received < (uint64_t)count)) {
        int64_t now = mono_ns(), wait = (received ? idle_ns : first_ns) - (now - last_ns);
        if (now >= end || wait <= 0)
            break;
        int64_t w = std::min(wait, end - now);
        if (matched)
            w = std::min<int64_t>(w, 10000000);
        eprosima::fastrtps::Duration_t d((int32_t)(w / 1000000000), (uint32_t)(w % 1000000000));
        rd->wait_for_unread_message(d);
        SubscriptionMatchedStatus ms;
        if (matched && rd->get_subscription_matched_status(ms) == ReturnCode_t::RETCODE_OK &&
            ms.current_count > 0) {
            touch(matched);
            matched = nullptr;
        }
        SampleInfo si;
        while (rd->take_next_sample(m.get(), &si) == ReturnCode_t::RETCODE_OK) {
            if (!si.valid_data)
                continue;
            int64_t at = real_ns();
            uint64_t c = 0;
            const char *field = K::check(*m, &c);
            if (field) {
                if (bad++ == 0)
                    std::fprintf(stderr, "ros2_fastdds_peer: sample %llu: field '%s' is wrong\n",
                                 (unsigned long long)c, field);
                continue;
            }
            if (received && c <= last && older++ == 0)
                std::fprintf(stderr, "ros2_fastdds_peer: sample %llu after %llu\n",
                             (unsigned long long)c, (unsigned long long)last);
            if (!received)
                first = c;
            if (!received || c > last)
                last = c;
            lat.push_back(at - si.source_timestamp.to_ns());
            received++;
            if (counters) {
                std::fprintf(counters, "%llu\n", (unsigned long long)c);
                std::fflush(counters);
            }
            last_ns = mono_ns();
        }
    }
    double med = 0, p99 = 0;
    if (!lat.empty()) {
        std::sort(lat.begin(), lat.end());
        med = (double)lat[lat.size() / 2] / 1e3;
        p99 = (double)lat[std::min(lat.size() * 99 / 100, lat.size() - 1)] / 1e3;
    }
    std::printf("received=%llu bad=%llu older=%llu first=%llu last=%llu lat_med_us=%.1f "
                "lat_p99_us=%.1f\n",
                (unsigned long long)received, (unsigned long long)bad, (unsigned long long)older,
                (unsigned long long)first, (unsigned long long)last, med, p99);
    std::fflush(stdout);
    if (counters)
        std::fclose(counters);
    sub->delete_datareader(rd);
    pp->delete_subscriber(sub);
    if (none)
        return received == 0 ? 0 : 1;
    return received > 0 && bad == 0 && older == 0 ? 0 : 1;
}

template <class K> int run_pub(DomainParticipant *pp, Topic *tp, const opts &o)
{
    long count = o.num("--count", 1000);
    long rate = o.num("--rate", 1000);
    int64_t wait_ns = o.num("--wait-ms", 20000) * 1000000LL;
    bool reliable = o.flag("--reliable");
    Publisher *pub = pp->create_publisher(PUBLISHER_QOS_DEFAULT);
    DataWriterQos q = DATAWRITER_QOS_DEFAULT;
    size_history(q, reliable, K::big());
    if (reliable) {
        q.reliability().max_blocking_time = {5, 0};
        /* (a reader's acknowledgements and requests for what it lost come in answer to a
         * heartbeat: every 100 ms, not the default 3 s) */
        q.reliable_writer_qos().times.heartbeatPeriod = {0, 100000000};
    }
    DataWriter *wr = pub ? pub->create_datawriter(tp, q) : nullptr;
    if (!wr) {
        std::fprintf(stderr, "ros2_fastdds_peer: cannot create writer on %s\n", o.argv[3]);
        return 2;
    }
    int64_t until = mono_ns() + wait_ns;
    PublicationMatchedStatus st;
    st.current_count = 0;
    while (!stop_flag && mono_ns() < until) {
        wr->get_publication_matched_status(st);
        if (st.current_count > 0)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (st.current_count == 0) {
        std::fprintf(stderr, "ros2_fastdds_peer: no reader matched on %s\n", o.argv[3]);
        return 3;
    }
    /* (the matched reader's side sees this writer, too) */
    std::this_thread::sleep_for(std::chrono::milliseconds(o.num("--settle-ms", 200)));
    std::unique_ptr<typename K::type> m(new typename K::type());
    uint64_t counter = 0, first = 0;
    long sent = 0;
    int64_t period = 1000000000LL / (rate > 0 ? rate : 1), next = mono_ns();
    while (!stop_flag && sent < count) {
        uint64_t now_us = (uint64_t)(real_ns() / 1000);
        counter = now_us > counter ? now_us : counter + 1;
        if (sent == 0)
            first = counter;
        K::fill(*m, counter);
        if (!wr->write(m.get())) {
            std::fprintf(stderr, "ros2_fastdds_peer: write %ld failed\n", sent);
            return 2;
        }
        sent++;
        next += period;
        int64_t d = next - mono_ns();
        if (d > 0)
            std::this_thread::sleep_for(std::chrono::nanoseconds(d));
    }
    long linger = o.num("--linger-ms", 300);
    if (reliable) {
        /* every sample acknowledged by the matched readers (or the time is up) */
        eprosima::fastrtps::Duration_t d((int32_t)(linger / 1000),
                                         (uint32_t)(linger % 1000) * 1000000u);
        if (wr->wait_for_acknowledgments(d) != ReturnCode_t::RETCODE_OK)
            std::fprintf(stderr, "ros2_fastdds_peer: not all samples acknowledged in %ld ms\n",
                         linger);
    } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(linger));
    }
    std::printf("sent=%ld first=%llu last=%llu\n", sent, (unsigned long long)first,
                (unsigned long long)counter);
    std::fflush(stdout);
    pub->delete_datawriter(wr);
    pp->delete_publisher(pub);
    return 0;
}

template <class K> int run(bool sub, const opts &o)
{
    DomainParticipant *pp = make_participant();
    if (!pp) {
        std::fprintf(stderr, "ros2_fastdds_peer: cannot create the participant\n");
        return 2;
    }
    TypeSupport ts(new typename K::pst());
    ts.register_type(pp);
    Topic *tp = pp->create_topic(o.argv[3], ts.get_type_name(), TOPIC_QOS_DEFAULT);
    int rc = 2;
    if (!tp)
        std::fprintf(stderr, "ros2_fastdds_peer: cannot create topic %s\n", o.argv[3]);
    else
        rc = sub ? run_sub<K>(pp, tp, o) : run_pub<K>(pp, tp, o);
    if (tp)
        pp->delete_topic(tp);
    DomainParticipantFactory::get_instance()->delete_participant(pp);
    return rc;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 4 || (std::strcmp(argv[1], "sub") != 0 && std::strcmp(argv[1], "pub") != 0)) {
        std::fprintf(stderr,
                     "usage: ros2_fastdds_peer sub|pub arm|cmd|all|image|cloud TOPIC [options]\n");
        return 2;
    }
    std::signal(SIGTERM, on_term);
    std::signal(SIGINT, on_term);
    opts o{argc, argv};
    bool sub = argv[1][0] == 's';
    std::string k = argv[2];
    if (k == "arm")
        return run<arm_kind>(sub, o);
    if (k == "cmd")
        return run<cmd_kind>(sub, o);
    if (k == "all")
        return run<all_kind>(sub, o);
    if (k == "image")
        return run<image_kind>(sub, o);
    if (k == "cloud")
        return run<cloud_kind>(sub, o);
    std::fprintf(stderr, "ros2_fastdds_peer: unknown message '%s'\n", argv[2]);
    return 2;
}
