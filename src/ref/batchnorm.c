/*
 * batchnorm.c - reference batch normalisation, in double (two-pass
 * variance, like the kernels, though in double either form would do).
 */
#include <math.h>

#include "ref/batchnorm.h"

#define AT(n, c, s) (((n) * C + (c)) * HW + (s))

static void normalize(double *y, const double *x, const double *gamma, const double *beta,
                      const double *mean, const double *invstd, size_t N, size_t C, size_t HW,
                      int relu)
{
    for (size_t n = 0; n < N; n++)
        for (size_t c = 0; c < C; c++)
            for (size_t s = 0; s < HW; s++) {
                double v = gamma[c] * (x[AT(n, c, s)] - mean[c]) * invstd[c] + beta[c];
                y[AT(n, c, s)] = relu && v < 0 ? 0 : v;
            }
}

void ct_ref_batchnorm_forward_train(double *y, double *save_mean, double *save_invstd,
                                    double *running_mean, double *running_var, const double *x,
                                    const double *gamma, const double *beta, size_t N, size_t C,
                                    size_t HW, double momentum, double eps, int relu)
{
    double m = (double)(N * HW);
    for (size_t c = 0; c < C; c++) {
        double s = 0, v = 0;
        for (size_t n = 0; n < N; n++)
            for (size_t k = 0; k < HW; k++)
                s += x[AT(n, c, k)];
        double mu = s / m;
        for (size_t n = 0; n < N; n++)
            for (size_t k = 0; k < HW; k++)
                v += (x[AT(n, c, k)] - mu) * (x[AT(n, c, k)] - mu);
        v /= m;
        save_mean[c] = mu;
        save_invstd[c] = 1 / sqrt(v + eps);
        if (running_mean && running_var) {
            running_mean[c] = (1 - momentum) * running_mean[c] + momentum * mu;
            running_var[c] = (1 - momentum) * running_var[c] + momentum * v * m / (m - 1);
        }
    }
    normalize(y, x, gamma, beta, save_mean, save_invstd, N, C, HW, relu);
}

void ct_ref_batchnorm_forward_eval(double *y, const double *x, const double *gamma,
                                   const double *beta, const double *running_mean,
                                   const double *running_var, size_t N, size_t C, size_t HW,
                                   double eps, int relu)
{
    for (size_t n = 0; n < N; n++)
        for (size_t c = 0; c < C; c++) {
            double is = 1 / sqrt(running_var[c] + eps);
            for (size_t s = 0; s < HW; s++) {
                double v = gamma[c] * (x[AT(n, c, s)] - running_mean[c]) * is + beta[c];
                y[AT(n, c, s)] = relu && v < 0 ? 0 : v;
            }
        }
}

/* invstd per channel given; train selects the full formula. */
static void backward(double *dx, double *dgamma, double *dbeta, const double *dy, const double *x,
                     const double *y, const double *gamma, const double *mean, double invstd_c,
                     size_t c, size_t N, size_t C, size_t HW, int train, int relu)
{
    double m = (double)(N * HW), sg = 0, sgx = 0;
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < HW; k++) {
            size_t i = AT(n, c, k);
            double g = relu && !(y[i] > 0) ? 0 : dy[i];
            sg += g;
            sgx += g * (x[i] - mean[c]) * invstd_c;
        }
    dbeta[c] += sg;
    dgamma[c] += sgx;
    for (size_t n = 0; n < N; n++)
        for (size_t k = 0; k < HW; k++) {
            size_t i = AT(n, c, k);
            double g = relu && !(y[i] > 0) ? 0 : dy[i];
            double xhat = (x[i] - mean[c]) * invstd_c;
            dx[i] = train ? gamma[c] * invstd_c * (g - sg / m - xhat * sgx / m)
                          : gamma[c] * invstd_c * g;
        }
}

void ct_ref_batchnorm_backward_train(double *dx, double *dgamma, double *dbeta, const double *dy,
                                     const double *x, const double *y, const double *gamma,
                                     const double *save_mean, const double *save_invstd, size_t N,
                                     size_t C, size_t HW, int relu)
{
    for (size_t c = 0; c < C; c++)
        backward(dx, dgamma, dbeta, dy, x, y, gamma, save_mean, save_invstd[c], c, N, C, HW, 1,
                 relu);
}

void ct_ref_batchnorm_backward_eval(double *dx, double *dgamma, double *dbeta, const double *dy,
                                    const double *x, const double *y, const double *gamma,
                                    const double *running_mean, const double *running_var,
                                    size_t N, size_t C, size_t HW, double eps, int relu)
{
    for (size_t c = 0; c < C; c++)
        backward(dx, dgamma, dbeta, dy, x, y, gamma, running_mean,
                 1 / sqrt(running_var[c] + eps), c, N, C, HW, 0, relu);
}
