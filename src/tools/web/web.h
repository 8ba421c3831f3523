/* web.h - the page assets of `ard web`, built into the program (web_assets.c is generated
 * from src/tools/web/ by embed.cmake at build time). */
#ifndef ARD_WEB_H
#define ARD_WEB_H

#include <stddef.h>

struct web_asset {
    const char *path; /* "/app.js" */
    const char *type; /* Content-Type */
    const unsigned char *data;
    size_t len;
};

/* web_assets[0] is the page itself (/index.html, also served at /). */
extern const struct web_asset web_assets[];
extern const size_t web_nassets;

#endif /* ARD_WEB_H */
