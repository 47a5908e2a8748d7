// Workload: dense f64 matrix multiply (i-k-j order, row-major), repeated with the result fed
// back into the operands: loads, stores and mul/add on doubles. Argument: repetitions.
#include <string.h>

#include "common.h"

#define N 192

static double A[N][N], B[N][N], C[N][N];

static void multiply(void) {
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < N; j++) C[i][j] = 0.0;
    for (int k = 0; k < N; k++) {
      double a = A[i][k];
      for (int j = 0; j < N; j++) C[i][j] += a * B[k][j];
    }
  }
}

int main(int argc, char **argv) {
  uint32_t reps = size_arg(argc, argv, 400);
  uint64_t seed = 0x1234567ULL;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)(rng_next(&seed) % 2001) / 1000.0 - 1.0;
      B[i][j] = (double)(rng_next(&seed) % 2001) / 1000.0 - 1.0;
    }
  uint64_t h = 0;
  for (uint32_t r = 0; r < reps; r++) {
    multiply();
    // Feed a scaled row of C back so every repetition depends on the previous one.
    int row = (int)(r % N);
    double trace = 0.0;
    for (int i = 0; i < N; i++) trace += C[i][i];
    for (int j = 0; j < N; j++) A[row][j] = C[row][j] / (1.0 + (C[row][j] < 0 ? -C[row][j] : C[row][j]));
    uint64_t u;
    memcpy(&u, &trace, sizeof u);
    h = mix(h, u);
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      uint64_t u;
      memcpy(&u, &C[i][j], sizeof u);
      h = mix(h, u);
    }
  return report("matmul", h);
}
