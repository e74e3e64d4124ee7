@ A Thumb-2 program whose executed instructions are known by construction,
@ with an ARM helper reached by interworking. Built with
@ `arm-linux-gnueabihf-gcc -static -nostdlib`: no libc code runs. `_start`
@ and `arm_helper` play the runtime; `kernel`, between the program markers,
@ plays the compiled program. tests/exact_counts.rs derives the expected
@ counts from the class notes and the trip counts.
@
@ The `.Lwide` loop is word aligned and made only of 32-bit instructions:
@ nothing in its bytes' sizes or alignment says Thumb, so it exercises the
@ plugin's ARM/Thumb heuristic (run with mode=heuristic).
	.syntax unified
	.arch armv7ve
	.fpu vfpv4

	.data
	.balign	8
buffer:
	.float	2.5		@ [0]
	.word	7		@ [4]
	.word	0		@ [8]

	.text
	.thumb
	.global	_start
	.thumb_func
_start:				@ runtime: 6 Thumb + 2 ARM
	movs	r0, #0		@ alu
	bl	kernel		@ branch
	blx	arm_helper	@ branch
	movs	r0, #0		@ alu
	movs	r7, #248	@ alu (exit_group)
	svc	#0		@ other

	.arm
	.balign	4
arm_helper:
	add	r0, r0, #1	@ alu
	bx	lr		@ indirect_branch

	.thumb
	.balign	4
	.global	__sysy_prog_begin
__sysy_prog_begin:
	.thumb_func
kernel:				@ program: 5 + 20 x 7 + 1 + 10 x 16 + 5
	push	{r4, r5, lr}	@ load_store_multiple
	movw	r4, #:lower16:buffer	@ alu
	movt	r4, #:upper16:buffer	@ alu
	movs	r5, #20		@ alu
	b.w	.Lwide		@ branch
	.balign	4
.Lwide:
	ldr.w	r0, [r4, #4]	@ load
	add.w	r1, r0, r5, lsl #1	@ alu_shifted
	mul	r2, r1, r5	@ mul
	sdiv	r3, r2, r5	@ div
	str.w	r3, [r4, #8]	@ store
	subs.w	r5, r5, #1	@ alu
	bne.w	.Lwide		@ cond_branch
	movs	r5, #10		@ alu
.Lnarrow:
	ldr	r0, [r4, #4]	@ load
	adds	r0, r0, r5	@ alu
	lsls	r1, r0, #2	@ alu_shifted
	str	r1, [r4, #8]	@ store
	cmp	r0, #12		@ alu
	it	gt		@ other
	movgt	r0, #12		@ alu
	vmov	s0, r0		@ vfp_load_store_move
	vcvt.f32.s32	s1, s0	@ vfp_convert
	vadd.f32	s2, s1, s1	@ vfp_add
	vmul.f32	s3, s2, s1	@ vfp_mul
	vdiv.f32	s4, s3, s1	@ vfp_div
	vcvt.s32.f32	s5, s4	@ vfp_convert
	vldr	s6, [r4]	@ vfp_load_store_move
	subs	r5, #1		@ alu
	bne	.Lnarrow	@ cond_branch
	cmp	r5, #0		@ alu
	it	ne		@ other
	bne	.Lnever		@ cond_branch (not taken)
	cbz	r5, .Ldone	@ cond_branch (taken)
.Lnever:
	udf	#0		@ never executed
.Ldone:
	pop	{r4, r5, pc}	@ indirect_branch
	.global	__sysy_prog_end
__sysy_prog_end:
