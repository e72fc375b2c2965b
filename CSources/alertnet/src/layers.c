/* The layers as run by alertnet_run: convolution as im2col + one SGEMM, dense as one SGEMV (one SGEMM over a
 * sequence's rows), the GRU's input projection as one SGEMM over its steps and its recurrence as one SGEMV per step,
 * the rest direct. Activations are row-major floats ([C, H, W], [N] or a sequence [T, N]). Nothing here allocates. */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal.h"

const char *an_op_name(an_op op) {
    static const char *const names[] = {
        [AN_CONV2D] = "conv2d", [AN_BATCHNORM] = "batchnorm", [AN_RELU] = "relu", [AN_MAXPOOL2D] = "maxpool2d",
        [AN_AVGPOOL2D] = "avgpool2d", [AN_GLOBAL_AVGPOOL] = "global_avgpool", [AN_GLOBAL_MAXPOOL] = "global_maxpool",
        [AN_FLATTEN] = "flatten", [AN_DENSE] = "dense", [AN_SIGMOID] = "sigmoid", [AN_SOFTMAX] = "softmax",
        [AN_GRU] = "gru",
    };
    return names[op];
}

static int reads_input_directly(const an_layer *l) {
    return l->kh == 1 && l->kw == 1 && l->sh == 1 && l->sw == 1 && l->ph == 0 && l->pw == 0;
}

size_t an_conv2d_columns(const an_layer *l) {
    if (reads_input_directly(l)) return 0;
    return (size_t)l->in.c * (size_t)l->kh * (size_t)l->kw * (size_t)l->out.h * (size_t)l->out.w;
}

/* columns[(c, i, j)][(y, x)] = padded input[c][y*sh + i - ph][x*sw + j - pw] */
static void im2col(const an_layer *l, const float *src, float *columns) {
    const int oh = l->out.h, ow = l->out.w, h = l->in.h, w = l->in.w;
    float *row = columns;
    for (int c = 0; c < l->in.c; c++) {
        const float *plane = src + (size_t)c * h * w;
        for (int i = 0; i < l->kh; i++) {
            for (int j = 0; j < l->kw; j++, row += (size_t)oh * ow) {
                /* the output columns x whose input column lies inside [0, w) */
                int x_first = 0, x_end = ow;
                while (x_first < ow && x_first * l->sw + j - l->pw < 0) x_first++;
                while (x_end > x_first && (x_end - 1) * l->sw + j - l->pw >= w) x_end--;
                for (int y = 0; y < oh; y++) {
                    float *out = row + (size_t)y * ow;
                    int iy = y * l->sh + i - l->ph;
                    if (iy < 0 || iy >= h) {
                        memset(out, 0, (size_t)ow * sizeof *out);
                        continue;
                    }
                    /* index of output column x's input is origin + x * sw, in range for x in [x_first, x_end) */
                    const ptrdiff_t origin = (ptrdiff_t)iy * w + j - l->pw;
                    for (int x = 0; x < x_first; x++) out[x] = 0.0f;
                    if (l->sw == 1) {
                        if (x_end > x_first)
                            memcpy(out + x_first, plane + origin + x_first, (size_t)(x_end - x_first) * sizeof *out);
                    } else {
                        for (int x = x_first; x < x_end; x++) out[x] = plane[origin + (ptrdiff_t)x * l->sw];
                    }
                    for (int x = x_end; x < ow; x++) out[x] = 0.0f;
                }
            }
        }
    }
}

void an_conv2d_blas(const an_layer *l, const float *src, float *dst, float *columns) {
    const int pixels = l->out.h * l->out.w, depth = l->in.c * l->kh * l->kw;
    const float *b = src;
    if (!reads_input_directly(l)) {
        im2col(l, src, columns);
        b = columns;
    }
    float beta = 0.0f;
    if (l->bias) {
        for (int o = 0; o < l->out.c; o++) {
            float *plane = dst + (size_t)o * pixels;
            for (int p = 0; p < pixels; p++) plane[p] = l->bias[o];
        }
        beta = 1.0f;
    }
    /* dst[O][pixels] = weight[O][depth] x columns[depth][pixels] (+ dst) */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, l->out.c, pixels, depth, 1.0f, l->weight, depth, b,
                pixels, beta, dst, pixels);
}

/* y[rows][out] = x[rows][in] W^T + b: one SGEMV for one row (a flat [N] always takes this path), one SGEMM for
 * several. `bias` (NULL: none) is broadcast to every row first. */
static void project(int rows, int out, int in, const float *weight, const float *bias, const float *x, float *y) {
    float beta = 0.0f;
    if (bias) {
        for (int r = 0; r < rows; r++) memcpy(y + (size_t)r * out, bias, (size_t)out * sizeof *y);
        beta = 1.0f;
    }
    if (rows == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0f, weight, in, x, 1, beta, y, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, out, in, 1.0f, x, in, weight, in, beta, y, out);
}

void an_dense_blas(const an_layer *l, const float *src, float *dst) {
    project(an_shape_rows(l->in), l->out.c, l->in.c, l->weight, l->bias, src, dst);
}

size_t an_gru_scratch(const an_layer *l) { return 3 * (size_t)l->out.c * ((size_t)l->in.h + 1); }

static float sigmoid1(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
}

/* PyTorch's GRU cell for one step: gi = W_ih x + b_ih and gh = W_hh h + b_hh (each [r; z; n], H values apart)
 * give h = (1 - z) * n + z * h, in place, with r = sigmoid, z = sigmoid, n = tanh(gi_n + r * gh_n). */
static void gru_gates(int hidden, const float *gi, const float *gh, float *h) {
    const int H = hidden;
    for (int j = 0; j < H; j++) {
        const float r = sigmoid1(gi[j] + gh[j]);
        const float z = sigmoid1(gi[H + j] + gh[H + j]);
        const float n = tanhf(gi[2 * H + j] + r * gh[2 * H + j]);
        h[j] = (1.0f - z) * n + z * h[j];
    }
}

/* Every step's input projection at once (scratch[steps][3H]), then per step W_hh h (scratch's last 3H). */
void an_gru_blas(const an_layer *l, const float *src, float *dst, float *scratch) {
    const int steps = l->in.h, H = l->out.c;
    float *gi = scratch, *gh = scratch + (size_t)steps * 3 * H;
    project(steps, 3 * H, l->in.c, l->weight, l->bias, src, gi);
    for (int t = 0; t < steps; t++) {
        project(1, 3 * H, H, l->weight_hh, l->bias_hh, l->state, gh);
        gru_gates(H, gi + (size_t)t * 3 * H, gh, l->state);
        memcpy(dst + (size_t)t * H, l->state, (size_t)H * sizeof *dst);
    }
}

void an_batchnorm(const an_layer *l, const float *src, float *dst) {
    const size_t plane = (size_t)l->in.h * l->in.w;
    for (int c = 0; c < l->in.c; c++) {
        const float scale = l->scale[c], shift = l->shift[c];
        for (size_t p = 0; p < plane; p++) dst[c * plane + p] = scale * src[c * plane + p] + shift;
    }
}

void an_relu(size_t n, const float *src, float *dst) {
    for (size_t i = 0; i < n; i++) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
}

/* Max pooling skips padded cells (they count as -inf); average pooling counts them as zeros in the divisor
 * (PyTorch's count_include_pad=True). Padding is at most half the kernel, so no window is all padding.
 * The maximum is taken without a branch: the comparison's outcome is data, so a branch on it is mispredicted
 * about half the time, and that made pooling cost as much as the convolutions it follows. */
static void padded_pool2d(const an_layer *l, const float *src, float *dst) {
    const int is_max = l->op == AN_MAXPOOL2D, h = l->in.h, w = l->in.w;
    const float divisor = (float)(l->kh * l->kw);
    for (int c = 0; c < l->in.c; c++) {
        const float *plane = src + (size_t)c * h * w;
        for (int y = 0; y < l->out.h; y++) {
            const int y0 = y * l->sh - l->ph;
            const int i_first = y0 < 0 ? -y0 : 0, i_end = y0 + l->kh > h ? h - y0 : l->kh;
            for (int x = 0; x < l->out.w; x++) {
                const int x0 = x * l->sw - l->pw;
                const int j_first = x0 < 0 ? -x0 : 0, j_end = x0 + l->kw > w ? w - x0 : l->kw;
                float acc = is_max ? -FLT_MAX : 0.0f;
                for (int i = i_first; i < i_end; i++) {
                    const float *row = plane + (size_t)(y0 + i) * w + x0;
                    for (int j = j_first; j < j_end; j++) acc = is_max ? (row[j] > acc ? row[j] : acc) : acc + row[j];
                }
                *dst++ = is_max ? acc : acc / divisor;
            }
        }
    }
}

/* Without padding every window lies inside the plane, so each output row is built one kernel cell at a time
 * across the whole row: loops the compiler vectorises, the same maxima and sums in the same order. */
static void unpadded_pool2d(const an_layer *l, const float *src, float *dst) {
    const int is_max = l->op == AN_MAXPOOL2D, h = l->in.h, w = l->in.w, ow = l->out.w, sw = l->sw;
    const float divisor = (float)(l->kh * l->kw);
    for (int c = 0; c < l->in.c; c++) {
        const float *plane = src + (size_t)c * h * w;
        for (int y = 0; y < l->out.h; y++, dst += ow) {
            const float *top = plane + (size_t)y * l->sh * w;
            for (int x = 0; x < ow; x++) dst[x] = top[x * sw];
            for (int i = 0; i < l->kh; i++) {
                const float *row = top + (size_t)i * w;
                for (int j = i == 0 ? 1 : 0; j < l->kw; j++) {
                    if (is_max) {
                        for (int x = 0; x < ow; x++) dst[x] = row[x * sw + j] > dst[x] ? row[x * sw + j] : dst[x];
                    } else {
                        for (int x = 0; x < ow; x++) dst[x] += row[x * sw + j];
                    }
                }
            }
            if (!is_max)
                for (int x = 0; x < ow; x++) dst[x] /= divisor;
        }
    }
}

void an_pool2d(const an_layer *l, const float *src, float *dst) {
    if (l->ph == 0 && l->pw == 0) unpadded_pool2d(l, src, dst);
    else padded_pool2d(l, src, dst);
}

void an_global_pool(const an_layer *l, const float *src, float *dst) {
    const size_t plane = (size_t)l->in.h * l->in.w;
    for (int c = 0; c < l->in.c; c++) {
        const float *p = src + c * plane;
        if (l->op == AN_GLOBAL_MAXPOOL) {
            float m = p[0];
            for (size_t i = 1; i < plane; i++) m = p[i] > m ? p[i] : m;
            dst[c] = m;
        } else {
            double sum = 0.0;
            for (size_t i = 0; i < plane; i++) sum += p[i];
            dst[c] = (float)(sum / (double)plane);
        }
    }
}

void an_sigmoid(size_t n, const float *src, float *dst) {
    for (size_t i = 0; i < n; i++) dst[i] = sigmoid1(src[i]);
}

void an_softmax(size_t n, const float *src, float *dst) {
    float m = src[0];
    for (size_t i = 1; i < n; i++) m = src[i] > m ? src[i] : m;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        dst[i] = expf(src[i] - m);
        sum += dst[i];
    }
    for (size_t i = 0; i < n; i++) dst[i] = (float)(dst[i] / sum);
}
