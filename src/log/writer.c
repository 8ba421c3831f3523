/* writer.c - ard_logw_*: an MCAP file writer. The caller's thread encodes messages into the
 * open chunk; closed chunks, channel declarations, rotations and the final summary are items
 * handled in order by one function, either at once or by a background thread. */
#include "logi.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_CH 4096 /* channels per recording (MCAP ids are 16-bit; this bounds the tables) */

enum item_kind { IT_CHUNK, IT_CHANNEL, IT_ROTATE, IT_FINISH };

struct item {
    struct item *next;
    enum item_kind kind;
    struct ardl_chunk chunk;         /* IT_CHUNK */
    struct ardc_buf schema, channel; /* IT_CHANNEL: records; IT_ROTATE: all so far */
    char *name, *type;               /* IT_CHANNEL */
    size_t size;
    char *path;            /* IT_ROTATE */
    uint64_t *missed_base; /* IT_ROTATE: missed counts when it was asked for */
    size_t bytes;          /* accounted in the queue */
};

struct chan_info { /* what the file side knows of a channel (for the closing metadata) */
    char *name, *type;
    size_t size;
    uint64_t count;
    uint64_t missed_base;
};

/* State of the file being written: owned by whoever runs items (background thread or caller). */
struct file {
    int fd;
    char *path;
    uint64_t off;
    struct ardc_buf schemas, channels, chunk_idx, meta_idx;
    uint32_t nschemas, nchannels, nmeta, nchunks;
    uint64_t messages;
    int64_t start_ns, end_ns;
    struct chan_info *ch;
    size_t nch;
    const char *compression;
};

struct wchan {
    struct ardr2_layout lay;
    uint16_t id;
};

struct ard_logw {
    /* caller side */
    struct ardl_chunk *cur;
    struct wchan *ch;
    size_t nch;
    int level;
    bool no_crc;
    size_t chunk_size;
    int64_t chunk_ns;
    char *domain;
    uint64_t bytes; /* sealed into the current file, estimated before compression */
    struct ardc_buf all_schemas, all_channels; /* for a rotation */
    struct ardr2_names names; /* the channels' message names (docs/ros2.md#names) */
    _Atomic uint64_t missed[MAX_CH];
    _Atomic uint64_t written[MAX_CH]; /* messages in complete chunks on disk, all files */
    bool finished;                    /* ard_logw_finish done: only reading counts and close */
    int finish_rc;

    /* the queue (background mode) */
    bool bg;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv, cv_done;
    struct item *head, *tail;
    struct item *free_chunks; /* chunks given back for reuse */
    size_t queued, queue_max;
    bool busy;
    int nice;

    _Atomic int err;
    char errmsg[512]; /* detail of the first error, for the caller's thread */
    struct file f;    /* owned by the item runner */
};

static int wfail(struct ard_logw *w, int code)
{
    if (atomic_load(&w->err) == 0)
        snprintf(w->errmsg, sizeof w->errmsg, "%s", ard_errdetail());
    int z = 0;
    atomic_compare_exchange_strong(&w->err, &z, code);
    return code;
}

/* ---- the file side ---------------------------------------------------------------------- */

static int f_writev(struct ard_logw *w, struct iovec *iov, int n)
{
    struct file *f = &w->f;
    if (atomic_load(&w->err))
        return atomic_load(&w->err);
    uint64_t start = f->off;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    size_t done = 0;
    while (done < total) {
        ssize_t k = writev(f->fd, iov, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            int e = k < 0 ? errno : ENOSPC;
            /* Cut the partial record away: the file ends at a record boundary. */
            if (ftruncate(f->fd, (off_t)start) == 0)
                lseek(f->fd, (off_t)start, SEEK_SET);
            ardi_fail_errno(ARD_ESYS, e, "writing '%s' at offset %llu", f->path,
                            (unsigned long long)start);
            return wfail(w, ARD_ESYS);
        }
        done += (size_t)k;
        while (k > 0) {
            if ((size_t)k >= iov->iov_len) {
                k -= (ssize_t)iov->iov_len;
                iov++;
                n--;
            } else {
                iov->iov_base = (uint8_t *)iov->iov_base + k;
                iov->iov_len -= (size_t)k;
                k = 0;
            }
        }
    }
    return 0;
}

static int f_write(struct ard_logw *w, const void *p, size_t n)
{
    struct iovec v = {(void *)p, n};
    int rc = f_writev(w, &v, 1);
    if (rc == 0)
        w->f.off += n;
    return rc;
}

static void metadata_rec(struct ardc_buf *b, const char *name, const char *const *kv, size_t n)
{
    size_t at = ardl_rec_begin(b, ARDL_OP_METADATA);
    ardl_str(b, name);
    size_t m = ardl_len32_begin(b);
    for (size_t i = 0; i + 1 < n; i += 2) {
        ardl_str(b, kv[i]);
        ardl_str(b, kv[i + 1]);
    }
    ardl_len32_end(b, m);
    ardl_rec_end(b, at);
}

static int f_metadata(struct ard_logw *w, const char *name, struct ardc_buf *rec)
{
    struct file *f = &w->f;
    uint64_t at = f->off;
    if (rec->oom)
        return wfail(w, ardi_fail(ARD_ENOMEM, "out of memory"));
    int rc = f_write(w, rec->p, rec->len);
    if (rc)
        return rc;
    size_t r = ardl_rec_begin(&f->meta_idx, ARDL_OP_METADATA_INDEX);
    ardl_u64(&f->meta_idx, at);
    ardl_u64(&f->meta_idx, rec->len);
    ardl_str(&f->meta_idx, name);
    ardl_rec_end(&f->meta_idx, r);
    f->nmeta++;
    return 0;
}

static int f_open(struct ard_logw *w, const char *path)
{
    struct file *f = &w->f;
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->path = strdup(path);
    if (!f->path)
        return wfail(w, ardi_fail(ARD_ENOMEM, "out of memory"));
    f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0)
        return wfail(w, ardi_fail_errno(ARD_ESYS, errno, "cannot create '%s'", path));
    struct ardc_buf b = {0};
    ardc_put(&b, ARDL_MAGIC, ARDL_MAGIC_LEN);
    size_t at = ardl_rec_begin(&b, ARDL_OP_HEADER);
    ardl_str(&b, "ros2");
    char lib[64];
    snprintf(lib, sizeof lib, "ardnet %d.%d.%d", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
             ARD_VERSION_PATCH);
    ardl_str(&b, lib);
    ardl_rec_end(&b, at);
    int rc = b.oom ? wfail(w, ardi_fail(ARD_ENOMEM, "out of memory")) : f_write(w, b.p, b.len);
    b.len = 0;
    if (rc == 0) {
        char host[256] = "", start[32], ver[16];
        gethostname(host, sizeof host - 1);
        snprintf(start, sizeof start, "%lld", (long long)ard_realtime_ns());
        snprintf(ver, sizeof ver, "%d.%d.%d", ARD_VERSION_MAJOR, ARD_VERSION_MINOR,
                 ARD_VERSION_PATCH);
        const char *kv[] = {
            "host",    host, "domain", w->domain ? w->domain : "", "start_ns", start,
            "version", ver,  "format", "ardnet recording 1"};
        metadata_rec(&b, "ardnet", kv, sizeof kv / sizeof kv[0]);
        rc = f_metadata(w, "ardnet", &b);
    }
    ardc_free(&b);
    return rc;
}

static int f_channel(struct ard_logw *w, struct item *it)
{
    struct file *f = &w->f;
    int rc = f_write(w, it->schema.p, it->schema.len);
    if (rc == 0)
        rc = f_write(w, it->channel.p, it->channel.len);
    if (rc)
        return rc;
    ardc_put(&f->schemas, it->schema.p, it->schema.len);
    ardc_put(&f->channels, it->channel.p, it->channel.len);
    f->nschemas++;
    f->nchannels++;
    struct chan_info *ci = realloc(f->ch, (f->nch + 1) * sizeof *ci);
    if (!ci)
        return wfail(w, ardi_fail(ARD_ENOMEM, "out of memory"));
    f->ch = ci;
    ci = &f->ch[f->nch];
    memset(ci, 0, sizeof *ci);
    ci->name = strdup(it->name);
    ci->type = strdup(it->type);
    ci->size = it->size;
    ci->missed_base = 0; /* the count of a channel starts when it is declared */
    f->nch++;
    if (!ci->name || !ci->type)
        return wfail(w, ardi_fail(ARD_ENOMEM, "out of memory"));
    return 0;
}

static int f_chunk(struct ard_logw *w, struct ardl_chunk *c)
{
    struct file *f = &w->f;
    if (c->messages == 0)
        return 0;
    struct ardl_sealed s;
    int rc = ardl_chunk_seal(c, w->level, !w->no_crc, &s);
    if (rc) {
        ardl_sealed_free(&s);
        return wfail(w, rc);
    }
    uint64_t at = f->off;
    struct iovec v[3] = {{s.head.p, s.head.len}, {s.body.p, s.body.len}, {s.tail.p, s.tail.len}};
    rc = f_writev(w, v, 3);
    if (rc == 0) {
        f->off += s.head.len + s.body.len + s.tail.len;
        struct ardc_buf *b = &f->chunk_idx;
        size_t r = ardl_rec_begin(b, ARDL_OP_CHUNK_INDEX);
        ardl_u64(b, (uint64_t)s.start_ns);
        ardl_u64(b, (uint64_t)s.end_ns);
        ardl_u64(b, at);
        ardl_u64(b, s.head.len + s.body.len);
        size_t m = ardl_len32_begin(b);
        uint64_t tail_at = at + s.head.len + s.body.len;
        for (size_t i = 0; i < s.nmi; i++) {
            ardl_u16(b, s.mi_ids[i]);
            ardl_u64(b, tail_at + s.mi_off[i]);
        }
        ardl_len32_end(b, m);
        ardl_u64(b, s.tail.len);
        ardl_str(b, s.compression);
        ardl_u64(b, s.body.len);
        ardl_u64(b, s.uncompressed);
        ardl_rec_end(b, r);
        if (f->nchunks == 0 || s.start_ns < f->start_ns)
            f->start_ns = s.start_ns;
        if (f->nchunks == 0 || s.end_ns > f->end_ns)
            f->end_ns = s.end_ns;
        f->nchunks++;
        f->messages += s.messages;
        for (size_t i = 0; i < s.nch && i < f->nch; i++)
            f->ch[i].count += s.per_channel[i];
        for (size_t i = 0; i < s.nch && i < MAX_CH; i++)
            atomic_fetch_add(&w->written[i], s.per_channel[i]);
        if (f->compression == NULL)
            f->compression = s.compression;
    }
    ardl_sealed_free(&s);
    return rc;
}

static void group(struct ardc_buf *offs, uint8_t op, uint64_t start, size_t len)
{
    if (len == 0)
        return;
    size_t r = ardl_rec_begin(offs, ARDL_OP_SUMMARY_OFFSET);
    ardl_u8(offs, op);
    ardl_u64(offs, start);
    ardl_u64(offs, len);
    ardl_rec_end(offs, r);
}

/* The closing metadata, Data End, summary, summary offsets, footer and magic. */
static int f_finish(struct ard_logw *w)
{
    struct file *f = &w->f;
    int rc = atomic_load(&w->err);
    struct ardc_buf b = {0}, sum = {0}, offs = {0};
    if (rc == 0 && f->nch) {
        size_t n = 4 * f->nch;
        const char **kv = calloc(2 * n, sizeof *kv);
        char(*val)[24] = calloc(3 * f->nch, sizeof *val);
        char(*key)[ARD_MAX_NAME + 12] = calloc(n, sizeof *key);
        if (!kv || !val || !key) {
            rc = wfail(w, ardi_fail(ARD_ENOMEM, "out of memory"));
        } else {
            for (size_t i = 0; i < f->nch; i++) {
                struct chan_info *c = &f->ch[i];
                uint64_t missed = atomic_load(&w->missed[i]) - c->missed_base;
                snprintf(key[4 * i], sizeof key[0], "%s.type", c->name);
                snprintf(key[4 * i + 1], sizeof key[0], "%s.size", c->name);
                snprintf(key[4 * i + 2], sizeof key[0], "%s.recorded", c->name);
                snprintf(key[4 * i + 3], sizeof key[0], "%s.missed", c->name);
                snprintf(val[3 * i], sizeof val[0], "%zu", c->size);
                snprintf(val[3 * i + 1], sizeof val[0], "%llu", (unsigned long long)c->count);
                snprintf(val[3 * i + 2], sizeof val[0], "%llu", (unsigned long long)missed);
                const char *v[4] = {c->type, val[3 * i], val[3 * i + 1], val[3 * i + 2]};
                for (int k = 0; k < 4; k++) {
                    kv[8 * i + 2 * k] = key[4 * i + k];
                    kv[8 * i + 2 * k + 1] = v[k];
                }
            }
            metadata_rec(&b, "ardnet.connections", kv, 2 * n);
            rc = f_metadata(w, "ardnet.connections", &b);
        }
        free(kv);
        free(val);
        free(key);
    }
    if (rc == 0) {
        b.len = 0;
        size_t r = ardl_rec_begin(&b, ARDL_OP_DATA_END);
        ardl_u32(&b, 0); /* no data section CRC: each chunk has its own; a second pass
                          * over every byte would cost as much again */
        ardl_rec_end(&b, r);
        rc = f_write(w, b.p, b.len);
    }
    if (rc == 0) {
        uint64_t s0 = f->off;
        uint64_t g = s0;
        ardc_put(&sum, f->schemas.p, f->schemas.len);
        group(&offs, ARDL_OP_SCHEMA, g, f->schemas.len);
        g += f->schemas.len;
        ardc_put(&sum, f->channels.p, f->channels.len);
        group(&offs, ARDL_OP_CHANNEL, g, f->channels.len);
        g += f->channels.len;
        size_t st = sum.len;
        size_t r = ardl_rec_begin(&sum, ARDL_OP_STATISTICS);
        ardl_u64(&sum, f->messages);
        ardl_u16(&sum, (uint16_t)f->nschemas);
        ardl_u32(&sum, f->nchannels);
        ardl_u32(&sum, 0);
        ardl_u32(&sum, f->nmeta);
        ardl_u32(&sum, f->nchunks);
        ardl_u64(&sum, (uint64_t)f->start_ns);
        ardl_u64(&sum, (uint64_t)f->end_ns);
        size_t m = ardl_len32_begin(&sum);
        for (size_t i = 0; i < f->nch; i++) {
            ardl_u16(&sum, (uint16_t)(i + 1));
            ardl_u64(&sum, f->ch[i].count);
        }
        ardl_len32_end(&sum, m);
        ardl_rec_end(&sum, r);
        group(&offs, ARDL_OP_STATISTICS, g, sum.len - st);
        g += sum.len - st;
        ardc_put(&sum, f->meta_idx.p, f->meta_idx.len);
        group(&offs, ARDL_OP_METADATA_INDEX, g, f->meta_idx.len);
        g += f->meta_idx.len;
        ardc_put(&sum, f->chunk_idx.p, f->chunk_idx.len);
        group(&offs, ARDL_OP_CHUNK_INDEX, g, f->chunk_idx.len);
        g += f->chunk_idx.len;
        uint64_t offs_start = g;
        ardc_put(&sum, offs.p, offs.len);
        /* Footer: the CRC covers the summary through the footer's summary_offset_start. */
        ardl_u8(&sum, ARDL_OP_FOOTER);
        ardl_u64(&sum, 8 + 8 + 4);
        ardl_u64(&sum, s0);
        ardl_u64(&sum, offs_start);
        uint32_t crc = sum.oom ? 0 : ardl_crc32(0, sum.p, sum.len);
        ardl_u32(&sum, crc);
        ardc_put(&sum, ARDL_MAGIC, ARDL_MAGIC_LEN);
        if (sum.oom || offs.oom)
            rc = wfail(w, ardi_fail(ARD_ENOMEM, "out of memory"));
        else
            rc = f_write(w, sum.p, sum.len);
    }
    if (f->fd >= 0 && close(f->fd) < 0 && rc == 0)
        rc = wfail(w, ardi_fail_errno(ARD_ESYS, errno, "closing '%s'", f->path));
    f->fd = -1;
    ardc_free(&b);
    ardc_free(&sum);
    ardc_free(&offs);
    ardc_free(&f->schemas);
    ardc_free(&f->channels);
    ardc_free(&f->chunk_idx);
    ardc_free(&f->meta_idx);
    for (size_t i = 0; i < f->nch; i++) {
        free(f->ch[i].name);
        free(f->ch[i].type);
    }
    free(f->ch);
    free(f->path);
    f->ch = NULL;
    f->path = NULL;
    return rc;
}

/* Run one item on the file. */
static int run_item(struct ard_logw *w, struct item *it)
{
    switch (it->kind) {
    case IT_CHUNK:
        return f_chunk(w, &it->chunk);
    case IT_CHANNEL:
        return f_channel(w, it);
    case IT_ROTATE: {
        /* Keep the channel table: the new file declares the same channels. */
        struct file old = w->f;
        struct chan_info *ch = calloc(old.nch ? old.nch : 1, sizeof *ch);
        for (size_t i = 0; ch && i < old.nch; i++) {
            ch[i].name = strdup(old.ch[i].name);
            ch[i].type = strdup(old.ch[i].type);
            ch[i].size = old.ch[i].size;
            ch[i].missed_base = it->missed_base ? it->missed_base[i] : 0;
        }
        size_t nch = old.nch;
        int rc = f_finish(w);
        atomic_store(&w->err, 0); /* a new file starts with a clean slate */
        int rc2 = f_open(w, it->path);
        if (rc2 == 0)
            rc2 = f_write(w, it->schema.p, it->schema.len);
        if (rc2 == 0)
            rc2 = f_write(w, it->channel.p, it->channel.len);
        ardc_put(&w->f.schemas, it->schema.p, it->schema.len);
        ardc_put(&w->f.channels, it->channel.p, it->channel.len);
        w->f.nschemas = w->f.nchannels = (uint32_t)nch;
        w->f.ch = ch;
        w->f.nch = ch ? nch : 0;
        if (rc)
            wfail(w, rc);
        return rc ? rc : rc2;
    }
    case IT_FINISH:
        return f_finish(w);
    }
    return 0;
}

static void item_free(struct item *it)
{
    if (!it)
        return;
    ardl_chunk_free(&it->chunk);
    ardc_free(&it->schema);
    ardc_free(&it->channel);
    free(it->name);
    free(it->type);
    free(it->path);
    free(it->missed_base);
    free(it);
}

/* ---- the queue ----------------------------------------------------------------------------- */

static void *bg_main(void *arg)
{
    struct ard_logw *w = arg;
    if (w->nice)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), w->nice);
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head)
            pthread_cond_wait(&w->cv, &w->mu);
        struct item *it = w->head;
        w->head = it->next;
        if (!w->head)
            w->tail = NULL;
        w->busy = true;
        pthread_mutex_unlock(&w->mu);
        run_item(w, it);
        bool fin = it->kind == IT_FINISH;
        pthread_mutex_lock(&w->mu);
        w->queued -= it->bytes;
        w->busy = false;
        if (it->kind == IT_CHUNK && !w->free_chunks) {
            ardl_chunk_reset(&it->chunk);
            it->next = NULL;
            w->free_chunks = it;
            it = NULL;
        }
        pthread_cond_broadcast(&w->cv_done);
        if (fin) {
            pthread_mutex_unlock(&w->mu);
            item_free(it);
            return NULL;
        }
        pthread_mutex_unlock(&w->mu);
        item_free(it);
        pthread_mutex_lock(&w->mu);
    }
}

/* Hand an item over (background) or run it now. `force` ignores the queue limit. Returns 0,
 * ARD_EBUSY (queue full, item not taken), or the item's error when run now. */
static int submit(struct ard_logw *w, struct item *it, bool force)
{
    if (!w->bg) {
        int rc = run_item(w, it);
        item_free(it);
        return rc;
    }
    pthread_mutex_lock(&w->mu);
    if (!force && w->queued + it->bytes > w->queue_max && w->queued > 0) {
        pthread_mutex_unlock(&w->mu);
        return ARD_EBUSY;
    }
    w->queued += it->bytes;
    it->next = NULL;
    if (w->tail)
        w->tail->next = it;
    else
        w->head = it;
    w->tail = it;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

/* ---- the API ------------------------------------------------------------------------------- */

static struct ardl_chunk *new_chunk(struct ard_logw *w)
{
    struct ardl_chunk *c = calloc(1, sizeof *c);
    if (!c || !ardl_chunk_channels(c, w->nch ? w->nch : 1)) {
        if (c)
            ardl_chunk_free(c);
        free(c);
        return NULL;
    }
    return c;
}

ard_logw *ard_logw_open(const char *path, const struct ard_logw_opts *opts)
{
    struct ard_logw_opts o = {0};
    if (opts)
        o = *opts;
    if (!path) {
        ardi_fail(ARD_EINVAL, "no file name");
        return NULL;
    }
    int level = 0;
    if (o.compression && o.compression[0]) {
        if (strcmp(o.compression, "zstd") != 0) {
            ardi_fail(ARD_EINVAL, "compression '%s': expected zstd or none", o.compression);
            return NULL;
        }
        level = o.zstd_level ? o.zstd_level : 1;
        if (level < 1 || level > 19) {
            ardi_fail(ARD_EINVAL, "zstd level %d: expected 1..19", level);
            return NULL;
        }
    }
    struct ard_logw *w = calloc(1, sizeof *w);
    if (!w) {
        ardi_fail(ARD_ENOMEM, "out of memory");
        return NULL;
    }
    w->level = level;
    w->no_crc = o.no_crc;
    w->chunk_size = o.chunk_size ? o.chunk_size : (1u << 20);
    w->chunk_ns = o.chunk_ns ? o.chunk_ns : 1000000000;
    w->queue_max = o.queue_bytes;
    w->nice = o.background_nice;
    w->domain = o.domain ? strdup(o.domain) : NULL;
    w->f.fd = -1;
    w->cur = new_chunk(w);
    if (!w->cur || (o.domain && !w->domain)) {
        ardi_fail(ARD_ENOMEM, "out of memory");
        goto fail;
    }
    if (f_open(w, path) < 0)
        goto fail;
    atomic_store(&w->err, 0);
    if (o.queue_bytes) {
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        pthread_cond_init(&w->cv_done, NULL);
        if (pthread_create(&w->th, NULL, bg_main, w) != 0) {
            ardi_fail(ARD_ESYS, "cannot start the writer thread");
            goto fail;
        }
        w->bg = true;
    }
    return w;
fail:;
    int code = ard_lasterror();
    char why[512];
    snprintf(why, sizeof why, "%s", ard_errdetail());
    if (w->f.fd >= 0) {
        close(w->f.fd);
        unlink(path);
    }
    free(w->f.path);
    ardc_free(&w->f.schemas);
    ardc_free(&w->f.meta_idx);
    if (w->cur)
        ardl_chunk_free(w->cur);
    free(w->cur);
    free(w->domain);
    free(w);
    ardi_fail(code ? code : ARD_ESYS, "%s", why);
    return NULL;
}

/* rosbag2's offered_qos_profiles (rosbag2_storage's qos.cpp): every key its reader takes, in
 * the integer form of metadata version 8, which rosbag2 Humble reads and Iron, Jazzy and
 * Rolling detect and read too (they write names instead since version 9). Values: keep last
 * 1 (history 1), best effort (reliability 2), volatile (durability 2), automatic liveliness
 * (1), no deadline, lifespan or lease (RMW_DURATION_INFINITE), ROS namespace conventions
 * kept. */
static const char qos_profiles[] = "- history: 1\n"
                                   "  depth: 1\n"
                                   "  reliability: 2\n"
                                   "  durability: 2\n"
                                   "  deadline:\n"
                                   "    sec: 9223372036\n"
                                   "    nsec: 854775807\n"
                                   "  lifespan:\n"
                                   "    sec: 9223372036\n"
                                   "    nsec: 854775807\n"
                                   "  liveliness: 1\n"
                                   "  liveliness_lease_duration:\n"
                                   "    sec: 9223372036\n"
                                   "    nsec: 854775807\n"
                                   "  avoid_ros_namespace_conventions: false\n";

int ard_logw_add(ard_logw *w, const char *conn, const char *type, size_t size)
{
    if (!w || !conn || !conn[0] || size == 0)
        return ardi_fail(ARD_EINVAL, "ard_logw_add: no writer, name or size");
    if (w->finished)
        return ardi_fail(ARD_EINVAL, "the recording is finished (ard_logw_finish)");
    if (w->nch >= MAX_CH)
        return ardi_fail(ARD_EINVAL, "connection '%s': a recording holds at most %d", conn, MAX_CH);
    char norm[ARD_MAX_TYPE + 1] = "";
    if (type && type[0] && ard_type_normalize(type, norm, sizeof norm) < 0)
        return ARD_ETYPE;
    struct wchan *nc = realloc(w->ch, (w->nch + 1) * sizeof *nc);
    if (!nc)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    w->ch = nc;
    struct wchan *c = &w->ch[w->nch];
    int rc = ardr2_layout_init(&c->lay, norm, size);
    if (rc < 0)
        return ardi_fail(rc, "connection '%s': %s", conn, ard_errdetail());
    if (!ardl_chunk_channels(w->cur, w->nch + 1)) {
        ardr2_layout_free(&c->lay);
        return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    uint16_t id = (uint16_t)(w->nch + 1);
    c->id = id;
    struct item *it = calloc(1, sizeof *it);
    struct ardc_buf def = {0};
    if (!it || ardr2_msgdef(norm, size, &def) < 0) {
        free(it);
        ardc_free(&def);
        ardr2_layout_free(&c->lay);
        return ard_lasterror() ? ard_lasterror() : ARD_ENOMEM;
    }
    it->kind = IT_CHANNEL;
    /* The outside names (src/ros2): topic /a/b, schema ardnet_msgs/msg/<Name>, the layout hash
     * in the channel's metadata. */
    char msg[ARDR2_MSG_MAX], sname[ARDR2_TYPE_MAX], topic[ARDR2_TOPIC_MAX], hash[17];
    uint64_t h = ardr2_fnv1a(def.p, def.len);
    ardr2_hash_hex(h, hash, sizeof hash);
    if (ardr2_topic(conn, topic, sizeof topic) < 0 ||
        ardr2_names_add(&w->names, conn, h, msg, sizeof msg, NULL) < 0) {
        int code = ard_lasterror();
        free(it);
        ardc_free(&def);
        ardr2_layout_free(&c->lay);
        return code;
    }
    ardr2_type_name(msg, sname, sizeof sname);
    size_t r = ardl_rec_begin(&it->schema, ARDL_OP_SCHEMA);
    ardl_u16(&it->schema, id);
    ardl_str(&it->schema, sname);
    ardl_str(&it->schema, "ros2msg");
    ardl_u32(&it->schema, (uint32_t)def.len);
    ardc_put(&it->schema, def.p, def.len);
    ardl_rec_end(&it->schema, r);
    ardc_free(&def);
    r = ardl_rec_begin(&it->channel, ARDL_OP_CHANNEL);
    ardl_u16(&it->channel, id);
    ardl_u16(&it->channel, id);
    ardl_str(&it->channel, topic);
    ardl_str(&it->channel, "cdr");
    size_t m = ardl_len32_begin(&it->channel);
    char sz[24];
    snprintf(sz, sizeof sz, "%zu", size);
    ardl_str(&it->channel, "ardnet.type");
    ardl_str(&it->channel, norm);
    ardl_str(&it->channel, "ardnet.size");
    ardl_str(&it->channel, sz);
    ardl_str(&it->channel, "ardnet.name");
    ardl_str(&it->channel, conn);
    ardl_str(&it->channel, "ardnet.layout_hash");
    ardl_str(&it->channel, hash);
    ardl_str(&it->channel, "offered_qos_profiles");
    ardl_str(&it->channel, qos_profiles);
    ardl_len32_end(&it->channel, m);
    ardl_rec_end(&it->channel, r);
    it->name = strdup(conn);
    it->type = strdup(norm);
    it->size = size;
    ardc_put(&w->all_schemas, it->schema.p, it->schema.len);
    ardc_put(&w->all_channels, it->channel.p, it->channel.len);
    if (!it->name || !it->type || it->schema.oom || it->channel.oom || w->all_schemas.oom ||
        w->all_channels.oom) {
        item_free(it);
        ardr2_layout_free(&c->lay);
        return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    w->nch++;
    rc = submit(w, it, true);
    return rc < 0 ? rc : (int)(w->nch - 1);
}

/* Close the open chunk: queue it (background) or write it. */
static int seal_current(struct ard_logw *w, bool force)
{
    if (w->cur->messages == 0)
        return 0;
    struct item *it;
    if (w->bg) {
        pthread_mutex_lock(&w->mu);
        it = w->free_chunks;
        w->free_chunks = NULL;
        pthread_mutex_unlock(&w->mu);
        if (it) {
            it->kind = IT_CHUNK;
            struct ardl_chunk tmp = it->chunk;
            it->chunk = *w->cur;
            *w->cur = tmp;
        } else {
            it = calloc(1, sizeof *it);
            if (!it)
                return ardi_fail(ARD_ENOMEM, "out of memory");
            it->kind = IT_CHUNK;
            it->chunk = *w->cur;
            memset(w->cur, 0, sizeof *w->cur);
        }
        it->bytes = it->chunk.recs.len;
        if (!ardl_chunk_channels(w->cur, w->nch)) {
            *w->cur = it->chunk; /* give it back */
            memset(&it->chunk, 0, sizeof it->chunk);
            item_free(it);
            return ardi_fail(ARD_ENOMEM, "out of memory");
        }
        ardl_chunk_reset(w->cur);
        size_t bytes = it->bytes; /* once taken, the item is the writer thread's to free */
        int rc = submit(w, it, force);
        if (rc == ARD_EBUSY) {
            struct ardl_chunk tmp = *w->cur; /* undo: the full chunk stays open */
            *w->cur = it->chunk;
            it->chunk = tmp;
            item_free(it);
            return rc;
        }
        w->bytes += bytes;
        return rc;
    }
    w->bytes += w->cur->recs.len;
    return f_chunk(w, w->cur);
}

/* Before a message of channel ch: a writer that has failed stays failed; a full or old
 * chunk is sealed first. 0, the writer's error, or ARD_EBUSY (the queue is full: the message
 * is counted as missed). */
static int make_room(struct ard_logw *w, int ch, int64_t log_ns)
{
    if (w->finished)
        return ardi_fail(ARD_EINVAL, "the recording is finished (ard_logw_finish)");
    int e = atomic_load(&w->err);
    if (e)
        return ardi_fail(e, "%s", w->errmsg);
    struct ardl_chunk *c = w->cur;
    if (c->messages && (c->recs.len >= w->chunk_size || log_ns - c->start_ns >= w->chunk_ns)) {
        int rc = seal_current(w, false);
        if (rc == ARD_EBUSY) {
            ard_logw_missed(w, ch, 1);
            return ardi_fail(ARD_EBUSY, "disk too slow: queue of %zu bytes full", w->queue_max);
        }
        return rc;
    }
    return 0;
}

int ard_logw_write(ard_logw *w, int ch, const void *packet, uint64_t seq, int64_t log_ns,
                   int64_t real_ns)
{
    if (!w || ch < 0 || (size_t)ch >= w->nch || !packet)
        return ardi_fail(ARD_EINVAL, "ard_logw_write: bad writer, channel %d or packet", ch);
    int rc = make_room(w, ch, log_ns);
    if (rc)
        return rc;
    struct ardl_chunk *c = w->cur;
    struct wchan *wc = &w->ch[ch];
    uint8_t *d = ardl_chunk_msg(c, (size_t)ch, wc->id, (uint32_t)seq, log_ns, real_ns,
                                ARDR2_CDR_HDR + wc->lay.body);
    if (!d)
        return ardi_fail(ARD_ENOMEM, "out of memory for the chunk");
    ardr2_cdr_encode(&wc->lay, packet, d);
    return 0;
}

int ard_logw_write_with(ard_logw *w, int ch, uint64_t seq, int64_t log_ns, int64_t real_ns,
                        bool (*copy)(void *dst, void *arg), void *arg)
{
    if (!w || ch < 0 || (size_t)ch >= w->nch || !copy)
        return ardi_fail(ARD_EINVAL, "ard_logw_write_with: bad writer, channel %d or copy", ch);
    int rc = make_room(w, ch, log_ns);
    if (rc)
        return rc;
    struct ardl_chunk *c = w->cur;
    struct wchan *wc = &w->ch[ch];
    /* Room for the whole packet; the record keeps only the CDR body of it. */
    uint8_t *d = ardl_chunk_msg(c, (size_t)ch, wc->id, (uint32_t)seq, log_ns, real_ns,
                                ARDR2_CDR_HDR + wc->lay.size);
    if (!d)
        return ardi_fail(ARD_ENOMEM, "out of memory for the chunk");
    if (!copy(d + ARDR2_CDR_HDR, arg)) {
        ardl_chunk_unmsg(c, (size_t)ch);
        return 0;
    }
    ardr2_cdr_inplace(&wc->lay, d);
    ardl_chunk_trim(c, wc->lay.size - wc->lay.body);
    return 1;
}

void ard_logw_missed(ard_logw *w, int ch, uint64_t n)
{
    if (w && ch >= 0 && ch < MAX_CH)
        atomic_fetch_add(&w->missed[ch], n);
}

int ard_logw_flush(ard_logw *w)
{
    if (!w || w->finished)
        return ardi_fail(ARD_EINVAL, "ard_logw_flush: no writer, or it is finished");
    int rc = seal_current(w, true);
    return rc ? rc : ard_logw_error(w);
}

uint64_t ard_logw_bytes(const ard_logw *w)
{
    return w ? w->bytes + w->cur->recs.len : 0;
}

int ard_logw_error(const ard_logw *w)
{
    int e = w ? atomic_load(&((struct ard_logw *)w)->err) : 0;
    if (e)
        ardi_fail(e, "%s", w->errmsg);
    return e;
}

int ard_logw_rotate(ard_logw *w, const char *path)
{
    if (!w || !path || w->finished)
        return ardi_fail(ARD_EINVAL, "ard_logw_rotate: no writer or path, or it is finished");
    int rc = seal_current(w, true);
    struct item *it = calloc(1, sizeof *it);
    if (!it)
        return ardi_fail(ARD_ENOMEM, "out of memory");
    it->kind = IT_ROTATE;
    it->path = strdup(path);
    it->missed_base = calloc(w->nch ? w->nch : 1, sizeof *it->missed_base);
    for (size_t i = 0; it->missed_base && i < w->nch; i++)
        it->missed_base[i] = atomic_load(&w->missed[i]);
    ardc_put(&it->schema, w->all_schemas.p, w->all_schemas.len);
    ardc_put(&it->channel, w->all_channels.p, w->all_channels.len);
    if (!it->path || !it->missed_base || it->schema.oom || it->channel.oom) {
        item_free(it);
        return ardi_fail(ARD_ENOMEM, "out of memory");
    }
    w->bytes = 0;
    int rc2 = submit(w, it, true);
    return rc ? rc : rc2;
}

uint64_t ard_logw_written(const ard_logw *w, int ch)
{
    if (!w || ch < 0 || ch >= MAX_CH)
        return 0;
    return atomic_load(&((struct ard_logw *)w)->written[ch]);
}

int ard_logw_finish(ard_logw *w)
{
    if (!w)
        return 0;
    if (w->finished)
        return w->finish_rc;
    w->finished = true;
    int rc = seal_current(w, true);
    struct item *it = calloc(1, sizeof *it);
    int rc2;
    if (it) {
        it->kind = IT_FINISH;
        rc2 = submit(w, it, true);
    } else {
        rc2 = w->bg ? ARD_ENOMEM : f_finish(w);
    }
    if (w->bg) {
        if (it)
            pthread_join(w->th, NULL);
        else
            pthread_cancel(w->th);
        while (w->head) {
            struct item *n = w->head->next;
            item_free(w->head);
            w->head = n;
        }
        item_free(w->free_chunks);
        w->free_chunks = NULL;
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        pthread_cond_destroy(&w->cv_done);
        w->bg = false;
    }
    int e = atomic_load(&w->err);
    if (rc == 0)
        rc = rc2;
    if (rc == 0)
        rc = e;
    if (e)
        ardi_fail(e, "%s", w->errmsg);
    w->finish_rc = rc;
    return rc;
}

int ard_logw_close(ard_logw *w)
{
    if (!w)
        return 0;
    int rc = ard_logw_finish(w);
    int e = atomic_load(&w->err);
    char why[sizeof w->errmsg];
    snprintf(why, sizeof why, "%s", w->errmsg);
    for (size_t i = 0; i < w->nch; i++)
        ardr2_layout_free(&w->ch[i].lay);
    free(w->ch);
    ardl_chunk_free(w->cur);
    free(w->cur);
    ardc_free(&w->all_schemas);
    ardr2_names_free(&w->names);
    ardc_free(&w->all_channels);
    free(w->domain);
    free(w);
    if (e)
        ardi_fail(e, "%s", why);
    return rc;
}
