@ T16/T32 decoder test vectors: one instruction per line, the expected class after `@`.
@ tests/decoder_vectors.rs assembles this file, disassembles it with objdump
@ and checks the decoder on every instruction (decoded in sequence, so IT
@ blocks take effect).
	.syntax unified
	.arch armv7ve
	.fpu neon-vfpv4
	.thumb
	.text
start:
	adds	r0, r1, r2		@ alu
	adds	r0, #1			@ alu
	subs	r0, r1, #3		@ alu
	movs	r0, #5			@ alu
	cmp	r0, #7			@ alu
	movs	r0, r1			@ alu
	mov	r8, r0			@ alu
	add	r0, r8			@ alu
	cmp	r8, r0			@ alu
	ands	r0, r1			@ alu
	eors	r0, r1			@ alu
	negs	r0, r1			@ alu
	mvns	r0, r1			@ alu
	adr	r0, start_lit		@ alu
	add	r0, sp, #8		@ alu
	add	sp, #16			@ alu
	sub	sp, #16			@ alu
	uxtb	r0, r1			@ alu
	sxth	r0, r1			@ alu
	rev	r0, r1			@ alu
	add.w	r0, r1, #0x10000	@ alu
	addw	r0, r1, #0xfff		@ alu
	movw	r0, #0xabcd		@ alu
	movt	r0, #0x1234		@ alu
	add.w	r0, r1, r2		@ alu
	orr.w	r0, r1, #1		@ alu
	cmp.w	r0, #1000		@ alu
	sub.w	r0, r1, r2		@ alu
	clz	r0, r1			@ alu
	ubfx	r0, r1, #3, #5		@ alu
	bfi	r0, r1, #3, #5		@ alu
	uxtb.w	r8, r9			@ alu
	lsls	r0, r1, #3		@ alu_shifted
	lsrs	r0, r1, #3		@ alu_shifted
	asrs	r0, r1, #3		@ alu_shifted
	lsls	r0, r1			@ alu_shifted
	rors	r0, r1			@ alu_shifted
	add.w	r0, r1, r2, lsl #2	@ alu_shifted
	sub.w	r0, r1, r2, asr #1	@ alu_shifted
	lsl.w	r0, r1, #4		@ alu_shifted
	lsr.w	r0, r1, r2		@ alu_shifted
	asr.w	r8, r9, r10		@ alu_shifted
	muls	r0, r1, r0		@ mul
	mul	r0, r1, r2		@ mul
	mla	r0, r1, r2, r3		@ mul
	mls	r0, r1, r2, r3		@ mul
	smulbb	r0, r1, r2		@ mul
	smull	r0, r1, r2, r3		@ mul_long
	umull	r0, r1, r2, r3		@ mul_long
	umlal	r0, r1, r2, r3		@ mul_long
	sdiv	r0, r1, r2		@ div
	udiv	r0, r1, r2		@ div
	ldr	r0, [r1]		@ load
	ldr	r0, [r1, #4]		@ load
	ldr	r0, [r1, r2]		@ load
	ldr	r0, [sp, #8]		@ load
	ldrb	r0, [r1, #1]		@ load
	ldrh	r0, [r1, #2]		@ load
	ldrsb	r0, [r1, r2]		@ load
	ldr	r0, start_lit		@ load
	ldr.w	r0, [r1, #4095]		@ load
	ldr	r0, [r1, #-4]		@ load
	ldr.w	r0, [r1, r2, lsl #2]	@ load
	ldrsh.w	r0, [r1, #2]		@ load
	ldrd	r0, r1, [r2, #8]	@ load
	ldrex	r0, [r1]		@ load
	str	r0, [r1]		@ store
	strb	r0, [r1, r2]		@ store
	strh	r0, [r1, #2]		@ store
	str	r0, [sp, #4]		@ store
	str.w	r0, [r1, #4095]		@ store
	str	r0, [r1, #-4]!		@ store
	strd	r0, r1, [r2]		@ store
	strex	r0, r1, [r2]		@ store
	push	{r4, lr}		@ load_store_multiple
	pop	{r4}			@ load_store_multiple
	push.w	{r4, r5, r6, r7, r8, lr}	@ load_store_multiple
	pop.w	{r4, r5, r6, r7, r8, r9}	@ load_store_multiple
	ldmia	r0!, {r1, r2}		@ load_store_multiple
	stmia	r0!, {r1, r2}		@ load_store_multiple
	ldmdb	r0, {r1, r2}		@ load_store_multiple
	b	start			@ branch
	b.w	start			@ branch
	bl	start			@ branch
	blx	arm_target		@ branch
	beq	start			@ cond_branch
	bne.w	start			@ cond_branch
	cbz	r0, forward		@ cond_branch
	cbnz	r1, forward		@ cond_branch
	it	eq			@ other
	beq	start			@ cond_branch
	itt	ne			@ other
	movne	r0, #1			@ alu
	bne.w	start			@ cond_branch
forward:
	bx	lr			@ indirect_branch
	blx	r3			@ indirect_branch
	mov	pc, lr			@ indirect_branch
	add	pc, r3			@ indirect_branch
	pop	{r4, pc}		@ indirect_branch
	pop.w	{r4, r5, r6, r7, r8, pc}	@ indirect_branch
	ldr.w	pc, [sp], #4		@ indirect_branch
	ldr	pc, [r0, #4]		@ indirect_branch
	tbb	[pc, r0]		@ indirect_branch
	tbh	[pc, r0, lsl #1]	@ indirect_branch
	ldmia.w	sp!, {r4, pc}		@ indirect_branch
	vadd.f32	s0, s1, s2	@ vfp_add
	vsub.f64	d0, d1, d2	@ vfp_add
	vcmp.f32	s0, s1		@ vfp_add
	vmul.f32	s0, s1, s2	@ vfp_mul
	vmla.f32	s0, s1, s2	@ vfp_mul
	vfma.f64	d0, d1, d2	@ vfp_mul
	vdiv.f32	s0, s1, s2	@ vfp_div
	vsqrt.f64	d0, d1		@ vfp_div
	vcvt.s32.f32	s0, s1		@ vfp_convert
	vcvt.f32.s32	s0, s1		@ vfp_convert
	vcvt.f64.f32	d0, s1		@ vfp_convert
	vldr	s0, [r0, #4]		@ vfp_load_store_move
	vstr	d0, [sp]		@ vfp_load_store_move
	vpush	{d8, d9}		@ vfp_load_store_move
	vpop	{s16}			@ vfp_load_store_move
	vmov	s0, r0			@ vfp_load_store_move
	vmov	r0, r1, d0		@ vfp_load_store_move
	vmov.f32	s0, s1		@ vfp_load_store_move
	vneg.f32	s0, s1		@ vfp_load_store_move
	vmrs	APSR_nzcv, fpscr	@ vfp_load_store_move
	vld1.8	{d0}, [r0]		@ vfp_load_store_move
	vst1.32	{d0, d1}, [r1]!		@ vfp_load_store_move
	svc	#0			@ other
	nop				@ other
	nop.w				@ other
	dmb	ish			@ other
	mrc	p15, 0, r0, c13, c0, 3	@ other
	pld	[r0]			@ other
	vadd.i32	q0, q1, q2	@ other
	vmul.i16	d0, d1, d2	@ other
	udf	#1			@ other
	bkpt	#1			@ other
	.balign	4
start_lit:
	.word	0
	.arm
arm_target:
	bx	lr
