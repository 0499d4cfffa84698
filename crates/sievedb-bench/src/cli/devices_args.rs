//! The flags of `sievedb devices` ([`DevicesArgs`]), the byte sizes they
//! parse ([`parse_size`]) and the subcommand's entry point ([`run`]).

use std::io::Write;
use std::path::PathBuf;

use crate::engines::EngineResult;
use crate::micro::devices::{
    measure, DevicesConfig, DEFAULT_DELAYS_NS, DEFAULT_FILE_SIZE, DEFAULT_KEY_SIZES, DEFAULT_READS,
    DEFAULT_SECONDS_PER_MODE,
};

/// Parses a byte size: a number with an optional `K`, `M`, `G` suffix (powers
/// of 1024, `KiB`/`MiB`/`GiB` and `B` accepted).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let lower = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, shift) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 10),
        Some('m') => (&lower[..lower.len() - 1], 20),
        Some('g') => (&lower[..lower.len() - 1], 30),
        _ => (lower, 0),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {s:?} (e.g. 4096, 64K, 256M, 1G)"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

/// Flags of `sievedb devices`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct DevicesArgs {
    /// Existing directory for the test file of the buffered, O_DIRECT and
    /// emulated modes (a temporary directory inside it, removed afterwards;
    /// default: the system's temporary directory, e.g. /tmp)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// tmpfs directory of the emulated-NVM mode (default /dev/shm when present)
    #[arg(long, value_name = "DIR")]
    pub tmpfs_dir: Option<PathBuf>,
    /// Skip the tmpfs mode
    #[arg(long, conflicts_with = "tmpfs_dir")]
    pub no_tmpfs: bool,
    /// Size of the test files (and of the memory buffer): bytes, or K/M/G
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    pub file_size: u64,
    /// Timed 4 KiB reads per access mode
    #[arg(long, value_name = "N", default_value_t = DEFAULT_READS)]
    pub reads: u64,
    /// Time limit of one access mode in seconds (slow devices stop early)
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SECONDS_PER_MODE)]
    pub seconds_per_mode: f64,
    /// Comma-separated emulated latencies in ns (the --io-delay-ns values to show)
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values_t = DEFAULT_DELAYS_NS)]
    pub delays_ns: Vec<u64>,
    /// Comma-separated key sizes in bytes for the hash cost
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_values_t = DEFAULT_KEY_SIZES)]
    pub key_sizes: Vec<usize>,
    /// A few-second run: 8 MiB file, 2000 reads and 0.3 s per mode, short hash
    /// runs (overrides --file-size, --reads and --seconds-per-mode)
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
    /// Also write the figures as CSV to FILE
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

impl Default for DevicesArgs {
    fn default() -> Self {
        DevicesArgs {
            dir: None,
            tmpfs_dir: None,
            no_tmpfs: false,
            file_size: DEFAULT_FILE_SIZE,
            reads: DEFAULT_READS,
            seconds_per_mode: DEFAULT_SECONDS_PER_MODE,
            delays_ns: DEFAULT_DELAYS_NS.to_vec(),
            key_sizes: DEFAULT_KEY_SIZES.to_vec(),
            quick: false,
            json: false,
            csv: None,
        }
    }
}

impl DevicesArgs {
    /// The measurement these flags ask for.
    pub fn config(&self) -> DevicesConfig {
        let base = if self.quick {
            DevicesConfig::quick()
        } else {
            DevicesConfig {
                file_size: self.file_size,
                reads: self.reads,
                seconds_per_mode: self.seconds_per_mode,
                ..DevicesConfig::default()
            }
        };
        DevicesConfig {
            dir: self.dir.clone(),
            tmpfs_dir: if self.no_tmpfs {
                None
            } else {
                self.tmpfs_dir.clone().or(base.tmpfs_dir.clone())
            },
            delays_ns: self.delays_ns.clone(),
            key_sizes: self.key_sizes.clone(),
            ..base
        }
    }
}

/// Runs `sievedb devices`: measures, prints text (or JSON) to `out`, and
/// writes the CSV file when asked.
pub fn run(args: &DevicesArgs, out: &mut dyn Write) -> EngineResult<()> {
    let report = measure(&args.config())?;
    if let Some(path) = &args.csv {
        std::fs::write(path, report.csv())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        out.write_all(report.text().as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::path::Path;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64K").unwrap(), 64 << 10);
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("8MB").unwrap(), 8 << 20);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999G").is_err());
    }

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: DevicesArgs,
    }

    #[test]
    fn flags_parse_and_defaults_match() {
        assert_eq!(
            Cli::try_parse_from(["devices"]).unwrap().args,
            DevicesArgs::default()
        );
        let a = Cli::try_parse_from([
            "devices",
            "--dir",
            "/tmp/x",
            "--file-size",
            "64M",
            "--reads",
            "500",
            "--delays-ns",
            "70,1000",
            "--key-sizes",
            "16,1024",
            "--no-tmpfs",
            "--json",
            "--csv",
            "out.csv",
        ])
        .unwrap()
        .args;
        let c = a.config();
        assert_eq!(c.dir.as_deref(), Some(Path::new("/tmp/x")));
        assert_eq!((c.file_size, c.reads), (64 << 20, 500));
        assert_eq!(c.delays_ns, [70, 1000]);
        assert_eq!(c.key_sizes, [16, 1024]);
        assert_eq!(c.tmpfs_dir, None);
        assert!(a.json && a.csv.is_some());
        let q = Cli::try_parse_from(["devices", "--quick"]).unwrap().args;
        assert_eq!(q.config().file_size, DevicesConfig::quick().file_size);
        assert!(Cli::try_parse_from(["devices", "--no-tmpfs", "--tmpfs-dir", "/x"]).is_err());
        assert!(Cli::try_parse_from(["devices", "--file-size", "big"]).is_err());
    }
}
