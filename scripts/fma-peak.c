/* fma-peak.c — the vector throughput one core gives on this machine: 24
 * independent zmm chains (enough to cover the latency on two ports), no
 * memory operands, GFLOP (or int8 GOP) per CPU-second, four runs of
 *   - VFMADD231PS: FP32 FMA (16 lanes × 2 flops), what F32 prefill runs on;
 *   - VPDPBUSD: int8 dot products (64 multiply-adds = 128 ops), what the
 *     Q8_0/Q4_0 kernels run on;
 *   - VPDPBUSD + VFMADD231PS pairs (pairs per ns): packed Q8_0 in GGML's
 *     order needs one FMA per VPDPBUSD; at the VPDPBUSD rate / 128 / 2 the
 *     two share their ports, at the VPDPBUSD rate / 128 they do not.
 *
 *   gcc -O2 -o /tmp/fma-peak scripts/fma-peak.c && /tmp/fma-peak
 *
 * Compute-bound phases (prefill, batched decode) cannot exceed these
 * figures (docs/performance.md compares them).
 */
#include <stdio.h>
#include <time.h>

static double cpu_now(void) {
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHAINS(insn) \
	"1:\n" \
	".irp i,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23\n" \
	insn " %%zmm30, %%zmm31, %%zmm\\i\n" \
	".endr\n" \
	"dec %0\n" \
	"jnz 1b\n"

int main(void) {
	const long iters = 20000000;
	for (int r = 0; r < 4; r++) {
		long n = iters;
		double t = cpu_now();
		__asm__ volatile("vpxord %%zmm30, %%zmm30, %%zmm30\n"
				 "vpxord %%zmm31, %%zmm31, %%zmm31\n" CHAINS("vfmadd231ps")
				 : "+r"(n)::"memory");
		double f = (double)iters * 24 * 32 / (cpu_now() - t) / 1e9;
		n = iters;
		t = cpu_now();
		__asm__ volatile(CHAINS("vpdpbusd") : "+r"(n)::"memory");
		double d = (double)iters * 24 * 128 / (cpu_now() - t) / 1e9;
		n = iters;
		t = cpu_now();
		__asm__ volatile(".macro dpfma a, b\n"
				 "vpdpbusd %%zmm30, %%zmm31, %%zmm\\a\n"
				 "vfmadd231ps %%zmm30, %%zmm31, %%zmm\\b\n"
				 ".endm\n"
				 "1:\n"
				 "dpfma 0, 12\n dpfma 1, 13\n dpfma 2, 14\n dpfma 3, 15\n"
				 "dpfma 4, 16\n dpfma 5, 17\n dpfma 6, 18\n dpfma 7, 19\n"
				 "dpfma 8, 20\n dpfma 9, 21\n dpfma 10, 22\n dpfma 11, 23\n"
				 "dec %0\n"
				 "jnz 1b\n"
				 ".purgem dpfma\n"
				 : "+r"(n)::"memory");
		double m = (double)iters * 12 / (cpu_now() - t) / 1e9;
		printf("FP32 FMA %.1f GFLOP/s   int8 VPDPBUSD %.1f GOP/s   VPDPBUSD+FMA %.2f pairs/ns\n", f, d, m);
	}
	return 0;
}
