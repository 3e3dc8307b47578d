#ifndef CIMAGEVIPS_TEST_PRELOAD_H
#define CIMAGEVIPS_TEST_PRELOAD_H

/// 1 when libvips was loaded (or found missing) before the test process's `main`.
int caravan_vips_test_preloaded(void);

#endif
