//! openraft's storage conformance suite (`openraft::testing::Suite`) against
//! the sievedb-backed log and state machine, each case on a fresh database.

use openraft::testing::{StoreBuilder, Suite};
use sievedb_server::store::{LogStore, StateMachine, Store};
use sievedb_server::types::{StorageError, TypeConfig};
use tempfile::TempDir;

struct Builder;

impl StoreBuilder<TypeConfig, LogStore, StateMachine, TempDir> for Builder {
    async fn build(&self) -> Result<(TempDir, LogStore, StateMachine), StorageError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open store");
        let log = LogStore::new(store.clone()).expect("log store");
        Ok((dir, log, StateMachine::new(store)))
    }
}

#[test]
fn openraft_storage_suite() {
    Suite::test_all(Builder).expect("openraft's storage suite");
}
