//! Decoder test vectors taken from the GNU assembler.
//!
//! `data/arm_snippet.s` and `data/thumb_snippet.s` list instructions, each
//! annotated with the class it must decode to. The tables below are the
//! encodings `arm-linux-gnueabihf-objdump -d` printed for them, paired with
//! those annotations, so the decoders are checked even where the cross
//! toolchain is absent; when it is present, `tables_match_the_assembler`
//! re-assembles the snippets and checks that the tables are still what the
//! assembler produces.

use std::path::Path;
use std::process::Command;

use sysy_cost_model::InsnClass;
use sysy_cost_model::decode::a32::decode_a32;
use sysy_cost_model::decode::t32::ThumbDecoder;

/// (objdump hex, expected class) for `data/arm_snippet.s`, in order.
const ARM_VECTORS: &[(&str, &str)] = &[
    ("e0810002", "alu"),                 // add r0, r1, r2
    ("e29100ff", "alu"),                 // adds r0, r1, #255 @ 0xff
    ("e2443001", "alu"),                 // sub r3, r4, #1
    ("e2600000", "alu"),                 // rsb r0, r0, #0
    ("e0010002", "alu"),                 // and r0, r1, r2
    ("e3810cff", "alu"),                 // orr r0, r1, #65280 @ 0xff00
    ("e0200001", "alu"),                 // eor r0, r0, r1
    ("e3c00003", "alu"),                 // bic r0, r0, #3
    ("e1a00001", "alu"),                 // mov r0, r1
    ("e3a0002a", "alu"),                 // mov r0, #42 @ 0x2a
    ("e3e00000", "alu"),                 // mvn r0, #0
    ("e3010234", "alu"),                 // movw r0, #4660 @ 0x1234
    ("e3450678", "alu"),                 // movt r0, #22136 @ 0x5678
    ("e350000a", "alu"),                 // cmp r0, #10
    ("e1700001", "alu"),                 // cmn r0, r1
    ("e3100001", "alu"),                 // tst r0, #1
    ("e1300001", "alu"),                 // teq r0, r1
    ("e0a10002", "alu"),                 // adc r0, r1, r2
    ("e0c10002", "alu"),                 // sbc r0, r1, r2
    ("13a00001", "alu"),                 // movne r0, #1
    ("e16f0f11", "alu"),                 // clz r0, r1
    ("e6bf0f31", "alu"),                 // rev r0, r1
    ("e6ff0f31", "alu"),                 // rbit r0, r1
    ("e6af0071", "alu"),                 // sxtb r0, r1
    ("e6ff0071", "alu"),                 // uxth r0, r1
    ("e6e10072", "alu"),                 // uxtab r0, r1, r2
    ("e7e70251", "alu"),                 // ubfx r0, r1, #4, #8
    ("e7a70251", "alu"),                 // sbfx r0, r1, #4, #8
    ("e7cb0211", "alu"),                 // bfi r0, r1, #4, #8
    ("e7cb021f", "alu"),                 // bfc r0, #4, #8
    ("e1020051", "alu"),                 // qadd r0, r1, r2
    ("e6510f92", "alu"),                 // uadd8 r0, r1, r2
    ("e6810fb2", "alu"),                 // sel r0, r1, r2
    ("e6e80011", "alu"),                 // usat r0, #8, r1
    ("e0810102", "alu_shifted"),         // add r0, r1, r2, lsl #2
    ("e0410fc2", "alu_shifted"),         // sub r0, r1, r2, asr #31
    ("e1810822", "alu_shifted"),         // orr r0, r1, r2, lsr #16
    ("e0210462", "alu_shifted"),         // eor r0, r1, r2, ror #8
    ("e0810062", "alu_shifted"),         // add r0, r1, r2, rrx
    ("e0810312", "alu_shifted"),         // add r0, r1, r2, lsl r3
    ("e1a00101", "alu_shifted"),         // lsl r0, r1, #2
    ("e1a00231", "alu_shifted"),         // lsr r0, r1, r2
    ("e1a000c1", "alu_shifted"),         // asr r0, r1, #1
    ("e1500081", "alu_shifted"),         // cmp r0, r1, lsl #1
    ("e0000291", "mul"),                 // mul r0, r1, r2
    ("e0203291", "mul"),                 // mla r0, r1, r2, r3
    ("e0603291", "mul"),                 // mls r0, r1, r2, r3
    ("e1600281", "mul"),                 // smulbb r0, r1, r2
    ("e750f211", "mul"),                 // smmul r0, r1, r2
    ("e7003211", "mul"),                 // smlad r0, r1, r2, r3
    ("e0810392", "mul_long"),            // umull r0, r1, r2, r3
    ("e0c10392", "mul_long"),            // smull r0, r1, r2, r3
    ("e0a10392", "mul_long"),            // umlal r0, r1, r2, r3
    ("e0e10392", "mul_long"),            // smlal r0, r1, r2, r3
    ("e0410392", "mul_long"),            // umaal r0, r1, r2, r3
    ("e1410382", "mul_long"),            // smlalbb r0, r1, r2, r3
    ("e710f211", "div"),                 // sdiv r0, r1, r2
    ("e730f211", "div"),                 // udiv r0, r1, r2
    ("e5910000", "load"),                // ldr r0, [r1]
    ("e5910004", "load"),                // ldr r0, [r1, #4]
    ("e7910102", "load"),                // ldr r0, [r1, r2, lsl #2]
    ("e4910004", "load"),                // ldr r0, [r1], #4
    ("e5d10001", "load"),                // ldrb r0, [r1, #1]
    ("e1d100b2", "load"),                // ldrh r0, [r1, #2]
    ("e1d100d0", "load"),                // ldrsb r0, [r1]
    ("e19100f2", "load"),                // ldrsh r0, [r1, r2]
    ("e1c200d0", "load"),                // ldrd r0, [r2]
    ("e1910f9f", "load"),                // ldrex r0, [r1]
    ("e59f0008", "load"),                // ldr r0, [pc, #8] @ 120 <start+0x120>
    ("e5810000", "store"),               // str r0, [r1]
    ("e5210004", "store"),               // str r0, [r1, #-4]!
    ("e7c10002", "store"),               // strb r0, [r1, r2]
    ("e1c100b2", "store"),               // strh r0, [r1, #2]
    ("e1c200f8", "store"),               // strd r0, [r2, #8]
    ("e1820f91", "store"),               // strex r0, r1, [r2]
    ("e52d0004", "store"),               // push {r0}  @ (str r0, [sp, #-4]!)
    ("e92d4070", "load_store_multiple"), // push {r4, r5, r6, lr}
    ("e8bd4070", "load_store_multiple"), // pop {r4, r5, r6, lr}
    ("e890000e", "load_store_multiple"), // ldm r0, {r1, r2, r3}
    ("e9200006", "load_store_multiple"), // stmdb r0!, {r1, r2}
    ("e9900006", "load_store_multiple"), // ldmib r0, {r1, r2}
    ("eaffffad", "branch"),              // b 0 <start>
    ("ebffffac", "branch"),              // bl 0 <start>
    ("fa000043", "branch"),              // blx 260 <thumb_target>
    ("0affffaa", "cond_branch"),         // beq 0 <start>
    ("1affffa9", "cond_branch"),         // bne 0 <start>
    ("cbffffa8", "cond_branch"),         // blgt 0 <start>
    ("e12fff1e", "indirect_branch"),     // bx lr
    ("112fff1e", "indirect_branch"),     // bxne lr
    ("e12fff33", "indirect_branch"),     // blx r3
    ("e8bd8010", "indirect_branch"),     // pop {r4, pc}
    ("e49df004", "indirect_branch"),     // pop {pc}  @ (ldr pc, [sp], #4)
    ("e49df004", "indirect_branch"),     // pop {pc}  @ (ldr pc, [sp], #4)
    ("e790f101", "indirect_branch"),     // ldr pc, [r0, r1, lsl #2]
    ("e1a0f00e", "indirect_branch"),     // mov pc, lr
    ("e08ff103", "indirect_branch"),     // add pc, pc, r3, lsl #2
    ("e8bd8001", "indirect_branch"),     // pop {r0, pc}
    ("ee300a81", "vfp_add"),             // vadd.f32 s0, s1, s2
    ("ee300ac1", "vfp_add"),             // vsub.f32 s0, s1, s2
    ("ee310b02", "vfp_add"),             // vadd.f64 d0, d1, d2
    ("eeb40a60", "vfp_add"),             // vcmp.f32 s0, s1
    ("eeb50ac0", "vfp_add"),             // vcmpe.f32 s0, #0.0
    ("ee200a81", "vfp_mul"),             // vmul.f32 s0, s1, s2
    ("ee200ac1", "vfp_mul"),             // vnmul.f32 s0, s1, s2
    ("ee000a81", "vfp_mul"),             // vmla.f32 s0, s1, s2
    ("ee010b42", "vfp_mul"),             // vmls.f64 d0, d1, d2
    ("ee100ac1", "vfp_mul"),             // vnmla.f32 s0, s1, s2
    ("eea00a81", "vfp_mul"),             // vfma.f32 s0, s1, s2
    ("eea00ac1", "vfp_mul"),             // vfms.f32 s0, s1, s2
    ("ee900ac1", "vfp_mul"),             // vfnma.f32 s0, s1, s2
    ("ee800a81", "vfp_div"),             // vdiv.f32 s0, s1, s2
    ("ee810b02", "vfp_div"),             // vdiv.f64 d0, d1, d2
    ("eeb10ae0", "vfp_div"),             // vsqrt.f32 s0, s1
    ("eebd0ae0", "vfp_convert"),         // vcvt.s32.f32 s0, s1
    ("eeb80ae0", "vfp_convert"),         // vcvt.f32.s32 s0, s1
    ("eeb80a60", "vfp_convert"),         // vcvt.f32.u32 s0, s1
    ("eebd0a60", "vfp_convert"),         // vcvtr.s32.f32 s0, s1
    ("eeb70ae0", "vfp_convert"),         // vcvt.f64.f32 d0, s1
    ("eeb70bc1", "vfp_convert"),         // vcvt.f32.f64 s0, d1
    ("eebe0ac8", "vfp_convert"),         // vcvt.s32.f32 s0, s0, #16
    ("eeb20a60", "vfp_convert"),         // vcvtb.f32.f16 s0, s1
    ("ed900a00", "vfp_load_store_move"), // vldr s0, [r0]
    ("ed900b02", "vfp_load_store_move"), // vldr d0, [r0, #8]
    ("ed8d0a01", "vfp_load_store_move"), // vstr s0, [sp, #4]
    ("ed2d8a02", "vfp_load_store_move"), // vpush {s16-s17}
    ("ecbd8b02", "vfp_load_store_move"), // vpop {d8}
    ("ecb00a04", "vfp_load_store_move"), // vldmia r0!, {s0-s3}
    ("ee000a10", "vfp_load_store_move"), // vmov s0, r0
    ("ee100a10", "vfp_load_store_move"), // vmov r0, s0
    ("ec510b10", "vfp_load_store_move"), // vmov r0, r1, d0
    ("eeb00a60", "vfp_load_store_move"), // vmov.f32 s0, s1
    ("eeb70a00", "vfp_load_store_move"), // vmov.f32 s0, #112 @ 0x3f800000  1.0
    ("eeb00ae0", "vfp_load_store_move"), // vabs.f32 s0, s1
    ("eeb10a60", "vfp_load_store_move"), // vneg.f32 s0, s1
    ("eef1fa10", "vfp_load_store_move"), // vmrs APSR_nzcv, fpscr
    ("eee10a10", "vfp_load_store_move"), // vmsr fpscr, r0
    ("f4200a8f", "vfp_load_store_move"), // vld1.32 {d0-d1}, [r0]
    ("f401070d", "vfp_load_store_move"), // vst1.8 {d0}, [r1]!
    ("eea00b10", "vfp_load_store_move"), // vdup.32 q0, r0
    ("ef000000", "other"),               // svc 0x00000000
    ("e320f000", "other"),               // nop {0}
    ("f57ff05b", "other"),               // dmb ish
    ("f57ff04f", "other"),               // dsb sy
    ("f57ff06f", "other"),               // isb sy
    ("ee1d0f70", "other"),               // mrc 15, 0, r0, cr13, cr0, {3}
    ("f5d0f040", "other"),               // pld [r0, #64] @ 0x40
    ("e10f0000", "other"),               // mrs r0, CPSR
    ("e128f000", "other"),               // msr CPSR_f, r0
    ("f2220844", "other"),               // vadd.i32 q0, q1, q2
    ("f3010112", "other"),               // veor d0, d1, d2
    ("e7f000f0", "other"),               // udf #0
    ("e1200070", "other"),               // bkpt 0x0000
];

/// (objdump hex, expected class) for `data/thumb_snippet.s`, in order.
const THUMB_VECTORS: &[(&str, &str)] = &[
    ("1888", "alu"),                      // adds r0, r1, r2
    ("3001", "alu"),                      // adds r0, #1
    ("1ec8", "alu"),                      // subs r0, r1, #3
    ("2005", "alu"),                      // movs r0, #5
    ("2807", "alu"),                      // cmp r0, #7
    ("0008", "alu"),                      // movs r0, r1
    ("4680", "alu"),                      // mov r8, r0
    ("4440", "alu"),                      // add r0, r8
    ("4580", "alu"),                      // cmp r8, r0
    ("4008", "alu"),                      // ands r0, r1
    ("4048", "alu"),                      // eors r0, r1
    ("4248", "alu"),                      // negs r0, r1
    ("43c8", "alu"),                      // mvns r0, r1
    ("a065", "alu"),                      // add r0, pc, #404 @ (adr r0, 1b0 <start_lit>)
    ("a802", "alu"),                      // add r0, sp, #8
    ("b004", "alu"),                      // add sp, #16
    ("b084", "alu"),                      // sub sp, #16
    ("b2c8", "alu"),                      // uxtb r0, r1
    ("b208", "alu"),                      // sxth r0, r1
    ("ba08", "alu"),                      // rev r0, r1
    ("f501 3080", "alu"),                 // add.w r0, r1, #65536 @ 0x10000
    ("f601 70ff", "alu"),                 // addw r0, r1, #4095 @ 0xfff
    ("f64a 30cd", "alu"),                 // movw r0, #43981 @ 0xabcd
    ("f2c1 2034", "alu"),                 // movt r0, #4660 @ 0x1234
    ("eb01 0002", "alu"),                 // add.w r0, r1, r2
    ("f041 0001", "alu"),                 // orr.w r0, r1, #1
    ("f5b0 7f7a", "alu"),                 // cmp.w r0, #1000 @ 0x3e8
    ("eba1 0002", "alu"),                 // sub.w r0, r1, r2
    ("fab1 f081", "alu"),                 // clz r0, r1
    ("f3c1 00c4", "alu"),                 // ubfx r0, r1, #3, #5
    ("f361 00c7", "alu"),                 // bfi r0, r1, #3, #5
    ("fa5f f889", "alu"),                 // uxtb.w r8, r9
    ("00c8", "alu_shifted"),              // lsls r0, r1, #3
    ("08c8", "alu_shifted"),              // lsrs r0, r1, #3
    ("10c8", "alu_shifted"),              // asrs r0, r1, #3
    ("4088", "alu_shifted"),              // lsls r0, r1
    ("41c8", "alu_shifted"),              // rors r0, r1
    ("eb01 0082", "alu_shifted"),         // add.w r0, r1, r2, lsl #2
    ("eba1 0062", "alu_shifted"),         // sub.w r0, r1, r2, asr #1
    ("ea4f 1001", "alu_shifted"),         // mov.w r0, r1, lsl #4
    ("fa21 f002", "alu_shifted"),         // lsr.w r0, r1, r2
    ("fa49 f80a", "alu_shifted"),         // asr.w r8, r9, sl
    ("4348", "mul"),                      // muls r0, r1
    ("fb01 f002", "mul"),                 // mul.w r0, r1, r2
    ("fb01 3002", "mul"),                 // mla r0, r1, r2, r3
    ("fb01 3012", "mul"),                 // mls r0, r1, r2, r3
    ("fb11 f002", "mul"),                 // smulbb r0, r1, r2
    ("fb82 0103", "mul_long"),            // smull r0, r1, r2, r3
    ("fba2 0103", "mul_long"),            // umull r0, r1, r2, r3
    ("fbe2 0103", "mul_long"),            // umlal r0, r1, r2, r3
    ("fb91 f0f2", "div"),                 // sdiv r0, r1, r2
    ("fbb1 f0f2", "div"),                 // udiv r0, r1, r2
    ("6808", "load"),                     // ldr r0, [r1, #0]
    ("6848", "load"),                     // ldr r0, [r1, #4]
    ("5888", "load"),                     // ldr r0, [r1, r2]
    ("9802", "load"),                     // ldr r0, [sp, #8]
    ("7848", "load"),                     // ldrb r0, [r1, #1]
    ("8848", "load"),                     // ldrh r0, [r1, #2]
    ("5688", "load"),                     // ldrsb r0, [r1, r2]
    ("4841", "load"),                     // ldr r0, [pc, #260] @ (1b0 <start_lit>)
    ("f8d1 0fff", "load"),                // ldr.w r0, [r1, #4095] @ 0xfff
    ("f851 0c04", "load"),                // ldr.w r0, [r1, #-4]
    ("f851 0022", "load"),                // ldr.w r0, [r1, r2, lsl #2]
    ("f9b1 0002", "load"),                // ldrsh.w r0, [r1, #2]
    ("e9d2 0102", "load"),                // ldrd r0, r1, [r2, #8]
    ("e851 0f00", "load"),                // ldrex r0, [r1]
    ("6008", "store"),                    // str r0, [r1, #0]
    ("5488", "store"),                    // strb r0, [r1, r2]
    ("8048", "store"),                    // strh r0, [r1, #2]
    ("9001", "store"),                    // str r0, [sp, #4]
    ("f8c1 0fff", "store"),               // str.w r0, [r1, #4095] @ 0xfff
    ("f841 0d04", "store"),               // str.w r0, [r1, #-4]!
    ("e9c2 0100", "store"),               // strd r0, r1, [r2]
    ("e842 1000", "store"),               // strex r0, r1, [r2]
    ("b510", "load_store_multiple"),      // push {r4, lr}
    ("bc10", "load_store_multiple"),      // pop {r4}
    ("e92d 41f0", "load_store_multiple"), // stmdb sp!, {r4, r5, r6, r7, r8, lr}
    ("e8bd 03f0", "load_store_multiple"), // ldmia.w sp!, {r4, r5, r6, r7, r8, r9}
    ("c806", "load_store_multiple"),      // ldmia r0!, {r1, r2}
    ("c006", "load_store_multiple"),      // stmia r0!, {r1, r2}
    ("e910 0006", "load_store_multiple"), // ldmdb r0, {r1, r2}
    ("e786", "branch"),                   // b.n 0 <start>
    ("f7ff bf85", "branch"),              // b.w 0 <start>
    ("f7ff ff83", "branch"),              // bl 0 <start>
    ("f000 e85c", "branch"),              // blx 1b4 <arm_target>
    ("f43f af7f", "cond_branch"),         // beq.w 0 <start>
    ("f47f af7d", "cond_branch"),         // bne.w 0 <start>
    ("b130", "cond_branch"),              // cbz r0, 116 <forward>
    ("b929", "cond_branch"),              // cbnz r1, 116 <forward>
    ("bf08", "other"),                    // it eq
    ("e778", "cond_branch"),              // beq.n 0 <start>
    ("bf1c", "other"),                    // itt ne
    ("2001", "alu"),                      // movne r0, #1
    ("f7ff bf75", "cond_branch"),         // bne.w 0 <start>
    ("4770", "indirect_branch"),          // bx lr
    ("4798", "indirect_branch"),          // blx r3
    ("46f7", "indirect_branch"),          // mov pc, lr
    ("449f", "indirect_branch"),          // add pc, r3
    ("bd10", "indirect_branch"),          // pop {r4, pc}
    ("e8bd 81f0", "indirect_branch"),     // ldmia.w sp!, {r4, r5, r6, r7, r8, pc}
    ("f85d fb04", "indirect_branch"),     // ldr.w pc, [sp], #4
    ("f8d0 f004", "indirect_branch"),     // ldr.w pc, [r0, #4]
    ("e8df f000", "indirect_branch"),     // tbb [pc, r0]
    ("e8df f010", "indirect_branch"),     // tbh [pc, r0, lsl #1]
    ("e8bd 8010", "indirect_branch"),     // ldmia.w sp!, {r4, pc}
    ("ee30 0a81", "vfp_add"),             // vadd.f32 s0, s1, s2
    ("ee31 0b42", "vfp_add"),             // vsub.f64 d0, d1, d2
    ("eeb4 0a60", "vfp_add"),             // vcmp.f32 s0, s1
    ("ee20 0a81", "vfp_mul"),             // vmul.f32 s0, s1, s2
    ("ee00 0a81", "vfp_mul"),             // vmla.f32 s0, s1, s2
    ("eea1 0b02", "vfp_mul"),             // vfma.f64 d0, d1, d2
    ("ee80 0a81", "vfp_div"),             // vdiv.f32 s0, s1, s2
    ("eeb1 0bc1", "vfp_div"),             // vsqrt.f64 d0, d1
    ("eebd 0ae0", "vfp_convert"),         // vcvt.s32.f32 s0, s1
    ("eeb8 0ae0", "vfp_convert"),         // vcvt.f32.s32 s0, s1
    ("eeb7 0ae0", "vfp_convert"),         // vcvt.f64.f32 d0, s1
    ("ed90 0a01", "vfp_load_store_move"), // vldr s0, [r0, #4]
    ("ed8d 0b00", "vfp_load_store_move"), // vstr d0, [sp]
    ("ed2d 8b04", "vfp_load_store_move"), // vpush {d8-d9}
    ("ecbd 8a01", "vfp_load_store_move"), // vpop {s16}
    ("ee00 0a10", "vfp_load_store_move"), // vmov s0, r0
    ("ec51 0b10", "vfp_load_store_move"), // vmov r0, r1, d0
    ("eeb0 0a60", "vfp_load_store_move"), // vmov.f32 s0, s1
    ("eeb1 0a60", "vfp_load_store_move"), // vneg.f32 s0, s1
    ("eef1 fa10", "vfp_load_store_move"), // vmrs APSR_nzcv, fpscr
    ("f920 070f", "vfp_load_store_move"), // vld1.8 {d0}, [r0]
    ("f901 0a8d", "vfp_load_store_move"), // vst1.32 {d0-d1}, [r1]!
    ("df00", "other"),                    // svc 0
    ("bf00", "other"),                    // nop
    ("f3af 8000", "other"),               // nop.w
    ("f3bf 8f5b", "other"),               // dmb ish
    ("ee1d 0f70", "other"),               // mrc 15, 0, r0, cr13, cr0, {3}
    ("f890 f000", "other"),               // pld [r0]
    ("ef22 0844", "other"),               // vadd.i32 q0, q1, q2
    ("ef11 0912", "other"),               // vmul.i16 d0, d1, d2
    ("de01", "other"),                    // udf #1
    ("be01", "other"),                    // bkpt 0x0001
];

/// Instruction bytes in memory order from objdump's hex column: one 32-bit
/// ARM word, or one or two Thumb halfwords.
fn bytes_of(hex: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    for unit in hex.split(' ') {
        let value = u32::from_str_radix(unit, 16).expect("hex in table");
        match unit.len() {
            8 => bytes.extend_from_slice(&value.to_le_bytes()),
            4 => bytes.extend_from_slice(&(value as u16).to_le_bytes()),
            _ => panic!("bad hex unit {unit}"),
        }
    }
    bytes
}

fn class_named(name: &str) -> InsnClass {
    InsnClass::from_name(name).unwrap_or_else(|| panic!("unknown class {name}"))
}

#[test]
fn arm_vectors_decode_to_their_classes() {
    let mut failures = Vec::new();
    for (i, &(hex, expected)) in ARM_VECTORS.iter().enumerate() {
        let word = u32::from_str_radix(hex, 16).expect("hex");
        let got = decode_a32(word, 4 * i as u64).class;
        if got != class_named(expected) {
            failures.push(format!("{hex}: expected {expected}, got {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "A32 mismatches:\n{}",
        failures.join("\n")
    );
}

#[test]
fn thumb_vectors_decode_to_their_classes() {
    let mut decoder = ThumbDecoder::new();
    let mut failures = Vec::new();
    let mut addr = 0u64;
    for &(hex, expected) in THUMB_VECTORS {
        let bytes = bytes_of(hex);
        let got = decoder.decode(&bytes, addr).class;
        if got != class_named(expected) {
            failures.push(format!("{hex}: expected {expected}, got {got}"));
        }
        addr += bytes.len() as u64;
    }
    assert!(
        failures.is_empty(),
        "T32 mismatches:\n{}",
        failures.join("\n")
    );
}

/// The expected classes annotated in a snippet, in order.
fn annotations(source: &str) -> Vec<String> {
    source
        .lines()
        .filter(|line| line.starts_with('\t'))
        .filter_map(|line| {
            let (code, note) = line.split_once('@')?;
            let code = code.trim();
            (!code.is_empty() && !code.starts_with('.')).then(|| note.trim().to_string())
        })
        .collect()
}

/// objdump's hex column for every instruction (not `.word` data) of `object`.
fn disassembly(object: &Path) -> Vec<String> {
    let output = Command::new("arm-linux-gnueabihf-objdump")
        .arg("-d")
        .arg(object)
        .output()
        .expect("run objdump");
    assert!(output.status.success(), "objdump failed");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines()
        .filter_map(|line| {
            let (address, rest) = line.split_once(":\t")?;
            u64::from_str_radix(address.trim(), 16).ok()?;
            let (hex, mnemonic) = rest.split_once('\t')?;
            (!mnemonic.starts_with(".word")).then(|| hex.trim().to_string())
        })
        .collect()
}

fn assembler_available() -> bool {
    let found = Command::new("arm-linux-gnueabihf-as")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("note: arm-linux-gnueabihf-as not found; skipping the assembler cross-check");
    }
    found
}

#[test]
fn tables_match_the_assembler() {
    if !assembler_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for (snippet, table) in [
        ("arm_snippet.s", ARM_VECTORS),
        ("thumb_snippet.s", THUMB_VECTORS),
    ] {
        let source_path = data.join(snippet);
        let object = dir.path().join(format!("{snippet}.o"));
        let status = Command::new("arm-linux-gnueabihf-as")
            .arg("-o")
            .arg(&object)
            .arg(&source_path)
            .status()
            .expect("run as");
        assert!(status.success(), "assembling {snippet} failed");
        let source = std::fs::read_to_string(&source_path).expect("read snippet");
        let expected = annotations(&source);
        let hex = disassembly(&object);
        assert!(
            hex.len() >= expected.len(),
            "{snippet}: {} instructions for {} annotations",
            hex.len(),
            expected.len()
        );
        let assembled: Vec<(&str, &str)> = hex
            .iter()
            .map(String::as_str)
            .zip(expected.iter().map(String::as_str))
            .collect();
        assert_eq!(
            assembled, table,
            "{snippet}: table out of date with the assembler or the annotations"
        );
    }
}
