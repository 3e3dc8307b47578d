// libvips, loaded at run time: dlopen("libvips.so.42") and dlsym of the few functions Caravan calls. The server binary
// links none of libvips (nor GLib), so it builds and runs where libvips is not installed; image transformations are
// then unavailable. libvips's functions take NULL-terminated option lists (C varargs), so every call is made here.

#include "CImageVips.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void VipsImage;  // opaque: only pointers pass through

// The libvips enums Caravan passes (values from libvips 8.x's headers; stable across its ABI 42).
enum { VIPS_INTERESTING_CENTRE = 1 };
enum { VIPS_SIZE_FORCE = 3 };

static struct {
    int (*init)(const char *argv0);
    const char *(*version_string)(void);
    void (*block_untrusted_set)(int state);  // libvips >= 8.13; absent before
    void (*cache_set_max)(int max);
    const char *(*error_buffer)(void);
    void (*error_clear)(void);
    const char *(*find_load_buffer)(const void *data, size_t size);
    VipsImage *(*new_from_buffer)(const void *buf, size_t len, const char *option_string, ...);
    int (*get_width)(const VipsImage *image);
    int (*get_height)(const VipsImage *image);
    int (*get_n_pages)(VipsImage *image);
    int (*get_int)(const VipsImage *image, const char *name, int *out);
    int (*thumbnail_buffer)(void *buf, size_t len, VipsImage **out, int width, ...);
    int (*write_to_buffer)(VipsImage *in, const char *suffix, void **buf, size_t *size, ...);
    void (*object_unref)(void *object);
    void (*free)(void *memory);
    unsigned (*log_set_handler)(const char *domain, int levels, void (*handler)(const char *, int, const char *, void *), void *data);
} vips;

/// libvips's warnings (a truncated file, an ignored colour profile) would go to stderr, unstructured: dropped, as the
/// failures that matter come back as errors.
static void ignore_log(const char *domain, int level, const char *message, void *data) {
    (void)domain; (void)level; (void)message; (void)data;
}

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_error[512];
static char version[64];
static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_error(char *error, size_t error_size, const char *message) {
    if (error == NULL || error_size == 0) return;
    snprintf(error, error_size, "%s", message);
}

/// libvips's error text (then cleared), or `fallback` when it has none. libvips keeps one buffer per process.
static void take_vips_error(char *error, size_t error_size, const char *fallback) {
    pthread_mutex_lock(&error_lock);
    const char *text = vips.error_buffer ? vips.error_buffer() : NULL;
    set_error(error, error_size, (text != NULL && text[0] != '\0') ? text : fallback);
    if (vips.error_clear) vips.error_clear();
    pthread_mutex_unlock(&error_lock);
    // One line: libvips ends each message with a newline.
    if (error != NULL) {
        size_t length = strlen(error);
        while (length > 0 && (error[length - 1] == '\n' || error[length - 1] == ' ')) error[--length] = '\0';
        for (size_t i = 0; i < length; i++) if (error[i] == '\n') error[i] = ' ';
    }
}

#define RESOLVE(field, name)                                                                      \
    do {                                                                                          \
        *(void **)(&vips.field) = dlsym(handle, name);                                            \
        if (vips.field == NULL) {                                                                 \
            snprintf(load_error, sizeof load_error, "libvips has no %s (libvips 8.6 or later is needed)", name); \
            return;                                                                               \
        }                                                                                         \
    } while (0)

static void load(void) {
    // CARAVAN_VIPS_LIBRARY names another file (tests use a missing one to see the server without libvips).
    const char *configured = getenv("CARAVAN_VIPS_LIBRARY");
    const char *names[] = {configured, "libvips.so.42", "libvips.42.dylib", NULL};
    void *handle = NULL;
    const char *first_error = NULL;
    char tried[256] = "";
    for (int i = (configured != NULL && configured[0] != '\0') ? 0 : 1; names[i] != NULL; i++) {
        handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) break;
        if (first_error == NULL) {
            const char *reason = dlerror();
            snprintf(tried, sizeof tried, "%s", reason ? reason : names[i]);
            first_error = tried;
        }
        if (configured != NULL && configured[0] != '\0') break;  // a configured library is the only one tried
    }
    if (handle == NULL) {
        snprintf(load_error, sizeof load_error, "libvips could not be loaded (%s)", first_error ? first_error : "not found");
        return;
    }
    RESOLVE(init, "vips_init");
    RESOLVE(version_string, "vips_version_string");
    RESOLVE(cache_set_max, "vips_cache_set_max");
    RESOLVE(error_buffer, "vips_error_buffer");
    RESOLVE(error_clear, "vips_error_clear");
    RESOLVE(find_load_buffer, "vips_foreign_find_load_buffer");
    RESOLVE(new_from_buffer, "vips_image_new_from_buffer");
    RESOLVE(get_width, "vips_image_get_width");
    RESOLVE(get_height, "vips_image_get_height");
    RESOLVE(get_n_pages, "vips_image_get_n_pages");
    RESOLVE(get_int, "vips_image_get_int");
    RESOLVE(thumbnail_buffer, "vips_thumbnail_buffer");
    RESOLVE(write_to_buffer, "vips_image_write_to_buffer");
    RESOLVE(object_unref, "g_object_unref");
    RESOLVE(free, "g_free");
    *(void **)(&vips.block_untrusted_set) = dlsym(handle, "vips_block_untrusted_set");
    *(void **)(&vips.log_set_handler) = dlsym(handle, "g_log_set_handler");
    // GLib's G_LOG_LEVEL_WARNING | MESSAGE | INFO | DEBUG, for libvips's log domain.
    if (vips.log_set_handler) vips.log_set_handler("VIPS", (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7), ignore_log, NULL);
    if (vips.init("caravan") != 0) {
        take_vips_error(load_error, sizeof load_error, "vips_init failed");
        return;
    }
    // Loaders libvips marks untrusted (SVG, PDF, ImageMagick, …) never see user bytes; renders are not cached by
    // libvips (Caravan keeps its own cache of results).
    if (vips.block_untrusted_set) vips.block_untrusted_set(1);
    vips.cache_set_max(0);
    snprintf(version, sizeof version, "%s", vips.version_string());
    load_status = 0;
}

/// Loads libvips once. `vips_init` sets `VIPSHOME` in the environment when it is not set (GLib's `g_setenv`, from
/// `vips_guess_prefix`), and `setenv` may move the `environ` array under a thread reading it (Foundation's
/// `Process.run` copying the environment for a child): call it first while nothing else runs — `caravan serve` does,
/// building its host before any service starts; the test process preloads it before `main` (CImageVipsTestPreload).
/// Not from a constructor of the server binary: in the static release binary, a `setenv` before `main` cost the Swift
/// runtime its arguments.
int caravan_vips_load(char *error, size_t error_size) {
    pthread_once(&load_once, load);
    if (load_status != 0) set_error(error, error_size, load_error);
    return load_status;
}

const char *caravan_vips_version(void) { return version; }

int caravan_vips_read_header(const void *bytes, size_t length, caravan_vips_header *header, char *error, size_t error_size) {
    if (caravan_vips_load(error, error_size) != 0) return -1;
    memset(header, 0, sizeof *header);
    const char *loader = vips.find_load_buffer(bytes, length);
    if (loader == NULL) {
        take_vips_error(error, error_size, "the bytes are not an image libvips can read");
        return -1;
    }
    snprintf(header->loader, sizeof header->loader, "%s", loader);
    VipsImage *image = vips.new_from_buffer(bytes, length, "", NULL);
    if (image == NULL) {
        take_vips_error(error, error_size, "the image header could not be read");
        return -1;
    }
    header->width = vips.get_width(image);
    header->height = vips.get_height(image);
    header->pages = vips.get_n_pages(image);
    int orientation = 1;
    if (vips.get_int(image, "orientation", &orientation) != 0) {
        orientation = 1;
        vips.error_clear();  // no orientation field: not an error
    }
    header->orientation = orientation;
    vips.object_unref(image);
    return 0;
}

int caravan_vips_render(const void *bytes, size_t length, const caravan_vips_request *request, void **output,
                        size_t *output_length, char *error, size_t error_size) {
    if (caravan_vips_load(error, error_size) != 0) return -1;
    if (request->width < 1 || request->height < 1) {
        set_error(error, error_size, "the target size must be at least 1x1");
        return -1;
    }
    VipsImage *thumbnail = NULL;
    int failed = request->crop
        ? vips.thumbnail_buffer((void *)bytes, length, &thumbnail, request->width, "height", request->height,
                                "crop", VIPS_INTERESTING_CENTRE, NULL)
        : vips.thumbnail_buffer((void *)bytes, length, &thumbnail, request->width, "height", request->height,
                                "size", VIPS_SIZE_FORCE, NULL);
    if (failed != 0 || thumbnail == NULL) {
        take_vips_error(error, error_size, "the image could not be resized");
        return -1;
    }
    int quality = request->quality < 1 ? 1 : (request->quality > 100 ? 100 : request->quality);
    char suffix[64];
    switch (request->format) {
    case CARAVAN_VIPS_JPEG: snprintf(suffix, sizeof suffix, ".jpg[Q=%d,strip,optimize_coding]", quality); break;
    case CARAVAN_VIPS_PNG: snprintf(suffix, sizeof suffix, ".png[strip]"); break;
    case CARAVAN_VIPS_WEBP: snprintf(suffix, sizeof suffix, ".webp[Q=%d,strip]", quality); break;
    case CARAVAN_VIPS_GIF: snprintf(suffix, sizeof suffix, ".gif"); break;
    case CARAVAN_VIPS_AVIF: snprintf(suffix, sizeof suffix, ".heif[Q=%d,compression=av1,strip]", quality); break;
    default:
        vips.object_unref(thumbnail);
        set_error(error, error_size, "unknown output format");
        return -1;
    }
    void *buffer = NULL;
    size_t size = 0;
    failed = vips.write_to_buffer(thumbnail, suffix, &buffer, &size, NULL);
    vips.object_unref(thumbnail);
    if (failed != 0 || buffer == NULL) {
        take_vips_error(error, error_size, "the image could not be encoded");
        return -1;
    }
    *output = buffer;
    *output_length = size;
    return 0;
}

void caravan_vips_free(void *output) {
    if (output != NULL && vips.free != NULL) vips.free(output);
}
