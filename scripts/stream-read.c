/* stream-read.c — the read bandwidth one thread gets on this machine: an
 * AVX-512 sum over a float array (default 1 GiB: DRAM), five passes.
 *
 *   gcc -O2 -mavx512f -o /tmp/stream-read scripts/stream-read.c && /tmp/stream-read
 *   (/tmp/stream-read & /tmp/stream-read; wait)      # two threads, add the figures
 *   /tmp/stream-read 64                               # a 64 MiB array: from L3 if it fits
 *
 * Decode streams every weight once per token, so tok/s × weight bytes
 * cannot exceed this figure for an array of the weights' size
 * (docs/performance.md compares the two).
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
	size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 1024;
	size_t n = mib << 20 >> 2; /* floats */
	if (n < 64) return 2;
	float *a = aligned_alloc(64, n * sizeof *a);
	if (!a) return 1;
	for (size_t i = 0; i < n; i++) a[i] = 1.0f;
	for (int pass = 0; pass < 5; pass++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		__m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
		for (size_t i = 0; i < n; i += 64) {
			s0 = _mm512_add_ps(s0, _mm512_load_ps(a + i));
			s1 = _mm512_add_ps(s1, _mm512_load_ps(a + i + 16));
			s2 = _mm512_add_ps(s2, _mm512_load_ps(a + i + 32));
			s3 = _mm512_add_ps(s3, _mm512_load_ps(a + i + 48));
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
		float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
		printf("%.1f GB/s (checksum %g)\n", n * sizeof *a / dt / 1e9, s);
	}
	free(a);
	return 0;
}
