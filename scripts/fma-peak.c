/* fma-peak.c — the FP32 FMA throughput one core gives on this machine: 24
 * independent zmm FMA chains (enough to cover the FMA latency on two
 * ports), no memory operands, five runs, GFLOP per CPU-second.
 *
 *   gcc -O2 -mavx512f -o /tmp/fma-peak scripts/fma-peak.c && /tmp/fma-peak
 *
 * The F32 prefill is compute-bound, so its matrix products cannot exceed
 * this figure (docs/performance.md compares the two).
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double cpu_now(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
	__m512 a[24];
	__m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
	for (int i = 0; i < 24; i++) a[i] = _mm512_set1_ps((float)i);
	long iters = 200000000 / 24 * 2 / 10;
	for (int r = 0; r < 5; r++) {
		double t = cpu_now();
		for (long n = 0; n < iters; n++) {
#pragma GCC unroll 24
			for (int i = 0; i < 24; i++) a[i] = _mm512_fmadd_ps(a[i], x, y);
		}
		double dt = cpu_now() - t;
		float s = 0;
		for (int i = 0; i < 24; i++) s += _mm512_reduce_add_ps(a[i]);
		/* 24 chains × 16 lanes × 2 flops per iteration */
		printf("%.1f GFLOP/s (checksum %g)\n", (double)iters * 24 * 32 / dt / 1e9, s);
	}
	return 0;
}
