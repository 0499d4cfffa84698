//! What the model test counts over a run, to assert that every kind of
//! operation ran.

use sievedb::Db;

use super::keyspaces::KsTotals;
use super::txns::TxTotals;

/// Counters summed over every incarnation of the database.
#[derive(Default)]
pub struct Totals {
    pub puts: u64,
    pub flushes: u64,
    pub compactions: u64,
    pub deepest_level_with_files: usize,
    /// Of the named keyspaces.
    pub keyspaces: KsTotals,
    /// Of the transactions.
    pub txns: TxTotals,
}

/// Notes the deepest level holding files.
pub fn note_levels(db: &Db, totals: &mut Totals) {
    let s = db.stats();
    for l in &s.levels {
        if l.files > 0 {
            totals.deepest_level_with_files = totals.deepest_level_with_files.max(l.level);
        }
    }
}
