//! The flags of the transactional benchmarks (`txnrandom`, `txnrandomhot`,
//! `txnreadrandom`; see [`crate::bench::txn`]), flattened into
//! [`crate::BenchArgs`]: the concurrency control (`--txn-mode`), the keys
//! per transaction, the hot set of `txnrandomhot` and the lock wait.

use std::time::Duration;

/// Default `--txn-keys` (db_bench's `RandomTransaction` touches one key per
/// set of `--transaction_sets`, default 2; the issue asks for 4).
pub const DEFAULT_TXN_KEYS: usize = 4;
/// Default `--txn-hot-keys`.
pub const DEFAULT_TXN_HOT_KEYS: u64 = 100;
/// Default `--txn-lock-timeout-ms` (sievedb's and RocksDB's default, 1 s).
pub const DEFAULT_TXN_LOCK_TIMEOUT_MS: u64 = 1000;

/// How the engines' transactions control concurrency (`--txn-mode`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TxnMode {
    /// No locks; the commit is validated (first committer wins). sievedb:
    /// `Db::transaction`; RocksDB: `OptimisticTransactionDB`; fjall:
    /// `OptimisticTxDatabase`.
    #[default]
    Optimistic,
    /// Locks taken by `get_for_update` and by writes, held until the end.
    /// sievedb: `TransactionOptions::pessimistic(true)`; RocksDB:
    /// `TransactionDB`; fjall (which has no key locks):
    /// `SingleWriterTxDatabase`, one write transaction at a time.
    Pessimistic,
}

impl TxnMode {
    /// Its name in the results (`optimistic`, `pessimistic`).
    pub fn name(self) -> &'static str {
        match self {
            TxnMode::Optimistic => "optimistic",
            TxnMode::Pessimistic => "pessimistic",
        }
    }
}

/// The transaction settings an engine is opened with (see
/// [`crate::engines::EngineConfig::txn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxnConfig {
    /// Optimistic or pessimistic.
    pub mode: TxnMode,
    /// How long a pessimistic transaction waits for a lock.
    pub lock_timeout: Duration,
}

/// The transactional benchmarks' flags.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct TxnArgs {
    /// Concurrency control of the transactional benchmarks: optimistic
    /// (sievedb's default transactions, RocksDB's OptimisticTransactionDB,
    /// fjall's OptimisticTxDatabase) or pessimistic (sievedb's pessimistic
    /// transactions, RocksDB's TransactionDB, fjall's SingleWriterTxDatabase).
    /// RocksDB and fjall open their transactional database only when
    /// --benchmarks names a txn* benchmark
    #[arg(long, value_enum, default_value_t = TxnMode::Optimistic)]
    pub txn_mode: TxnMode,
    /// Keys per transaction: txnrandom and txnrandomhot read (for update)
    /// and then write this many distinct keys; txnreadrandom looks up this
    /// many in each read-only transaction
    #[arg(long, value_name = "K", default_value_t = DEFAULT_TXN_KEYS)]
    pub txn_keys: usize,
    /// txnrandomhot: the keys come from a hot set of N keys spread evenly
    /// over --num (high contention); txnrandom draws them from all of --num
    /// (--distribution, uniform by default: low contention)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TXN_HOT_KEYS)]
    pub txn_hot_keys: u64,
    /// How long a pessimistic transaction waits for a lock another holds
    /// before it aborts (sievedb's lock_timeout, RocksDB's
    /// TransactionOptions::set_lock_timeout); both detect deadlocks
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_TXN_LOCK_TIMEOUT_MS)]
    pub txn_lock_timeout_ms: u64,
}

impl Default for TxnArgs {
    fn default() -> Self {
        TxnArgs {
            txn_mode: TxnMode::Optimistic,
            txn_keys: DEFAULT_TXN_KEYS,
            txn_hot_keys: DEFAULT_TXN_HOT_KEYS,
            txn_lock_timeout_ms: DEFAULT_TXN_LOCK_TIMEOUT_MS,
        }
    }
}

impl TxnArgs {
    /// The engines' transaction settings.
    pub fn config(&self) -> TxnConfig {
        TxnConfig {
            mode: self.txn_mode,
            lock_timeout: Duration::from_millis(self.txn_lock_timeout_ms),
        }
    }

    /// Checks the flags against the run's `--num`, `--value-size` and
    /// `--keyspaces` (only when a transactional benchmark runs).
    pub(crate) fn validate(
        &self,
        num: u64,
        value_size: usize,
        keyspaces: usize,
    ) -> Result<(), String> {
        if self.txn_keys == 0 {
            return Err("--txn-keys must be at least 1".into());
        }
        if (self.txn_keys as u64) > num {
            return Err(format!(
                "--txn-keys {} is more than the --num {num} keys there are",
                self.txn_keys
            ));
        }
        if self.txn_hot_keys < self.txn_keys as u64 {
            return Err(format!(
                "--txn-hot-keys {} must be at least --txn-keys {} (a transaction's keys are distinct)",
                self.txn_hot_keys, self.txn_keys
            ));
        }
        if self.txn_lock_timeout_ms == 0 {
            return Err("--txn-lock-timeout-ms must be at least 1".into());
        }
        if value_size < 8 {
            return Err(format!(
                "the transactional benchmarks add 1 to a counter in the first 8 bytes of each \
                 value: --value-size must be at least 8, not {value_size}"
            ));
        }
        if keyspaces != 1 {
            return Err(format!(
                "the transactional benchmarks run in the default keyspace: --keyspaces must be \
                 1, not {keyspaces}"
            ));
        }
        Ok(())
    }
}
