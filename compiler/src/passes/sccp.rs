//! `sccp`: sparse conditional constant propagation (Wegman and Zadeck, 1991).
//!
//! Why: `constfold` only sees constants that are operands already. Through phis and branches
//! more is constant: a variable assigned the same constant on every path that can actually
//! run, a flag that is constant because the branch setting it otherwise is never taken. SCCP
//! finds these by assuming everything is unreachable and undefined until proven otherwise,
//! which is strictly stronger than alternating constant folding and dead-branch removal.
//!
//! Algorithm: every SSA value has a lattice cell — `Top` (no executable definition seen yet),
//! `Const(c)`, or `Bottom` (not one constant). Two worklists drive it: CFG edges that became
//! executable, and instructions whose operands' cells fell. A block is visited when its first
//! incoming edge becomes executable; a phi meets only the entries of executable edges; a
//! `br` whose condition is `Const` makes one edge executable, `Bottom` both. Instructions
//! evaluate with [`crate::ir::fold::fold`] (the interpreter's exact semantics; a trapping
//! division or a NaN result is not folded and so is `Bottom`). Loads, calls, allocas,
//! parameters, global addresses and `undef` are `Bottom`. Cells only fall, so the fixpoint is
//! reached after each cell changed at most twice: linear time.
//!
//! Then: every value in an executable block whose cell is a constant is replaced by it (its
//! instruction, pure by construction, is deleted), and every executable `br` on a constant
//! condition becomes a `jump`; the successor no longer reached loses that edge's phi entries.
//! Blocks that were never executable are left for `unreachable-blocks` to delete (they are
//! unreachable once the branches are folded).

use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashSet;

use super::cfg_edit::remove_one_phi_entry;
use crate::ir::fold::fold;
use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Const, Function, Inst, InstData, Opcode, Value, ValueDef};

pub struct Sccp;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Cell {
    #[default]
    Top,
    Const(Const),
    Bottom,
}

impl Cell {
    fn meet(self, other: Cell) -> Cell {
        match (self, other) {
            (Cell::Top, x) | (x, Cell::Top) => x,
            (Cell::Const(a), Cell::Const(b)) if a == b => Cell::Const(a),
            _ => Cell::Bottom,
        }
    }
}

struct Solver<'f> {
    func: &'f Function,
    cells: SecondaryMap<Value, Cell>,
    block_live: SecondaryMap<Block, bool>,
    edges: FxHashSet<(Block, Block)>,
    edge_work: Vec<(Block, Block)>,
    inst_work: Vec<Inst>,
}

impl Solver<'_> {
    fn cell(&self, v: Value) -> Cell {
        match self.func.value_def(v) {
            ValueDef::Const(c) => Cell::Const(c),
            ValueDef::Inst(_) => self.cells[v],
            ValueDef::Param(_) | ValueDef::Global(_) | ValueDef::Undef => Cell::Bottom,
        }
    }

    fn solve(&mut self, entry: Block) {
        self.enter_block(entry);
        loop {
            if let Some((from, to)) = self.edge_work.pop() {
                if !self.edges.insert((from, to)) {
                    continue;
                }
                if self.block_live[to] {
                    for phi in self.func.block_phis(to) {
                        self.visit(phi);
                    }
                } else {
                    self.enter_block(to);
                }
            } else if let Some(inst) = self.inst_work.pop() {
                if self.func.inst_block(inst).is_some_and(|b| self.block_live[b]) {
                    self.visit(inst);
                }
            } else {
                break;
            }
        }
    }

    fn enter_block(&mut self, b: Block) {
        self.block_live[b] = true;
        for inst in self.func.block_insts(b) {
            self.visit(inst);
        }
    }

    fn visit(&mut self, inst: Inst) {
        let func = self.func;
        let block = func.inst_block(inst).expect("visited instructions are placed");
        let op = func.opcode(inst);
        let args = func.args(inst);
        match op {
            Opcode::Jump => self.edge_work.push((block, func.targets(inst)[0])),
            Opcode::Br => {
                let t = func.targets(inst);
                match self.cell(args[0]) {
                    Cell::Top => {}
                    Cell::Const(Const::Bool(c)) => self.edge_work.push((block, if c { t[0] } else { t[1] })),
                    _ => {
                        self.edge_work.push((block, t[0]));
                        self.edge_work.push((block, t[1]));
                    }
                }
            }
            _ => {
                let Some(result) = func.result(inst) else { return };
                let new = match op {
                    Opcode::Phi => {
                        let mut acc = Cell::Top;
                        for (&pred, &v) in func.targets(inst).iter().zip(args) {
                            if self.edges.contains(&(pred, block)) {
                                acc = acc.meet(self.cell(v));
                            }
                        }
                        acc
                    }
                    Opcode::Select => match self.cell(args[0]) {
                        Cell::Top => Cell::Top,
                        Cell::Const(Const::Bool(c)) => self.cell(if c { args[1] } else { args[2] }),
                        _ => self.cell(args[1]).meet(self.cell(args[2])),
                    },
                    _ if op.is_pure() || op.may_trap() => self.evaluate(op, args, func.value_type(result)),
                    _ => Cell::Bottom,
                };
                let old = self.cells[result];
                let new = old.meet(new);
                if new != old {
                    self.cells[result] = new;
                    self.inst_work.extend_from_slice(func.users(result));
                }
            }
        }
    }

    /// The cell of a pure instruction from its operands' cells.
    fn evaluate(&self, op: Opcode, args: &[Value], ty: crate::ir::Type) -> Cell {
        let mut consts = Vec::with_capacity(args.len());
        let mut top = false;
        for &a in args {
            match self.cell(a) {
                Cell::Bottom => return Cell::Bottom,
                Cell::Top => top = true,
                Cell::Const(c) => consts.push(c),
            }
        }
        if top {
            return Cell::Top;
        }
        fold(op, &consts, ty).map_or(Cell::Bottom, Cell::Const)
    }
}

impl FunctionPass for Sccp {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let cfg = cx.analyses.cfg(func);
        let Some(entry) = cfg.entry() else { return false };
        let mut solver = Solver {
            func,
            cells: SecondaryMap::new(),
            block_live: SecondaryMap::new(),
            edges: FxHashSet::default(),
            edge_work: Vec::new(),
            inst_work: Vec::new(),
        };
        solver.solve(entry);
        let Solver { cells, block_live, .. } = solver;

        let mut replaced = 0u64;
        let mut branches = 0u64;
        let blocks: Vec<Block> = cfg.rpo().iter().copied().filter(|&b| block_live[b]).collect();
        for b in blocks {
            for inst in func.block_insts_vec(b) {
                if func.opcode(inst) == Opcode::Br {
                    let Some(Const::Bool(c)) = func.as_const(func.args(inst)[0]).or(match cells_of(func, &cells, inst) {
                        Cell::Const(k) => Some(k),
                        _ => None,
                    }) else {
                        continue;
                    };
                    let t = func.targets(inst).to_vec();
                    let (kept, dropped) = if c { (t[0], t[1]) } else { (t[1], t[0]) };
                    remove_one_phi_entry(func, dropped, b);
                    func.replace_inst(inst, InstData::jump(kept));
                    branches += 1;
                    continue;
                }
                let Some(result) = func.result(inst) else { continue };
                if let Cell::Const(c) = cells[result] {
                    let v = func.const_value(c);
                    func.replace_all_uses(result, v);
                    func.remove_inst(inst);
                    replaced += 1;
                }
            }
        }
        cx.count("values_replaced", replaced);
        cx.count("branches_folded", branches);
        replaced + branches > 0
    }
}

/// The cell of a branch's condition.
fn cells_of(func: &Function, cells: &SecondaryMap<Value, Cell>, br: Inst) -> Cell {
    let cond = func.args(br)[0];
    match func.value_def(cond) {
        ValueDef::Inst(_) => cells[cond],
        _ => Cell::Bottom,
    }
}
