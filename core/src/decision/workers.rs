//! How a batch decision's scoring is spread over threads ([`in_shares`]). Splitting never
//! changes a batch's answer (each agent draws from its own seed stream and the shares' lists
//! are merged in agent order), only its speed: a helper thread is started for each split batch
//! and must be scheduled before the batch ends — tens of microseconds on an idle machine,
//! milliseconds on a busy one — so the caller scores shares too rather than waiting for its
//! helpers, and a helper scheduled late finds its part done.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Shares a split batch is cut into for each of its threads: a thread started late finds the
/// others have taken its part, so the batch ends about when the work does.
const SHARES_PER_THREAD: usize = 4;

/// `work` over `items` cut into shares on `threads` threads, the caller's one of them, and
/// each share's result in the order of the shares (so the results never depend on `threads`).
/// Each thread takes the next share no thread has taken yet until none is left.
pub(crate) fn in_shares<T: Sync, R: Send + Sync>(
    items: &[T],
    threads: usize,
    work: impl Fn(&[T]) -> R + Sync,
) -> Vec<R> {
    let share = items
        .len()
        .div_ceil(threads.saturating_mul(SHARES_PER_THREAD).max(1));
    let shares: Vec<&[T]> = items.chunks(share.max(1)).collect();
    let results: Vec<OnceLock<R>> = shares.iter().map(|_| OnceLock::new()).collect();
    let next = AtomicUsize::new(0);
    let take = || {
        while let Some(index) =
            Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&index| index < shares.len())
        {
            // Each index is taken by one thread only, so each slot is set once.
            let _ = results[index].set(work(shares[index]));
        }
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(take)).collect();
        take();
        for helper in helpers {
            if let Err(panic) = helper.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    // Every share was taken and finished before its thread was joined.
    results
        .into_iter()
        .filter_map(OnceLock::into_inner)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::in_shares;

    #[test]
    fn shares_come_back_in_order_whatever_the_threads() {
        let items: Vec<usize> = (0..1000).collect();
        let sum = |share: &[usize]| share.to_vec();
        let one: Vec<usize> = in_shares(&items, 1, sum).concat();
        assert_eq!(one, items);
        for threads in [2, 3, 8] {
            assert_eq!(in_shares(&items, threads, sum).concat(), items, "{threads}");
        }
        assert!(in_shares(&[] as &[usize], 2, sum).is_empty());
    }
}
