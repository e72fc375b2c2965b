/* The oracle: convolution, dense and GRU layers by direct summation (no im2col, no BLAS), accumulated in double.
 * alertnet_run_reference uses these; the tests hold the BLAS path against them. */
#include <math.h>

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
    for (int row = 0; row < an_shape_rows(l->in); row++, src += l->in.c, dst += l->out.c) {
        for (int o = 0; o < l->out.c; o++) {
            double sum = l->bias ? l->bias[o] : 0.0;
            for (int i = 0; i < l->in.c; i++) sum += (double)l->weight[(size_t)o * l->in.c + i] * src[i];
            dst[o] = (float)sum;
        }
    }
}

/* One step at a time, each gate from its own sums in double; only the hidden state between steps is float. */
void an_gru_direct(const an_layer *l, const float *src, float *dst) {
    const int steps = l->in.h, inputs = l->in.c, H = l->out.c;
    float *h = l->state;
    for (int t = 0; t < steps; t++) {
        const float *x = src + (size_t)t * inputs;
        float *out = dst + (size_t)t * H; /* the new state is gathered here: every gate reads the old h */
        for (int j = 0; j < H; j++) {
            double gate[3][2]; /* [r, z, n][from x, from h] */
            for (int g = 0; g < 3; g++) {
                const size_t row = (size_t)g * H + (size_t)j;
                double from_x = l->bias ? l->bias[row] : 0.0, from_h = l->bias_hh ? l->bias_hh[row] : 0.0;
                for (int i = 0; i < inputs; i++) from_x += (double)l->weight[row * inputs + i] * x[i];
                for (int k = 0; k < H; k++) from_h += (double)l->weight_hh[row * H + k] * h[k];
                gate[g][0] = from_x;
                gate[g][1] = from_h;
            }
            const double r = 1.0 / (1.0 + exp(-(gate[0][0] + gate[0][1])));
            const double z = 1.0 / (1.0 + exp(-(gate[1][0] + gate[1][1])));
            const double n = tanh(gate[2][0] + r * gate[2][1]);
            out[j] = (float)((1.0 - z) * n + z * h[j]);
        }
        for (int j = 0; j < H; j++) h[j] = out[j];
    }
}
