//! A check that a tree stays within SysY's grammar proper, which is stricter than the C-like
//! grammar the front end accepts: comparisons and `&&`/`||` only in the condition of an
//! `if`/`while` and never inside parentheses (`Exp -> AddExp`, `PrimaryExp -> ( Exp )`), and
//! `!` only inside conditions. Generated programs must pass it, so that any SysY compiler
//! accepts them.

/// Checks that comparisons, `&&`, `||` and `!` occur only where SysY's grammar allows
/// them: in the condition of an `if`/`while`, never inside parentheses.
pub fn strict(unit: &sysyc::frontend::ast::CompUnit) -> Result<(), String> {
    use sysyc::frontend::ast::{BlockItem, Decl, Expr, ExprKind, InitVal, Item, Stmt, UnaryOp};

    fn is_cond_op(e: &Expr) -> Option<u8> {
        match &e.kind {
            ExprKind::Binary(op, ..) if op.precedence() <= 4 => Some(op.precedence()),
            _ => None,
        }
    }
    /// An expression of the `AddExp` level; `!` is allowed inside conditions only.
    fn plain(e: &Expr, in_cond: bool) -> Result<(), String> {
        match &e.kind {
            ExprKind::Binary(op, a, b) => {
                if op.precedence() <= 4 {
                    return Err(format!(
                        "`{}` outside a condition or in parentheses",
                        op.symbol()
                    ));
                }
                plain(a, in_cond)?;
                plain(b, in_cond)
            }
            ExprKind::Unary(UnaryOp::Not, _) if !in_cond => Err("`!` outside a condition".into()),
            ExprKind::Unary(_, a) => plain(a, in_cond),
            ExprKind::LVal(lv) => lv.indices.iter().try_for_each(|i| plain(i, false)),
            ExprKind::Call { args, .. } => args.iter().try_for_each(|a| plain(a, false)),
            _ => Ok(()),
        }
    }
    fn cond(e: &Expr, min_prec: u8) -> Result<(), String> {
        match (&e.kind, is_cond_op(e)) {
            (ExprKind::Binary(_, a, b), Some(p)) => {
                if p < min_prec {
                    return Err("a condition operator that needs parentheses".into());
                }
                cond(a, p)?;
                cond(b, p + 1)
            }
            _ => plain(e, true),
        }
    }
    fn init(v: &InitVal) -> Result<(), String> {
        match v {
            InitVal::Expr(e) => plain(e, false),
            InitVal::List(items, _) => items.iter().try_for_each(init),
        }
    }
    fn decl(d: &Decl) -> Result<(), String> {
        d.defs.iter().try_for_each(|def| {
            def.dims.iter().try_for_each(|e| plain(e, false))?;
            def.init.as_ref().map_or(Ok(()), init)
        })
    }
    fn stmt(s: &Stmt) -> Result<(), String> {
        match s {
            Stmt::Assign { target, value, .. } => {
                target.indices.iter().try_for_each(|i| plain(i, false))?;
                plain(value, false)
            }
            Stmt::Expr(e, _) | Stmt::Return(e, _) => e.as_ref().map_or(Ok(()), |e| plain(e, false)),
            Stmt::Block(b) => b.items.iter().try_for_each(item),
            Stmt::If {
                cond: c,
                then_branch,
                else_branch,
                ..
            } => {
                cond(c, 1)?;
                stmt(then_branch)?;
                else_branch.as_deref().map_or(Ok(()), stmt)
            }
            Stmt::While { cond: c, body, .. } => {
                cond(c, 1)?;
                stmt(body)
            }
            Stmt::Break(_) | Stmt::Continue(_) => Ok(()),
        }
    }
    fn item(i: &BlockItem) -> Result<(), String> {
        match i {
            BlockItem::Decl(d) => decl(d),
            BlockItem::Stmt(s) => stmt(s),
        }
    }
    unit.items.iter().try_for_each(|i| match i {
        Item::Decl(d) => decl(d),
        Item::Func(f) => f.body.items.iter().try_for_each(item),
    })
}
