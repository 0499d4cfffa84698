//! What keeps a database open past [`Db::close`]: snapshots, iterators and
//! transactions each hold the shared state through a [`Held`], which counts
//! them by kind so that `close` can say what is still open. Keyspace handles
//! do not keep it open: they reach it through the [`Gate`] that only the
//! [`Db`] holds.

use std::sync::atomic::AtomicUsize;
use std::sync::Weak;

use super::*;

/// The shared state as the [`Db`] lends it to its [`Keyspace`] handles: the
/// `Db` holds the one strong reference, the handles a [`Weak`] one, so that
/// closing or dropping the `Db` closes every handle at once (a call in
/// progress finishes first, holding what it upgraded).
pub(crate) type Gate = Arc<DbInner>;

/// A keyspace handle's reference to its database: upgraded once per call.
pub(crate) type GateRef = Weak<Gate>;

/// The kinds of handle that keep a database open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HandleKind {
    /// A [`Snapshot`] the user took.
    Snapshot,
    /// A [`DbIterator`] (its pin), or a transaction's iterator.
    Iterator,
    /// A [`Transaction`](crate::Transaction), until it is dropped.
    Transaction,
    /// Part of a handle counted as another kind (a transaction's snapshot).
    Part,
}

/// The open handles of one database, by kind.
#[derive(Default)]
pub(crate) struct HandleCounts {
    snapshots: AtomicUsize,
    iterators: AtomicUsize,
    transactions: AtomicUsize,
    parts: AtomicUsize,
}

impl HandleCounts {
    fn of(&self, kind: HandleKind) -> &AtomicUsize {
        match kind {
            HandleKind::Snapshot => &self.snapshots,
            HandleKind::Iterator => &self.iterators,
            HandleKind::Transaction => &self.transactions,
            HandleKind::Part => &self.parts,
        }
    }

    /// What is still open, for the [`Error::Busy`] of [`Db::close`], given
    /// `refs`, the references to the shared state besides the `Db`'s: the
    /// handles by kind, and the references no handle accounts for (a call
    /// through a keyspace handle in progress, or a handle being dropped
    /// right now) as "other".
    pub(crate) fn describe(&self, refs: usize) -> String {
        let counts = [
            (self.snapshots.load(Ordering::Acquire), "snapshot"),
            (self.iterators.load(Ordering::Acquire), "iterator"),
            (self.transactions.load(Ordering::Acquire), "transaction"),
        ];
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut parts: Vec<String> = counts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}{}", plural(*n)))
            .collect();
        let held =
            counts.iter().map(|(n, _)| n).sum::<usize>() + self.parts.load(Ordering::Acquire);
        let other = refs.saturating_sub(held);
        if other > 0 || parts.is_empty() {
            parts.push(format!(
                "{other} other reference{} (a call through a keyspace handle in progress, \
                 or a handle being dropped)",
                plural(other)
            ));
        }
        parts.join(", ")
    }
}

/// A reference to the shared state that counts as one open handle of its
/// kind while it lives.
pub(crate) struct Held {
    inner: Arc<DbInner>,
    kind: HandleKind,
}

impl Held {
    /// Counts a handle of `kind` on `inner` until the result is dropped.
    pub(crate) fn new(inner: Arc<DbInner>, kind: HandleKind) -> Self {
        inner.handles.of(kind).fetch_add(1, Ordering::AcqRel);
        Held { inner, kind }
    }
}

impl std::ops::Deref for Held {
    type Target = Arc<DbInner>;

    fn deref(&self) -> &Arc<DbInner> {
        &self.inner
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.inner
            .handles
            .of(self.kind)
            .fetch_sub(1, Ordering::AcqRel);
    }
}

/// A token for a database opened now (see `DbInner::token`): never 0, which
/// a [`WriteBatch`] of the default keyspace alone carries.
pub(crate) fn new_token() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
