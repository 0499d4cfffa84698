//! Prefetching a filter's bits for a lookup that already holds the key's
//! digest: a lookup that shares one digest across levels knows, after its
//! first filter probe, every bit the later levels' filters will test, and
//! prefetches them at once so their cache misses overlap
//! (`Version::get`).

use super::digest::{DigestSource, KeyProbe};
use super::{blocked, bloom, units, Bits, Filter, IndexScheme};

impl Filter {
    /// Prefetches the bits a probe of `probe`'s key will test, when the
    /// lookup already holds the digest this filter needs and shares it
    /// across levels (hashing nothing: a lookup that hashes per filter, or
    /// has not hashed yet, prefetches nothing). A hint only: what a later
    /// probe answers does not change.
    #[inline]
    pub fn prefetch_bits(&self, probe: &KeyProbe<'_>) {
        let mask = self.resident_mask();
        if mask == 0 || !self.p.digest_suffices() || self.p.scheme == IndexScheme::Double {
            return;
        }
        let Some(d) = probe.shared_digest(self.p.hash) else {
            return;
        };
        let src = &mut DigestSource(&d);
        match &self.bits {
            Bits::Words(w) => {
                let op = &mut bloom::Prefetch {
                    words: w,
                    wpu: self.p.wpu,
                };
                units::run(&self.p, src, op, mask);
            }
            Bits::Lines(l) => {
                blocked::run(&self.p, src, &mut blocked::Prefetch { lines: l });
            }
        }
    }
}
