#ifndef CARAVAN_IMAGE_VIPS_H
#define CARAVAN_IMAGE_VIPS_H

#include <stddef.h>

/// libvips loaded at run time (dlopen of libvips.so.42), so that the server links and runs without it: these
/// functions are the whole of what Caravan calls. Each returns 0 on success; on failure it returns non-zero and writes
/// a NUL-terminated message into `error` (at most `error_size` bytes).

#ifdef __cplusplus
extern "C" {
#endif

/// Loads and initialises libvips once per process (later calls return the first call's result). Untrusted loaders
/// (SVG, PDF, ImageMagick, …) are blocked and libvips's operation cache is off.
int caravan_vips_load(char *error, size_t error_size);

/// The libvips version, e.g. "8.14.1" (empty until `caravan_vips_load` succeeded).
const char *caravan_vips_version(void);

/// What the header of an encoded image says, read without decoding its pixels.
typedef struct {
    int width;
    int height;
    /// Pages (frames) of a multi-page image; 1 otherwise.
    int pages;
    /// The EXIF orientation (1 to 8; 1 when absent).
    int orientation;
    /// The libvips loader that recognised the bytes, e.g. "VipsForeignLoadJpegBuffer".
    char loader[64];
} caravan_vips_header;

int caravan_vips_read_header(const void *bytes, size_t length, caravan_vips_header *header, char *error, size_t error_size);

/// The output encodings.
typedef enum {
    CARAVAN_VIPS_JPEG = 0,
    CARAVAN_VIPS_PNG = 1,
    CARAVAN_VIPS_WEBP = 2,
    CARAVAN_VIPS_GIF = 3,
    CARAVAN_VIPS_AVIF = 4,
} caravan_vips_format;

/// A render: the image scaled (shrink-on-load, EXIF orientation applied) to `width` x `height`; with `crop`, scaled
/// to cover that box and cut to it around the centre; otherwise stretched to exactly that size. Encoded as `format`
/// at `quality` (1-100, JPEG, WebP and AVIF), metadata stripped.
typedef struct {
    int width;
    int height;
    int crop;
    caravan_vips_format format;
    int quality;
} caravan_vips_request;

/// Renders `bytes`; on success `*output` holds `*output_length` bytes to release with `caravan_vips_free`.
int caravan_vips_render(const void *bytes, size_t length, const caravan_vips_request *request, void **output,
                        size_t *output_length, char *error, size_t error_size);

void caravan_vips_free(void *output);

#ifdef __cplusplus
}
#endif

#endif
