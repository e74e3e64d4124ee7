@ Loops forever: `mov` once, then `add; b` in one block per iteration.
@ Used to check counts of a run killed from outside.
	.syntax unified
	.arch armv7ve
	.arm
	.text
	.global	_start
_start:
	mov	r0, #0		@ alu
.Lspin:
	add	r0, r0, #1	@ alu
	b	.Lspin		@ branch
