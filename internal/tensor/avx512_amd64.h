// Macros shared by the AVX-512 F32 kernels (avx512_amd64.s, attn_amd64.s).

// TAILMASK takes k in CX, sets K1 to the low k%16 bits and leaves k
// rounded down to a multiple of 16 in CX; it clobbers AX and t.
#define TAILMASK(t) \
	MOVQ  CX, AX \
	ANDQ  $-16, AX \
	ANDQ  $15, CX \
	MOVL  $1, t \
	SHLL  CX, t \
	DECL  t \
	KMOVW t, K1 \
	MOVQ  AX, CX

// FOLD2 sets d to the halves of zmm p and q folded (lane i + lane i+8),
// p's in the low 256 bits and q's in the high 256.
#define FOLD2(p, q, d) \
	VSHUFF64X2 $0x44, q, p, Z24 \
	VSHUFF64X2 $0xEE, q, p, Z25 \
	VADDPS     Z25, Z24, d

// HADD2 sets d to VHADDPS of x and y for all four 128-bit lanes: per lane
// x0+x1, x2+x3, y0+y1, y2+y3.
#define HADD2(x, y, d) \
	VSHUFPS $0x88, y, x, Z24 \
	VSHUFPS $0xDD, y, x, Z25 \
	VADDPS  Z25, Z24, d
