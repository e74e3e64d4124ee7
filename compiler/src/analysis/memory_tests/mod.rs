//! Tests of the interprocedural and memory analyses, on hand-written IR and on random modules
//! checked against the IR interpreter.
//!
//! Test IR refers to values by name (`%a`) and to instructions without results by a trailing
//! comment tag (`store 1 -> %p ; S1`); [`Ir`] maps both back to entities. The parser numbers
//! values in definition order (parameters, then results in text order) exactly as the printer
//! does, and keeps instructions in text order, which is what the mapping relies on.

mod alias;
mod callgraph;
mod funcinfo;
mod memdep;
mod random;

use std::collections::HashMap;

use crate::ir::printer::Names;
use crate::ir::{FuncRef, Function, GlobalRef, Inst, Module, Value, parse_module, verify_module};

/// A parsed test module with name lookups.
pub(super) struct Ir {
    pub m: Module,
    funcs: HashMap<String, FuncNames>,
}

/// The names found in one function's text.
#[derive(Default)]
struct FuncNames {
    /// Value names in definition order.
    values: Vec<String>,
    /// `(tag, position of the instruction in text order)`.
    tags: Vec<(String, usize)>,
}

impl Ir {
    pub fn parse(text: &str) -> Ir {
        let m = parse_module(text).unwrap_or_else(|e| panic!("{e}"));
        if let Err(errors) = verify_module(&m) {
            panic!("test IR does not verify: {errors:?}");
        }
        let mut funcs = HashMap::new();
        // (function name, names so far, instructions so far)
        let mut current: Option<(String, FuncNames, usize)> = None;
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("func @") {
                let name = rest[..rest.find('(').expect("func header")].to_string();
                let params = &rest[rest.find('(').unwrap() + 1..rest.find(')').expect("func header")];
                let values = params
                    .split(',')
                    .filter_map(|p| p.trim().strip_prefix('%'))
                    .map(|p| p[..p.find(':').expect("param type")].to_string())
                    .collect();
                current = Some((name, FuncNames { values, tags: Vec::new() }, 0));
                continue;
            }
            let Some((_, names, count)) = current.as_mut() else { continue };
            if line == "}" {
                let (name, names, _) = current.take().unwrap();
                funcs.insert(name, names);
                continue;
            }
            let code = line.split(';').next().unwrap().trim();
            if code.is_empty() || code.ends_with(':') {
                continue;
            }
            if let Some(rest) = code.strip_prefix('%') {
                names.values.push(rest[..rest.find(' ').expect("result name")].to_string());
            }
            if let Some(tag) = line.split(';').nth(1) {
                names.tags.push((tag.trim().to_string(), *count));
            }
            *count += 1;
        }
        Ir { m, funcs }
    }

    pub fn f(&self, name: &str) -> FuncRef {
        self.m.func_by_name(name).unwrap_or_else(|| panic!("no function {name}"))
    }

    pub fn func(&self, name: &str) -> &Function {
        self.m.func(self.f(name))
    }

    pub fn g(&self, name: &str) -> GlobalRef {
        self.m.global_by_name(name).unwrap_or_else(|| panic!("no global {name}"))
    }

    /// Value `%name` of function `func`.
    pub fn v(&self, func: &str, name: &str) -> Value {
        let n = self.funcs[func].values.iter().position(|x| x == name).unwrap_or_else(|| panic!("no value %{name} in {func}"));
        let f = self.func(func);
        let numbering = Names::new(f);
        f.values().find(|&v| numbering.value(v) == Some(n as u32)).expect("numbered value")
    }

    /// The instruction defining `%name`, or tagged `; name`, in function `func`.
    pub fn i(&self, func: &str, name: &str) -> Inst {
        let names = &self.funcs[func];
        let f = self.func(func);
        if names.values.iter().any(|x| x == name) {
            return f.def_inst(self.v(func, name)).expect("instruction result");
        }
        let &(_, pos) = names.tags.iter().find(|(t, _)| t == name).unwrap_or_else(|| panic!("no tag {name} in {func}"));
        f.all_insts().nth(pos).map(|(_, i)| i).expect("tagged instruction")
    }
}
