//! The storage devices paper 000's tree experiments read through (Figures
//! 1 and 5–9): the page cache, tmpfs, O_DIRECT and the latencies of Table 1
//! emulated per block read.

use crate::BenchArgs;

/// Where a tree experiment's database is read from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Device {
    /// Files on the work directory's file system, in the page cache (buffered reads).
    PageCache,
    /// Files in `/dev/shm` (tmpfs, the paper's RAM disk).
    Tmpfs,
    /// Files on the work directory's file system, read with O_DIRECT.
    DirectIo,
    /// Page-cache files with an emulated access latency added to every data
    /// block read from a file.
    Emulated {
        /// Short name (SSD, PCIe, NVM).
        name: &'static str,
        /// Added latency per block read, in ns.
        delay_ns: u64,
    },
}

/// The paper's off-the-shelf SSD: 113 µs per 4 KB page (Table 1).
pub const SSD: Device = Device::Emulated {
    name: "SSD 113µs",
    delay_ns: 113_000,
};
/// The paper's PCIe SSD: 10 µs per 4 KB page (Table 1).
pub const PCIE: Device = Device::Emulated {
    name: "PCIe 10µs",
    delay_ns: 10_000,
};
/// The paper's expected NVM: 70 ns per 4 KB page (Table 1).
pub const NVM: Device = Device::Emulated {
    name: "NVM 70ns",
    delay_ns: 70,
};

impl Device {
    /// Display name.
    pub fn name(&self) -> String {
        match self {
            Device::PageCache => "page cache".into(),
            Device::Tmpfs => "tmpfs".into(),
            Device::DirectIo => "direct I/O".into(),
            Device::Emulated { name, .. } => format!("emulated {name}"),
        }
    }

    /// Whether the tree must live in `/dev/shm`.
    pub fn tmpfs(&self) -> bool {
        matches!(self, Device::Tmpfs)
    }

    /// Emulated delay per block read, ns.
    pub fn delay_ns(&self) -> u64 {
        match self {
            Device::Emulated { delay_ns, .. } => *delay_ns,
            _ => 0,
        }
    }

    /// Whether this build can read through this device.
    pub fn available(&self) -> bool {
        match self {
            Device::PageCache => true,
            Device::Tmpfs => std::path::Path::new("/dev/shm").is_dir(),
            Device::DirectIo | Device::Emulated { .. } => IO_OPTIONS,
        }
    }

    /// Sets the bench flags that read through this device.
    pub fn apply(&self, args: &mut BenchArgs) {
        match self {
            Device::DirectIo => args.use_direct_reads = true,
            Device::Emulated { delay_ns, .. } => args.io_delay_ns = *delay_ns,
            Device::PageCache | Device::Tmpfs => {}
        }
    }

    /// Lookups to run on this device, scaled down for slow emulated devices so
    /// that a run stays short (`base` for fast devices).
    #[expect(
        clippy::cast_sign_loss,
        reason = "a budget over a positive latency is not negative"
    )]
    pub fn reads(&self, base: u64, alpha: f64) -> u64 {
        // Expected block reads per lookup: α plus a few false positives;
        // direct I/O is assumed to cost about an SSD read.
        let latency = match self {
            Device::DirectIo => 100_000.0,
            _ => self.delay_ns() as f64,
        };
        let per_lookup_ns = latency * (alpha + 0.05);
        let budget_ns = base as f64 * 5_000.0; // what `base` lookups of ~5 µs take
        if per_lookup_ns <= 5_000.0 {
            base
        } else {
            ((budget_ns / per_lookup_ns) as u64).clamp(base / 20 + 1, base)
        }
    }
}

/// Whether the direct-I/O and emulated-latency options exist in this build
/// (`bench --use-direct-reads`, `--io-delay-ns`).
pub const IO_OPTIONS: bool = true;

/// The devices of Figure 6 available in this build, in the paper's order
/// (slowest first).
pub fn all_devices() -> Vec<Device> {
    [
        Device::DirectIo,
        SSD,
        PCIE,
        Device::PageCache,
        Device::Tmpfs,
        NVM,
    ]
    .into_iter()
    .filter(Device::available)
    .collect()
}

/// Devices that are not available in this build, as a sentence (or empty).
pub fn missing_devices() -> String {
    let missing: Vec<String> = [Device::DirectIo, SSD, PCIE, Device::Tmpfs, NVM]
        .iter()
        .filter(|d| !d.available())
        .map(Device::name)
        .collect();
    if missing.is_empty() {
        String::new()
    } else {
        format!(
            "Not measured (not available in this build or on this machine): {}.",
            missing.join(", ")
        )
    }
}
