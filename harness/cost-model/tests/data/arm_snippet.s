@ A32 decoder test vectors: one instruction per line, the expected class after `@`.
@ tests/decoder_vectors.rs assembles this file, disassembles it with objdump
@ and checks the decoder on every word.
	.syntax unified
	.arch armv7ve
	.fpu neon-vfpv4
	.arm
	.text
start:
	add	r0, r1, r2		@ alu
	adds	r0, r1, #255		@ alu
	sub	r3, r4, #1		@ alu
	rsb	r0, r0, #0		@ alu
	and	r0, r1, r2		@ alu
	orr	r0, r1, #0xff00		@ alu
	eor	r0, r0, r1		@ alu
	bic	r0, r0, #3		@ alu
	mov	r0, r1			@ alu
	mov	r0, #42			@ alu
	mvn	r0, #0			@ alu
	movw	r0, #0x1234		@ alu
	movt	r0, #0x5678		@ alu
	cmp	r0, #10			@ alu
	cmn	r0, r1			@ alu
	tst	r0, #1			@ alu
	teq	r0, r1			@ alu
	adc	r0, r1, r2		@ alu
	sbc	r0, r1, r2		@ alu
	movne	r0, #1			@ alu
	clz	r0, r1			@ alu
	rev	r0, r1			@ alu
	rbit	r0, r1			@ alu
	sxtb	r0, r1			@ alu
	uxth	r0, r1			@ alu
	uxtab	r0, r1, r2		@ alu
	ubfx	r0, r1, #4, #8		@ alu
	sbfx	r0, r1, #4, #8		@ alu
	bfi	r0, r1, #4, #8		@ alu
	bfc	r0, #4, #8		@ alu
	qadd	r0, r1, r2		@ alu
	uadd8	r0, r1, r2		@ alu
	sel	r0, r1, r2		@ alu
	usat	r0, #8, r1		@ alu
	add	r0, r1, r2, lsl #2	@ alu_shifted
	sub	r0, r1, r2, asr #31	@ alu_shifted
	orr	r0, r1, r2, lsr #16	@ alu_shifted
	eor	r0, r1, r2, ror #8	@ alu_shifted
	add	r0, r1, r2, rrx		@ alu_shifted
	add	r0, r1, r2, lsl r3	@ alu_shifted
	lsl	r0, r1, #2		@ alu_shifted
	lsr	r0, r1, r2		@ alu_shifted
	asr	r0, r1, #1		@ alu_shifted
	cmp	r0, r1, lsl #1		@ alu_shifted
	mul	r0, r1, r2		@ mul
	mla	r0, r1, r2, r3		@ mul
	mls	r0, r1, r2, r3		@ mul
	smulbb	r0, r1, r2		@ mul
	smmul	r0, r1, r2		@ mul
	smlad	r0, r1, r2, r3		@ mul
	umull	r0, r1, r2, r3		@ mul_long
	smull	r0, r1, r2, r3		@ mul_long
	umlal	r0, r1, r2, r3		@ mul_long
	smlal	r0, r1, r2, r3		@ mul_long
	umaal	r0, r1, r2, r3		@ mul_long
	smlalbb	r0, r1, r2, r3		@ mul_long
	sdiv	r0, r1, r2		@ div
	udiv	r0, r1, r2		@ div
	ldr	r0, [r1]		@ load
	ldr	r0, [r1, #4]		@ load
	ldr	r0, [r1, r2, lsl #2]	@ load
	ldr	r0, [r1], #4		@ load
	ldrb	r0, [r1, #1]		@ load
	ldrh	r0, [r1, #2]		@ load
	ldrsb	r0, [r1]		@ load
	ldrsh	r0, [r1, r2]		@ load
	ldrd	r0, r1, [r2]		@ load
	ldrex	r0, [r1]		@ load
	ldr	r0, [pc, #8]		@ load
	str	r0, [r1]		@ store
	str	r0, [r1, #-4]!		@ store
	strb	r0, [r1, r2]		@ store
	strh	r0, [r1, #2]		@ store
	strd	r0, r1, [r2, #8]	@ store
	strex	r0, r1, [r2]		@ store
	str	r0, [sp, #-4]!		@ store
	push	{r4, r5, r6, lr}	@ load_store_multiple
	pop	{r4, r5, r6, lr}	@ load_store_multiple
	ldm	r0, {r1, r2, r3}	@ load_store_multiple
	stmdb	r0!, {r1, r2}		@ load_store_multiple
	ldmib	r0, {r1, r2}		@ load_store_multiple
	b	start			@ branch
	bl	start			@ branch
	blx	thumb_target		@ branch
	beq	start			@ cond_branch
	bne	start			@ cond_branch
	blgt	start			@ cond_branch
	bx	lr			@ indirect_branch
	bxne	lr			@ indirect_branch
	blx	r3			@ indirect_branch
	pop	{r4, pc}		@ indirect_branch
	pop	{pc}			@ indirect_branch
	ldr	pc, [sp], #4		@ indirect_branch
	ldr	pc, [r0, r1, lsl #2]	@ indirect_branch
	mov	pc, lr			@ indirect_branch
	add	pc, pc, r3, lsl #2	@ indirect_branch
	ldm	sp!, {r0, pc}		@ indirect_branch
	vadd.f32	s0, s1, s2	@ vfp_add
	vsub.f32	s0, s1, s2	@ vfp_add
	vadd.f64	d0, d1, d2	@ vfp_add
	vcmp.f32	s0, s1		@ vfp_add
	vcmpe.f32	s0, #0		@ vfp_add
	vmul.f32	s0, s1, s2	@ vfp_mul
	vnmul.f32	s0, s1, s2	@ vfp_mul
	vmla.f32	s0, s1, s2	@ vfp_mul
	vmls.f64	d0, d1, d2	@ vfp_mul
	vnmla.f32	s0, s1, s2	@ vfp_mul
	vfma.f32	s0, s1, s2	@ vfp_mul
	vfms.f32	s0, s1, s2	@ vfp_mul
	vfnma.f32	s0, s1, s2	@ vfp_mul
	vdiv.f32	s0, s1, s2	@ vfp_div
	vdiv.f64	d0, d1, d2	@ vfp_div
	vsqrt.f32	s0, s1		@ vfp_div
	vcvt.s32.f32	s0, s1		@ vfp_convert
	vcvt.f32.s32	s0, s1		@ vfp_convert
	vcvt.f32.u32	s0, s1		@ vfp_convert
	vcvtr.s32.f32	s0, s1		@ vfp_convert
	vcvt.f64.f32	d0, s1		@ vfp_convert
	vcvt.f32.f64	s0, d1		@ vfp_convert
	vcvt.s32.f32	s0, s0, #16	@ vfp_convert
	vcvtb.f32.f16	s0, s1		@ vfp_convert
	vldr	s0, [r0]		@ vfp_load_store_move
	vldr	d0, [r0, #8]		@ vfp_load_store_move
	vstr	s0, [sp, #4]		@ vfp_load_store_move
	vpush	{s16-s17}		@ vfp_load_store_move
	vpop	{d8}			@ vfp_load_store_move
	vldmia	r0!, {s0-s3}		@ vfp_load_store_move
	vmov	s0, r0			@ vfp_load_store_move
	vmov	r0, s0			@ vfp_load_store_move
	vmov	r0, r1, d0		@ vfp_load_store_move
	vmov.f32	s0, s1		@ vfp_load_store_move
	vmov.f32	s0, #1.0	@ vfp_load_store_move
	vabs.f32	s0, s1		@ vfp_load_store_move
	vneg.f32	s0, s1		@ vfp_load_store_move
	vmrs	APSR_nzcv, fpscr	@ vfp_load_store_move
	vmsr	fpscr, r0		@ vfp_load_store_move
	vld1.32	{d0, d1}, [r0]		@ vfp_load_store_move
	vst1.8	{d0}, [r1]!		@ vfp_load_store_move
	vdup.32	q0, r0			@ vfp_load_store_move
	svc	#0			@ other
	nop				@ other
	dmb	ish			@ other
	dsb	sy			@ other
	isb	sy			@ other
	mrc	p15, 0, r0, c13, c0, 3	@ other
	pld	[r0, #64]		@ other
	mrs	r0, APSR		@ other
	msr	APSR_nzcvq, r0		@ other
	vadd.i32	q0, q1, q2	@ other
	veor	d0, d1, d2		@ other
	udf	#0			@ other
	bkpt	#0			@ other
	.thumb
thumb_target:
	bx	lr
