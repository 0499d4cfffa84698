//! What a `Db` hands out that keeps the database open (iterators,
//! snapshots, transactions and keyspace handles), so that `Db.close()` can
//! release them first, as plyvel does: a Python iterator left half-consumed
//! in a variable would otherwise make every `with sievedb.Db(p) as db:`
//! block end in `BusyError`.

use std::sync::{Arc, Mutex, Weak};

/// Something `close()` releases: it drops what it holds of the database
/// and answers `ClosedError` from then on.
pub trait Release: Send + Sync {
    /// Drops the engine objects held (idempotent).
    fn release(&self);
}

/// The live children of one database, held weakly (a child garbage
/// collected is gone from the engine already). `T` is `dyn Release` for
/// iterators and snapshots, a concrete type where the database must find
/// its children again (its keyspace handles, by name).
pub struct Children<T: ?Sized = dyn Release> {
    list: Mutex<Vec<Weak<T>>>,
}

impl<T: ?Sized> Default for Children<T> {
    fn default() -> Self {
        Children {
            list: Mutex::new(Vec::new()),
        }
    }
}

impl<T: ?Sized + Release> Children<T> {
    /// Registers `child`. Dead entries are swept when the list reaches a
    /// power of two, so registering stays O(1) amortised.
    pub fn add(&self, child: &Arc<T>) {
        if let Ok(mut list) = self.list.lock() {
            let n = list.len();
            if n >= 64 && n.is_power_of_two() {
                list.retain(|w| w.strong_count() > 0);
            }
            list.push(Arc::downgrade(child));
        }
    }

    /// The live children.
    pub fn live(&self) -> Vec<Arc<T>> {
        self.list
            .lock()
            .map(|list| list.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default()
    }

    /// Releases every live child.
    pub fn release_all(&self) {
        let list = match self.list.lock() {
            Ok(mut list) => std::mem::take(&mut *list),
            Err(_) => return,
        };
        for child in list.iter().filter_map(Weak::upgrade) {
            child.release();
        }
    }
}
