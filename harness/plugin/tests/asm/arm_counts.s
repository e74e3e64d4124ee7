@ An ARM-mode program whose executed instructions are known by construction.
@ Built with `arm-linux-gnueabihf-gcc -static -nostdlib`: no libc code runs.
@ `_start` plays the runtime; `kernel`, between the program markers, plays the
@ compiled program. Every instruction's class is noted; tests/exact_counts.rs
@ derives the expected counts from these notes and the trip count.
	.syntax unified
	.arch armv7ve
	.fpu vfpv4
	.arm

	.data
	.balign	8
buffer:
	.float	1.5		@ [0]  float operand
	.word	7		@ [4]  loaded each iteration
	.word	0		@ [8]  stored each iteration
	.word	0		@ [12]
	.word	0, 0		@ [16] stm/ldm scratch

	.text
	.global	_start
_start:				@ runtime: 5 before the call, 4 after it
	mov	r0, #0		@ alu
	mov	r1, r0, lsl #3	@ alu_shifted
	push	{r0, r1}	@ load_store_multiple
	pop	{r0, r1}	@ load_store_multiple
	bl	kernel		@ branch
	ldr	r2, [sp, #-8]	@ load
	mov	r0, #0		@ alu
	mov	r7, #248	@ alu (exit_group)
	svc	#0		@ other

	.global	__sysy_prog_begin
__sysy_prog_begin:
kernel:				@ program: 9 setup + 25 x 19 loop + 2 teardown
	push	{r4, r5, r6, lr}	@ load_store_multiple
	movw	r4, #:lower16:buffer	@ alu
	movt	r4, #:upper16:buffer	@ alu
	add	r6, r4, #16	@ alu
	mov	r5, #25		@ alu (trip count)
	vldr	s0, [r4]	@ vfp_load_store_move
	vmov	s5, r5		@ vfp_load_store_move
	vcvt.f32.s32	s5, s5	@ vfp_convert
	b	.Lloop		@ branch
.Lloop:
	ldr	r0, [r4, #4]	@ load
	add	r0, r0, r5	@ alu
	add	r1, r0, r5, lsl #2	@ alu_shifted
	mul	r2, r1, r5	@ mul
	smull	r2, r3, r1, r5	@ mul_long
	sdiv	r3, r2, r5	@ div
	str	r3, [r4, #8]	@ store
	stm	r6, {r0, r1}	@ load_store_multiple
	ldm	r6, {r0, r1}	@ load_store_multiple
	vadd.f32	s1, s0, s0	@ vfp_add
	vmul.f32	s2, s1, s0	@ vfp_mul
	vdiv.f32	s3, s2, s0	@ vfp_div
	vcvt.s32.f32	s4, s3	@ vfp_convert
	vstr	s4, [r4, #12]	@ vfp_load_store_move
	cmp	r0, r1		@ alu
	movne	r0, r1		@ alu
	mov	r0, r0, asr r5	@ alu_shifted
	subs	r5, r5, #1	@ alu
	bne	.Lloop		@ cond_branch
	pop	{r4, r5, r6, lr}	@ load_store_multiple
	bx	lr		@ indirect_branch
	.global	__sysy_prog_end
__sysy_prog_end:
