// Macros shared by the packed Q8_0 and Q4_0 kernels (q8pack_amd64.s,
// q4pack_amd64.s): both run the same float steps on the same registers.

// CVT8 converts the int32 sums Z8..Z15 to floats in place.
#define CVT8 \
	VCVTDQ2PS Z8, Z8 \
	VCVTDQ2PS Z9, Z9 \
	VCVTDQ2PS Z10, Z10 \
	VCVTDQ2PS Z11, Z11 \
	VCVTDQ2PS Z12, Z12 \
	VCVTDQ2PS Z13, Z13 \
	VCVTDQ2PS Z14, Z14 \
	VCVTDQ2PS Z15, Z15

// G81ACC adds a block of q8pGemv8x1PF / q4pGemv8x1PF to the float sums
// Z0..Z7: the eight groups' scales at (R11), (R11)(AX*1), (R11)(AX*2),
// (R12), (R12)(AX*1), (R12)(AX*2), (R13), (R13)(AX*1) times the
// activation scale at (DX), times the int32 sums Z8..Z15 as floats.
#define G81ACC \
	VCVTPH2PS   (R11), Z16 \
	VCVTPH2PS   (R11)(AX*1), Z17 \
	VCVTPH2PS   (R11)(AX*2), Z18 \
	VCVTPH2PS   (R12), Z19 \
	VCVTPH2PS   (R12)(AX*1), Z20 \
	VCVTPH2PS   (R12)(AX*2), Z21 \
	VCVTPH2PS   (R13), Z22 \
	VCVTPH2PS   (R13)(AX*1), Z23 \
	CVT8 \
	VMULPS.BCST (DX), Z16, Z16 \
	VMULPS.BCST (DX), Z17, Z17 \
	VMULPS.BCST (DX), Z18, Z18 \
	VMULPS.BCST (DX), Z19, Z19 \
	VMULPS.BCST (DX), Z20, Z20 \
	VMULPS.BCST (DX), Z21, Z21 \
	VMULPS.BCST (DX), Z22, Z22 \
	VMULPS.BCST (DX), Z23, Z23 \
	VFMADD231PS Z16, Z8, Z0 \
	VFMADD231PS Z17, Z9, Z1 \
	VFMADD231PS Z18, Z10, Z2 \
	VFMADD231PS Z19, Z11, Z3 \
	VFMADD231PS Z20, Z12, Z4 \
	VFMADD231PS Z21, Z13, Z5 \
	VFMADD231PS Z22, Z14, Z6 \
	VFMADD231PS Z23, Z15, Z7

// G81STORE writes the eight groups' sums Z0..Z7 to out.
#define G81STORE \
	MOVQ    out+0(FP), DI \
	VMOVUPS Z0, (DI) \
	VMOVUPS Z1, 64(DI) \
	VMOVUPS Z2, 128(DI) \
	VMOVUPS Z3, 192(DI) \
	VMOVUPS Z4, 256(DI) \
	VMOVUPS Z5, 320(DI) \
	VMOVUPS Z6, 384(DI) \
	VMOVUPS Z7, 448(DI)

// G34ZERO clears the float sums Z0..Z11 of q8pGemm3x4VNNI / q4pGemm3x4VNNI.
#define G34ZERO \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11

// G34INIT starts a block's int32 sums Z12..Z23 of the 3 × 4 tiles at each
// activation row's correction word (4 bytes into its scale pair at DX,
// DX+BX, DX+2·BX, R13): −128·Σx for Q8_0 weights, −8·Σx for Q4_0.
#define G34INIT \
	VPBROADCASTD 4(DX), Z12 \
	VPBROADCASTD 4(DX), Z16 \
	VPBROADCASTD 4(DX), Z20 \
	VPBROADCASTD 4(DX)(BX*1), Z13 \
	VPBROADCASTD 4(DX)(BX*1), Z17 \
	VPBROADCASTD 4(DX)(BX*1), Z21 \
	VPBROADCASTD 4(DX)(BX*2), Z14 \
	VPBROADCASTD 4(DX)(BX*2), Z18 \
	VPBROADCASTD 4(DX)(BX*2), Z22 \
	VPBROADCASTD 4(R13), Z15 \
	VPBROADCASTD 4(R13), Z19 \
	VPBROADCASTD 4(R13), Z23

// G34STORE writes the 3 × 4 tile's sums Z0..Z11 to out (ldo floats apart),
// the outputs selected by mask (three 16-bit groups: K1..K3).
#define G34STORE \
	MOVQ     out+0(FP), DI \
	MOVQ     ldo+8(FP), AX \
	SHLQ     $2, AX \
	KMOVQ    mask+104(FP), K1 \
	KSHIFTRQ $16, K1, K2 \
	KSHIFTRQ $32, K1, K3 \
	VMOVUPS  Z0, K1, (DI) \
	VMOVUPS  Z4, K2, 64(DI) \
	VMOVUPS  Z8, K3, 128(DI) \
	ADDQ     AX, DI \
	VMOVUPS  Z1, K1, (DI) \
	VMOVUPS  Z5, K2, 64(DI) \
	VMOVUPS  Z9, K3, 128(DI) \
	ADDQ     AX, DI \
	VMOVUPS  Z2, K1, (DI) \
	VMOVUPS  Z6, K2, 64(DI) \
	VMOVUPS  Z10, K3, 128(DI) \
	ADDQ     AX, DI \
	VMOVUPS  Z3, K1, (DI) \
	VMOVUPS  Z7, K2, 64(DI) \
	VMOVUPS  Z11, K3, 128(DI)

// G2STORE ends a two-group kernel (q8lGemv2x1, q4kGemv2x1): writes the
// groups' outputs a and b to out, those whose bit of the mask argument (at
// m(FP)) is set.
#define G2STORE(m, a, b) \
	MOVQ     out+0(FP), DI \
	KMOVQ    mask+m(FP), K1 \
	KSHIFTRQ $16, K1, K2 \
	VMOVUPS  a, K1, (DI) \
	VMOVUPS  b, K2, 64(DI) \
	VZEROUPPER \
	RET

// The one-group K kernels (q5kGemv1x1, q6kGemv1x1): float lanes Z0..Z7,
// a super-block's int32 lane sums Z8..Z15.

// KZERO clears the int32 lane sums.
#define KZERO \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15

// KFUSE fuses the int32 lane sums, as floats, into the float lanes with
// the factor d (a register): l_k += float32(I_k)·d, one rounding.
#define KFUSE(d) \
	CVT8 \
	VFMADD231PS d, Z8, Z0 \
	VFMADD231PS d, Z9, Z1 \
	VFMADD231PS d, Z10, Z2 \
	VFMADD231PS d, Z11, Z3 \
	VFMADD231PS d, Z12, Z4 \
	VFMADD231PS d, Z13, Z5 \
	VFMADD231PS d, Z14, Z6 \
	VFMADD231PS d, Z15, Z7

// KSTORE ends the kernel as sumLanes (blockmm.go):
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) + s (a register), written to out
// where the mask argument (at m(FP)) has the row's bit.
#define KSTORE(s, m) \
	VADDPS  Z4, Z0, Z0 \
	VADDPS  Z5, Z1, Z1 \
	VADDPS  Z6, Z2, Z2 \
	VADDPS  Z7, Z3, Z3 \
	VADDPS  Z2, Z0, Z0 \
	VADDPS  Z3, Z1, Z1 \
	VADDPS  Z1, Z0, Z0 \
	VADDPS  s, Z0, Z0 \
	MOVQ    out+0(FP), DI \
	KMOVQ   mask+m(FP), K1 \
	VMOVUPS Z0, K1, (DI) \
	VZEROUPPER \
	RET
