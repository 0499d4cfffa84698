//! Software prefetch: a hint that a cache line will be read soon, so that its
//! cache miss overlaps other work instead of stalling the load that needs it.
//! The lowest layer: anything may use it.
//!
//! A lookup finds every level's candidate file before it probes any filter,
//! and prefetches what the probes of all levels will read first (file
//! metadata, filter state), so that those misses overlap instead of being
//! paid one level after another (`Version::get`); a mapped block's first and
//! last lines are prefetched before the block-cache lookup (`io::FileMap`).

/// Hints that the cache line holding address `at` will be read soon. Any
/// address is allowed (a prefetch never faults and never changes what a load
/// returns); a no-op on targets without a prefetch intrinsic.
#[inline(always)]
pub fn prefetch_addr(at: *const u8) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` is `unsafe` only because it is an SSE
        // intrinsic, and SSE is enabled (the `cfg` above; it is part of the
        // x86_64 baseline). PREFETCHT0 is a hint: it does not dereference
        // `at` in the language's sense, never faults whatever the address,
        // and changes no memory or register the program can observe.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = at;
}

/// Hints that the cache line holding the start of `*value` will be read soon.
#[inline(always)]
pub fn prefetch_read<T>(value: &T) {
    prefetch_addr(std::ptr::from_ref(value).cast::<u8>());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_changes_nothing_whatever_the_address() {
        let v: Vec<u64> = (0..1024).collect();
        for x in &v {
            prefetch_read(x);
        }
        // Addresses outside any allocation are allowed too.
        prefetch_addr(std::ptr::null());
        prefetch_addr(v.as_ptr().cast::<u8>().wrapping_add(1 << 40));
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
    }
}
