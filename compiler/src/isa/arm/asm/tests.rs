//! The in-process assembler against GNU `as`: every instruction form the back end emits (and
//! the neighbouring forms), and the whole output of the back end for every corpus program at
//! `-O0` and `-O2`, must give the same bytes and relocations (skipped without the cross
//! toolchain).

use super::{SectionId, assemble};
use crate::toolchain::{compare_with_gnu, gnu_object_with};

fn toolchain() -> bool {
    if crate::toolchain::arm_gcc().is_ok() {
        return true;
    }
    eprintln!("skipped: no ARM cross toolchain");
    false
}

const FORMS: &str = r#"
	.arch	armv7ve
	.fpu	vfpv4
	.syntax	unified
	.arm
	.text
	.global	f
	.type	f, %function
f:
	push	{r4}
	push	{r4, r5, r6, r7, r8, r9, r10, r11, lr}
	pop	{r4}
	pop	{r4, pc}
	bl	f
	bl	getint
	b	g
	bne	g
	blne	f
	movw	r0, #:lower16:sy.a+20
	movt	r0, #:upper16:sy.a+20
	movw	r1, #:lower16:.Lstr.1
	movt	r1, #:upper16:.Lstr.1
	movw	r2, #65535
	movt	r2, #4660
	add	r0, r0, #-4
	mov	r0, #-1
	cmp	r0, #-1
	cmn	r1, #255
	mov	r0, #0x10000
	add	r0, r0, #0xff000000
	mvn	r3, #255
	add	r0, r1, r2, lsl #2
	sub	r0, r1, r2, asr r3
	rsb	r0, r1, #0
	rsbs	r0, r1, #0
	ands	r0, r1, #7
	tst	r1, #1
	eor	r0, r0, r1, lsr #31
	orr	r2, r2, r3
	bic	r2, r2, #3
	adc	r0, r0, #0
	sbc	r0, r0, r1
	lsl	r0, r1, #3
	lsr	r0, r1, #31
	asr	r0, r1, #2
	asr	r0, r1, r2
	ror	r0, r1, #8
	rrx	r0, r1
	lsl	r0, r1, #0
	mul	r0, r1, r2
	mla	r0, r1, r2, r3
	mls	r0, r1, r2, r3
	smmul	r0, r1, r2
	smull	r0, r1, r2, r3
	umull	r0, r1, r2, r3
	sdiv	r0, r1, r2
	udiv	r0, r1, r2
	ubfx	r0, r1, #0, #4
	sbfx	r0, r1, #3, #5
	bfi	r0, r1, #4, #8
	bfc	r0, #0, #12
	clz	r0, r1
	ldr	r0, [r1]
	ldr	r0, [r1, #4095]
	ldr	r0, [r1, #-4]
	ldr	r0, [sp, #8]
	str	r0, [sp, #-4]!
	ldr	r0, [r1], #4
	ldr	r0, [r1, #4]!
	ldr	r0, [r1, r2]
	ldr	r0, [r1, r2, lsl #2]
	ldr	r0, [r1, -r2, lsl #2]
	str	r0, [r1, ip]
	ldrb	r0, [r1, #3]
	strb	r0, [r1, r2]
	ldrh	r0, [r1, #-6]
	strh	r0, [r1, r2]
	ldrsb	r0, [r1]
	ldrsh	r0, [r1, #254]
	ldrd	r0, r1, [r2, #8]
	strd	r0, r1, [r2]
	ldm	r0, {r1, r2}
	ldmia	r0!, {r1-r3}
	stmdb	sp!, {r4-r6}
	stm	r0, {r1, r3}
	moveq	r0, #1
	movne	r0, r1
	addlt	r0, r0, #1
	ldrgt	r0, [r1, #4]
	strle	r0, [r1]
	rsbpl	r0, r1, #0
	submi	r0, r0, #16
	cmpne	r1, #0
	mulhi	r0, r1, r2
	vadd.f32	s1, s2, s3
	vaddne.f32	s31, s30, s0
	vsub.f32	s0, s1, s2
	vmul.f32	s0, s1, s2
	vdiv.f32	s0, s1, s2
	vnmul.f32	s0, s1, s2
	vmla.f32	s0, s1, s2
	vmls.f32	s0, s1, s2
	vnmls.f32	s0, s1, s2
	vnmla.f32	s17, s3, s30
	vnmlsgt.f32	s5, s6, s7
	vneg.f32	s0, s1
	vabs.f32	s0, s1
	vsqrt.f32	s0, s1
	vadd.f64	d0, d1, d2
	vmul.f64	d17, d18, d19
	vcvt.f64.f32	d16, s5
	vcvt.f32.f64	s5, d16
	vcvt.s32.f32	s0, s1
	vcvt.f32.s32	s0, s1
	vcvt.u32.f32	s0, s1
	vcvt.f32.u32	s0, s1
	vcvtr.s32.f32	s0, s1
	vcvtlt.s32.f32	s2, s3
	vmov	r2, r3, d16
	vmov	d16, r1, r1
	vmov.f64	d17, d16
	vmov	s3, r4
	vmov	r4, s3
	vmov.f32	s0, s1
	vmovne.f32	s0, s1
	vmov.f32	s0, #2.5
	vmov.f32	s0, #-0.125
	vmov.f32	s7, #1.0
	vmov.f32	s9, #31.0
	vcmp.f32	s1, #0
	vcmpe.f32	s1, s2
	vcmp.f32	s1, s2
	vcmp.f64	d1, d2
	vmrs	APSR_nzcv, fpscr
	vldr	s3, [sp, #-8]
	vldr	s3, [r2, #1020]
	vstr	d16, [r1]
	vstr	s0, [sp]
	vldrne	s4, [r0, #4]
	vpush	{d8}
	vpush	{d8-d15}
	vpop	{d8-d9}
	vstmia	r2!, {d16-d19}
	vstmia	r2!, {d16}
	vstmdb	r0!, {s0-s3}
	vldmia	r0, {d0-d1}
	bx	lr
	bxne	lr
	nop
1:
	subs	r1, r1, #1
	bne	1b
	b	1f
	b	.L0_2
1:
.L0_2:	@ a comment
	mov	r0, r0
	.size	f, .-f
	.align	2
	.word	g
	.section	.rodata
.Lstr.0:
	.asciz	"a%d\n"
.Lstr.1:
	.asciz	"\"q\\\001\t"
	.data
	.align	2
	.type	sy.b, %object
	.size	sy.b, 12
sy.b:
	.word	0x1, 0xffffffff, 7
	.zero	8
	.bss
	.align	2
sy.c:
	.zero	400
	.section	.note.GNU-stack,"",%progbits
"#;

#[test]
fn every_instruction_form_assembles_like_gnu_as() {
    let object = assemble(FORMS).expect("assembles");
    assert!(object.sections[&SectionId::Text].bytes.len() > 500);
    assert_eq!(object.sections[&SectionId::Bss].size, 400);
    if toolchain() {
        compare_with_gnu(FORMS).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// GNU `as` run directly, as the cross gcc names it, gives the driver's object byte for byte.
#[test]
fn the_direct_assembler_command_gives_the_drivers_object() {
    if !toolchain() {
        return;
    }
    let gcc = crate::toolchain::arm_gcc().expect("gcc");
    let command = crate::toolchain::gnu_assembler(&gcc).expect("gcc names its assembler");
    assert!(command.program.ends_with("as"), "{command:?}");
    let direct = gnu_object_with(FORMS, true).expect("assembles directly");
    let driven = gnu_object_with(FORMS, false).expect("assembles through the driver");
    assert!(direct == driven, "the objects differ");
}

#[test]
fn errors_name_the_line() {
    let err = assemble("\t.text\n\tmov\tr0, #0x101\n").expect_err("not encodable");
    assert_eq!(err.line, 2);
    assert!(err.message.contains("cannot be encoded"), "{err}");
    assert!(assemble("\tfrob\tr0\n").is_err());
    assert!(assemble("a:\na:\n").expect_err("twice").message.contains("twice"));
}

/// The back end's whole output for the corpus programs, at -O0 and -O2 with every stage.
#[test]
fn back_end_output_assembles_like_gnu_as() {
    if !toolchain() {
        return;
    }
    use crate::config::Config;
    use crate::passes::OptLevel;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut files: Vec<_> = ["lang", "bench"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).into_iter().flatten().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    files.sort();
    let mut texts = 0;
    for path in &files {
        let source = crate::frontend::source_from_bytes(&std::fs::read(path).expect("readable"));
        for level in [OptLevel::O0, OptLevel::O2] {
            let Ok((asm, _, _)) = crate::driver::compile_asm("t.sy", &source, &Config::level(level)) else { continue };
            compare_with_gnu(&asm).unwrap_or_else(|e| panic!("{} at {level:?}: {e}", path.display()));
            texts += 1;
        }
    }
    assert!(texts >= 40, "only {texts} texts compared");
}
