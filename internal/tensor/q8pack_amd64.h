// Macros shared by the packed Q8_0 and Q4_0 kernels (q8pack_amd64.s,
// q4pack_amd64.s): both run the same float steps on the same registers.

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
	VCVTDQ2PS   Z8, Z8 \
	VCVTDQ2PS   Z9, Z9 \
	VCVTDQ2PS   Z10, Z10 \
	VCVTDQ2PS   Z11, Z11 \
	VCVTDQ2PS   Z12, Z12 \
	VCVTDQ2PS   Z13, Z13 \
	VCVTDQ2PS   Z14, Z14 \
	VCVTDQ2PS   Z15, Z15 \
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
