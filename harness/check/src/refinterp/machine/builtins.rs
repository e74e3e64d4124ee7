//! The runtime library calls of the executor: input through `Io` (with the run's
//! [`InputFailure`] policy), output, and the array functions, which check their view's bounds
//! and (for output) the elements' initialisation one element at a time, as the C runtime
//! reads them.

use super::super::InputFailure;
use super::super::code::{BuiltinCall, PutfArg};
use super::{Machine, R};
use sysyc::frontend::ast::Span;
use sysyc::runtime::{PutfArg as IoPutfArg, TrapKind};

impl<'c, const COV: bool> Machine<'c, COV> {
    /// The value of a read, or the runtime library's 0, or an input trap at `span`.
    fn input<T: Default>(&mut self, r: Result<T, TrapKind>, span: Span, what: &str) -> R<T> {
        match (r, self.limits.input_failure) {
            (Ok(v), _) => Ok(v),
            (Err(_), InputFailure::Zero) => Ok(T::default()),
            (Err(kind), InputFailure::Trap) => {
                self.trap(kind, span, format!("{what}: no valid input left"))
            }
        }
    }

    /// Runs one runtime library call; its value (0 for `void` ones).
    #[inline(never)]
    pub(super) fn builtin(&mut self, b: &'c BuiltinCall) -> R<u32> {
        Ok(match b {
            BuiltinCall::GetInt(span) => {
                let r = self.io.get_int();
                self.input(r, *span, "getint")? as u32
            }
            BuiltinCall::GetCh(span) => {
                let r = self.io.get_ch();
                self.input(r, *span, "getch")? as u32
            }
            BuiltinCall::GetFloat(span) => {
                let r = self.io.get_float();
                self.input(r, *span, "getfloat")?.to_bits()
            }
            BuiltinCall::GetArray { array, float, span } => {
                let (addr, remaining) = self.locate(array)?;
                let what = if *float { "getfarray" } else { "getarray" };
                let r = self.io.get_int();
                let n = self.input(r, *span, what)?;
                for i in 0..n.max(0) as usize {
                    if i >= remaining {
                        let detail = format!(
                            "{what}: element {i} is past the end of the array ({remaining} elements)"
                        );
                        return self.trap(TrapKind::OutOfBounds, *span, detail);
                    }
                    let v = if *float {
                        let r = self.io.get_float();
                        self.input(r, *span, what)?.to_bits()
                    } else {
                        let r = self.io.get_int();
                        self.input(r, *span, what)? as u32
                    };
                    self.store(addr + i, v);
                }
                n as u32
            }
            BuiltinCall::PutInt(e) => {
                let v = self.operand(e)?;
                self.io.put_int(v as i32);
                0
            }
            BuiltinCall::PutCh(e) => {
                let v = self.operand(e)?;
                self.io.put_ch(v as i32);
                0
            }
            BuiltinCall::PutFloat(e) => {
                let v = self.operand(e)?;
                self.io.put_float(f32::from_bits(v));
                0
            }
            BuiltinCall::PutArray {
                count,
                array,
                float,
                span,
            } => {
                let n = self.eval(count)? as i32;
                let (addr, remaining) = self.locate(array)?;
                // Printed element by element, as the C runtime does, so a bad element stops
                // the output where the target's would stop.
                self.io.put_int(n);
                self.io.put_ch(b':' as i32);
                for i in 0..n.max(0) as usize {
                    if i >= remaining {
                        let what = if *float { "putfarray" } else { "putarray" };
                        let detail = format!(
                            "{what}: element {i} is past the end of the array ({remaining} elements)"
                        );
                        return self.trap(TrapKind::OutOfBounds, *span, detail);
                    }
                    let v = self.load(addr + i, *span)?;
                    self.io.put_ch(b' ' as i32);
                    if *float {
                        self.io.put_float(f32::from_bits(v));
                    } else {
                        self.io.put_int(v as i32);
                    }
                }
                self.io.put_ch(b'\n' as i32);
                0
            }
            BuiltinCall::PutF { format, args } => {
                let mut values = std::mem::take(&mut self.putf_args);
                values.clear();
                for a in args.iter() {
                    values.push(match a {
                        PutfArg::Int(e) => IoPutfArg::Int(self.eval(e)? as i32),
                        PutfArg::Float(e) => IoPutfArg::Float(f32::from_bits(self.eval(e)?)),
                    });
                }
                self.io.put_f(format, &values);
                self.putf_args = values;
                0
            }
            BuiltinCall::StartTime(line) => {
                self.io.start_time(*line);
                0
            }
            BuiltinCall::StopTime(line) => {
                self.io.stop_time(*line);
                0
            }
        })
    }
}
