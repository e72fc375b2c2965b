/* The oracle: convolution and dense layers by direct summation (no im2col, no BLAS), accumulated in double.
 * alertnet_run_reference uses these; the tests hold the BLAS path against them. */
#include "internal.h"

void an_conv2d_direct(const an_layer *l, const float *src, float *dst) {
    const int h = l->in.h, w = l->in.w;
    for (int o = 0; o < l->out.c; o++) {
        for (int y = 0; y < l->out.h; y++) {
            for (int x = 0; x < l->out.w; x++) {
                double sum = l->bias ? l->bias[o] : 0.0;
                for (int c = 0; c < l->in.c; c++) {
                    for (int i = 0; i < l->kh; i++) {
                        const int iy = y * l->sh + i - l->ph;
                        if (iy < 0 || iy >= h) continue;
                        for (int j = 0; j < l->kw; j++) {
                            const int ix = x * l->sw + j - l->pw;
                            if (ix < 0 || ix >= w) continue;
                            const float weight = l->weight[(((size_t)o * l->in.c + c) * l->kh + i) * l->kw + j];
                            sum += (double)weight * src[((size_t)c * h + iy) * w + ix];
                        }
                    }
                }
                dst[((size_t)o * l->out.h + y) * l->out.w + x] = (float)sum;
            }
        }
    }
}

void an_dense_direct(const an_layer *l, const float *src, float *dst) {
    for (int o = 0; o < l->out.c; o++) {
        double sum = l->bias ? l->bias[o] : 0.0;
        for (int i = 0; i < l->in.c; i++) sum += (double)l->weight[(size_t)o * l->in.c + i] * src[i];
        dst[o] = (float)sum;
    }
}
