//! Delta debugging (Zeller and Hildebrandt's `ddmin`): the smallest sub-list of a failing
//! list that still fails, for lists of passes or back-end stages.
//!
//! Design: the list is cut into `n` chunks (starting with 2). For each chunk, try the chunk
//! alone, then the list without it; the first failing one becomes the new list (and `n`
//! becomes 2, or `n - 1` after removing a complement). When nothing fails, the chunks are
//! halved (`n` doubles) until they are single elements. The result is 1-minimal: removing any
//! single element makes the test pass. Order is kept (a sub-pipeline is a subsequence).
//! Results are cached by sub-list, since the same sub-list often comes up twice.
//!
//! The test must be deterministic; `ddmin` assumes `fails(list)` holds and does not re-check
//! it.

use std::collections::BTreeMap;

/// The 1-minimal failing subsequence of `list` (see the module documentation). `fails` is
/// called at most once per distinct subsequence; the number of calls is returned too.
pub fn ddmin<T: Clone + Ord>(list: &[T], mut fails: impl FnMut(&[T]) -> bool) -> (Vec<T>, usize) {
    let mut cache: BTreeMap<Vec<T>, bool> = BTreeMap::new();
    let mut test = |candidate: &[T]| -> bool {
        if let Some(&v) = cache.get(candidate) {
            return v;
        }
        let v = fails(candidate);
        cache.insert(candidate.to_vec(), v);
        v
    };
    let mut current = list.to_vec();
    if current.is_empty() || test(&[]) {
        let calls = cache.len();
        return (Vec::new(), calls);
    }
    let mut n = 2usize;
    while current.len() >= 2 {
        let chunks = split(&current, n);
        let mut reduced = false;
        for chunk in &chunks {
            if test(chunk) {
                current = chunk.clone();
                n = 2;
                reduced = true;
                break;
            }
        }
        if !reduced && n > 2 {
            for i in 0..chunks.len() {
                let complement: Vec<T> = chunks
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .flat_map(|(_, c)| c.iter().cloned())
                    .collect();
                if test(&complement) {
                    current = complement;
                    n = (n - 1).max(2);
                    reduced = true;
                    break;
                }
            }
        }
        if !reduced {
            if n >= current.len() {
                break;
            }
            n = (n * 2).min(current.len());
        }
    }
    let calls = cache.len();
    (current, calls)
}

/// `list` in `n` contiguous chunks of near-equal length (the first ones one longer).
fn split<T: Clone>(list: &[T], n: usize) -> Vec<Vec<T>> {
    let n = n.min(list.len()).max(1);
    let (base, extra) = (list.len() / n, list.len() % n);
    let mut chunks = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        chunks.push(list[start..start + len].to_vec());
        start += len;
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_single_culprit() {
        let list: Vec<u32> = (0..11).collect();
        let (min, calls) = ddmin(&list, |l| l.contains(&7));
        assert_eq!(min, vec![7]);
        assert!(calls < 20, "{calls} calls");
    }

    #[test]
    fn finds_an_interaction_in_order() {
        // Fails only when 2 comes before 9 (both present): a "pass A then pass B" bug.
        let list: Vec<u32> = (0..12).collect();
        let (min, _) = ddmin(&list, |l| {
            let a = l.iter().position(|&x| x == 2);
            let b = l.iter().position(|&x| x == 9);
            matches!((a, b), (Some(a), Some(b)) if a < b)
        });
        assert_eq!(min, vec![2, 9]);
    }

    #[test]
    fn keeps_duplicates_that_matter() {
        // A pipeline with a pass twice where only the second occurrence (with 5 before it)
        // fails.
        let list = vec![1, 5, 3, 1, 4];
        let (min, _) = ddmin(&list, |l| l.windows(2).any(|w| w == [5, 3]) && l.len() >= 2);
        assert_eq!(min, vec![5, 3]);
    }

    #[test]
    fn empty_when_nothing_is_needed() {
        let (min, calls) = ddmin(&[1, 2, 3], |_| true);
        assert!(min.is_empty());
        assert_eq!(calls, 1);
    }

    #[test]
    fn split_covers_the_list() {
        let chunks = split(&[1, 2, 3, 4, 5], 3);
        assert_eq!(chunks, vec![vec![1, 2], vec![3, 4], vec![5]]);
    }
}
