//! Gen/kill transfer functions `f(x) = gen ∪ (x − kill)` over fixed-size bit sets, with the
//! operations the region solver needs in closed form: application, composition, meet (for
//! either meet operator) and closure.
//!
//! Invariant: `gen ∩ kill = ∅` (every constructor and operation keeps it), so each bit of a
//! function is exactly one of *constant 1* (in `gen`), *constant 0* (in `kill`) or *passes
//! its input through*. That three-valued view is what makes the formulas below easy to check
//! bit by bit.

use fixedbitset::FixedBitSet;

use super::Meet;

/// `f(x) = gen ∪ (x − kill)`, with `gen ∩ kill = ∅`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    gen_set: FixedBitSet,
    kill_set: FixedBitSet,
}

impl Transfer {
    /// The identity on sets of `num_facts` facts.
    pub fn identity(num_facts: usize) -> Transfer {
        Transfer { gen_set: FixedBitSet::with_capacity(num_facts), kill_set: FixedBitSet::with_capacity(num_facts) }
    }

    /// `gen ∪ (x − kill)`; facts in both sets count as generated (generation wins, as for a
    /// block that kills a fact and then generates it again).
    pub fn new(gen_set: FixedBitSet, mut kill_set: FixedBitSet) -> Transfer {
        assert_eq!(gen_set.len(), kill_set.len(), "gen and kill sets over different fact universes");
        kill_set.difference_with(&gen_set);
        Transfer { gen_set, kill_set }
    }

    /// The constant function returning `value`.
    pub fn constant(value: FixedBitSet) -> Transfer {
        let mut kill_set = FixedBitSet::with_capacity(value.len());
        kill_set.insert_range(..);
        Transfer::new(value, kill_set)
    }

    pub fn gen_set(&self) -> &FixedBitSet {
        &self.gen_set
    }

    pub fn kill_set(&self) -> &FixedBitSet {
        &self.kill_set
    }

    pub fn num_facts(&self) -> usize {
        self.gen_set.len()
    }

    /// `f(x)`.
    pub fn apply(&self, x: &FixedBitSet) -> FixedBitSet {
        let mut out = x.clone();
        self.apply_in_place(&mut out);
        out
    }

    /// `x := f(x)`.
    pub fn apply_in_place(&self, x: &mut FixedBitSet) {
        x.difference_with(&self.kill_set);
        x.union_with(&self.gen_set);
    }

    /// `next ∘ self` (first `self`, then `next`):
    /// `gen = gen₂ ∪ (gen₁ − kill₂)`, `kill = (kill₁ ∪ kill₂) − gen`.
    pub fn then(&self, next: &Transfer) -> Transfer {
        let mut gen_set = self.gen_set.clone();
        gen_set.difference_with(&next.kill_set);
        gen_set.union_with(&next.gen_set);
        let mut kill_set = self.kill_set.clone();
        kill_set.union_with(&next.kill_set);
        Transfer::new(gen_set, kill_set)
    }

    /// `x ↦ f(x) ∧ g(x)`. A bit is constant 1 only when both make it 1; it is constant 0
    /// (union) only when both make it 0, or (intersection) when either does.
    pub fn meet(&self, other: &Transfer, meet: Meet) -> Transfer {
        let mut gen_set = self.gen_set.clone();
        let mut kill_set = self.kill_set.clone();
        match meet {
            Meet::Union => {
                gen_set.union_with(&other.gen_set);
                kill_set.intersect_with(&other.kill_set);
            }
            Meet::Intersection => {
                gen_set.intersect_with(&other.gen_set);
                kill_set.union_with(&other.kill_set);
            }
        }
        Transfer::new(gen_set, kill_set)
    }

    /// `f* = id ∧ f ∧ f² ∧ …` (any number of trips round a loop, zero included). Gen/kill
    /// functions are idempotent under composition (`f ∘ f = f`), so `f* = id ∧ f`:
    /// union keeps `gen` and kills nothing, intersection generates nothing and keeps `kill`.
    pub fn closure(&self, meet: Meet) -> Transfer {
        let n = self.num_facts();
        match meet {
            Meet::Union => Transfer::new(self.gen_set.clone(), FixedBitSet::with_capacity(n)),
            Meet::Intersection => Transfer::new(FixedBitSet::with_capacity(n), self.kill_set.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(n: usize, bits: &[usize]) -> FixedBitSet {
        let mut s = FixedBitSet::with_capacity(n);
        for &b in bits {
            s.insert(b);
        }
        s
    }

    /// Every gen/kill function over 2 facts, checked against its pointwise definition on
    /// every input: the closed forms must equal what they abbreviate.
    #[test]
    fn closed_forms_match_pointwise_definitions() {
        let subsets: Vec<FixedBitSet> = (0..4).map(|m| set(2, &[0, 1].iter().copied().filter(|b| m >> b & 1 == 1).collect::<Vec<_>>())).collect();
        let mut functions = Vec::new();
        for g in &subsets {
            for k in &subsets {
                functions.push(Transfer::new(g.clone(), k.clone()));
            }
        }
        for f in &functions {
            for g in &functions {
                let composed = f.then(g);
                for meet in [Meet::Union, Meet::Intersection] {
                    let met = f.meet(g, meet);
                    for x in &subsets {
                        assert_eq!(composed.apply(x), g.apply(&f.apply(x)));
                        let (a, b) = (f.apply(x), g.apply(x));
                        let mut expected = a.clone();
                        match meet {
                            Meet::Union => expected.union_with(&b),
                            Meet::Intersection => expected.intersect_with(&b),
                        }
                        assert_eq!(met.apply(x), expected);
                    }
                }
            }
            for meet in [Meet::Union, Meet::Intersection] {
                let star = f.closure(meet);
                for x in &subsets {
                    // id ∧ f ∧ f∘f ∧ f∘f∘f, spelled out.
                    let mut expected = x.clone();
                    let mut power = x.clone();
                    for _ in 0..3 {
                        power = f.apply(&power);
                        match meet {
                            Meet::Union => expected.union_with(&power),
                            Meet::Intersection => expected.intersect_with(&power),
                        }
                    }
                    assert_eq!(star.apply(x), expected, "closure of {f:?} under {meet:?} at {x:?}");
                }
            }
        }
    }

    #[test]
    fn constants_ignore_their_input() {
        let c = Transfer::constant(set(3, &[1]));
        assert_eq!(c.apply(&set(3, &[0, 2])), set(3, &[1]));
        assert_eq!(Transfer::identity(3).apply(&set(3, &[0, 2])), set(3, &[0, 2]));
    }
}
