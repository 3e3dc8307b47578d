// Test support only: loads libvips before the test process's `main`, while it has one thread. libvips's start may
// write `VIPSHOME` into the environment, and the tests build servers (which load libvips lazily) while other tests
// spawn processes (`Process.run` copies the environment): loaded here, that write races nothing. The test bundle is a
// dynamic executable, whose Swift runtime has its arguments before this runs (unlike the static release binary, which
// therefore loads libvips when `caravan serve` builds its host instead).

#include "CImageVipsTestPreload.h"

#include <CImageVips.h>

static int preloaded = 0;

__attribute__((constructor)) static void caravan_vips_test_preload(void) {
    char error[512];
    (void)caravan_vips_load(error, sizeof error);  // missing libvips is the tests' to report
    preloaded = 1;
}

int caravan_vips_test_preloaded(void) { return preloaded; }
