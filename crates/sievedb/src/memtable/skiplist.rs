//! An arena-backed skiplist for the memtable: one writer at a time, any number
//! of lock-free readers (LevelDB's design).
//!
//! Invariants that make the `unsafe` below sound:
//! - Nodes and their key/value bytes live in arena blocks that are freed only
//!   when the skiplist is dropped, so a node pointer obtained from the list is
//!   valid for as long as the list is.
//! - A node is fully written before it is published with a `Release` store of
//!   the predecessor's link; readers load links with `Acquire`, so they never
//!   see a partially initialised node.
//! - Nodes are never removed or modified after publication, except for their
//!   own tower links, which are atomics.
//! - `insert` is serialised by the arena mutex, so there is one writer at a time.

use std::cmp::Ordering;
use std::mem::{align_of, size_of};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering as AtOrd};

use parking_lot::Mutex;

/// Tallest tower; with branching 4 this covers ~16M entries comfortably.
pub const MAX_HEIGHT: usize = 12;
const BRANCHING: u32 = 4;
const BLOCK_SIZE: usize = 1 << 20;

/// Header of a node; its tower of `height` links follows it in memory.
#[repr(C)]
struct Node {
    data: *const u8,
    key_len: u32,
    value_len: u32,
}

impl Node {
    /// The link at `level` of `node`. Takes the raw pointer, not `&self`:
    /// the tower lies past the `Node` header, outside what a `&Node` may
    /// access (Miri's Stacked Borrows rejects that); the arena pointer's
    /// provenance covers the whole allocation.
    ///
    /// # Safety
    /// `node` points at a live node allocated with a tower of more than
    /// `level` links; the returned reference must not outlive the list.
    #[inline]
    unsafe fn link<'a>(node: *const Node, level: usize) -> &'a AtomicPtr<Node> {
        let tower = node.add(1) as *const AtomicPtr<Node>;
        &*tower.add(level)
    }

    #[inline]
    fn key(&self) -> &[u8] {
        if self.data.is_null() {
            return &[];
        }
        // SAFETY: data points at key_len + value_len initialised arena bytes
        // that live as long as the list (module invariants).
        unsafe { std::slice::from_raw_parts(self.data, self.key_len as usize) }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        if self.data.is_null() {
            return &[];
        }
        // SAFETY: as for `key`.
        unsafe {
            std::slice::from_raw_parts(
                self.data.add(self.key_len as usize),
                self.value_len as usize,
            )
        }
    }
}

struct Arena {
    /// The blocks, as pointers from `Box::into_raw` (freed when the arena is
    /// dropped). Not `Box`es: moving a `Box` (as a growing `Vec` does) asserts
    /// unique access to its memory, which would invalidate the node pointers
    /// handed out into it (Miri's Stacked Borrows reported exactly that).
    blocks: Vec<*mut [u64]>,
    ptr: *mut u8,
    left: usize,
    rng: u32,
}

impl Arena {
    /// Bump-allocates `n` bytes aligned to 8.
    fn alloc(&mut self, n: usize) -> *mut u8 {
        let n = n.max(1).next_multiple_of(8);
        if n > self.left {
            let words = if n > BLOCK_SIZE / 4 {
                n / 8
            } else {
                BLOCK_SIZE / 8
            };
            let block = Box::into_raw(vec![0u64; words].into_boxed_slice());
            let p = block as *mut u64 as *mut u8;
            self.blocks.push(block);
            if n > BLOCK_SIZE / 4 {
                // A large entry gets a block of its own; keep the current one.
                return p;
            }
            self.ptr = p;
            self.left = BLOCK_SIZE;
        }
        let p = self.ptr;
        // SAFETY: n <= left, so p + n stays inside the current block.
        self.ptr = unsafe { self.ptr.add(n) };
        self.left -= n;
        p
    }

    fn random_height(&mut self) -> usize {
        let mut h = 1;
        while h < MAX_HEIGHT {
            // xorshift32
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 17;
            self.rng ^= self.rng << 5;
            if !self.rng.is_multiple_of(BRANCHING) {
                break;
            }
            h += 1;
        }
        h
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for block in self.blocks.drain(..) {
            // SAFETY: every block came from `Box::into_raw` and is freed once;
            // the arena is dropped with the list, after which no node pointer
            // into it is used (module invariants).
            drop(unsafe { Box::from_raw(block) });
        }
    }
}

/// A sorted map from keys to values under a caller-supplied order.
pub struct SkipList {
    head: *const Node,
    height: AtomicUsize,
    arena: Mutex<Arena>,
    bytes: AtomicUsize,
    len: AtomicUsize,
    cmp: fn(&[u8], &[u8]) -> Ordering,
}

// SAFETY: the raw pointers point into arena blocks owned by the list; shared
// access follows the publication protocol in the module invariants, and the
// only mutable state (the arena) is behind a mutex.
unsafe impl Send for SkipList {}
// SAFETY: see above.
unsafe impl Sync for SkipList {}

fn node_size(height: usize) -> usize {
    size_of::<Node>() + height * size_of::<AtomicPtr<Node>>()
}

impl SkipList {
    /// An empty list ordered by `cmp`.
    pub fn new(cmp: fn(&[u8], &[u8]) -> Ordering) -> Self {
        const _: () = assert!(align_of::<Node>() <= 8);
        let mut arena = Arena {
            blocks: Vec::new(),
            ptr: ptr::null_mut(),
            left: 0,
            rng: 0x2545_f491,
        };
        let head = Self::new_node(&mut arena, MAX_HEIGHT, ptr::null(), 0, 0);
        SkipList {
            head,
            height: AtomicUsize::new(1),
            arena: Mutex::new(arena),
            bytes: AtomicUsize::new(0),
            len: AtomicUsize::new(0),
            cmp,
        }
    }

    fn new_node(
        arena: &mut Arena,
        height: usize,
        data: *const u8,
        key_len: usize,
        value_len: usize,
    ) -> *const Node {
        let node = arena.alloc(node_size(height)) as *mut Node;
        // SAFETY: the region was just allocated with the needed size, aligned
        // to 8; nothing else references it yet.
        unsafe {
            node.write(Node {
                data,
                key_len: key_len as u32,
                value_len: value_len as u32,
            });
            for i in 0..height {
                let link = (node.add(1) as *mut AtomicPtr<Node>).add(i);
                link.write(AtomicPtr::new(ptr::null_mut()));
            }
        }
        node
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len.load(AtOrd::Relaxed)
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of keys, values and nodes held.
    pub fn bytes(&self) -> usize {
        self.bytes.load(AtOrd::Relaxed)
    }

    /// Inserts an entry whose key is the concatenation of `key_parts`; the key
    /// must not be present already.
    pub fn insert(&self, key_parts: [&[u8]; 2], value: &[u8]) {
        let key_len = key_parts[0].len() + key_parts[1].len();
        assert!(key_len <= u32::MAX as usize && value.len() <= u32::MAX as usize);
        let mut arena = self.arena.lock();
        let data = arena.alloc(key_len + value.len());
        // SAFETY: `data` has room for key and value and is not yet shared.
        let key = unsafe {
            let mut d = data;
            for part in key_parts.iter().chain(std::iter::once(&value)) {
                ptr::copy_nonoverlapping(part.as_ptr(), d, part.len());
                d = d.add(part.len());
            }
            std::slice::from_raw_parts(data, key_len)
        };
        let mut prev = [self.head; MAX_HEIGHT];
        self.find_greater_or_equal(key, Some(&mut prev));
        let height = arena.random_height();
        if height > self.height.load(AtOrd::Relaxed) {
            // prev[old height..height] already point at head.
            self.height.store(height, AtOrd::Relaxed);
        }
        let node = Self::new_node(&mut arena, height, data, key_len, value.len());
        for (i, p) in prev.iter().enumerate().take(height) {
            // SAFETY: node has `height` links; prev[i] is head or a node of
            // height > i (it was reached at level i). The node's own link is set
            // before it is published by the Release store.
            unsafe {
                let next = Node::link(*p, i).load(AtOrd::Relaxed);
                Node::link(node, i).store(next, AtOrd::Relaxed);
                Node::link(*p, i).store(node as *mut Node, AtOrd::Release);
            }
        }
        self.bytes
            .fetch_add(key_len + value.len() + node_size(height), AtOrd::Relaxed);
        self.len.fetch_add(1, AtOrd::Relaxed);
    }

    /// The first node with key >= `key` (null if none), filling `prev` with the
    /// last node before it at every level.
    fn find_greater_or_equal(
        &self,
        key: &[u8],
        mut prev: Option<&mut [*const Node; MAX_HEIGHT]>,
    ) -> *const Node {
        let mut x = self.head;
        let mut level = self.height.load(AtOrd::Relaxed) - 1;
        loop {
            // SAFETY: x is head or a published node reached at `level`, so its
            // height exceeds `level`; published nodes stay valid (invariants).
            let next = unsafe { Node::link(x, level).load(AtOrd::Acquire) };
            // SAFETY: a non-null link points at a published node.
            let before =
                !next.is_null() && (self.cmp)(unsafe { (*next).key() }, key) == Ordering::Less;
            if before {
                x = next;
                continue;
            }
            if let Some(p) = prev.as_deref_mut() {
                p[level] = x;
            }
            if level == 0 {
                return next;
            }
            level -= 1;
        }
    }

    /// A cursor on the first entry with key >= `key`.
    pub fn seek(&self, key: &[u8]) -> Cursor<'_> {
        Cursor {
            node: self.find_greater_or_equal(key, None),
            list: self,
        }
    }

    /// The last node with key < `key` (`None`: `key` is <= every key), or
    /// with `key == None` the last node of the list (`None`: empty).
    fn find_less_than(&self, key: Option<&[u8]>) -> *const Node {
        let mut x = self.head;
        let mut level = self.height.load(AtOrd::Relaxed) - 1;
        loop {
            // SAFETY: as in `find_greater_or_equal`: x is head or a published
            // node reached at `level`, so its tower has a link at `level`.
            let next = unsafe { Node::link(x, level).load(AtOrd::Acquire) };
            // SAFETY: a non-null link points at a published node.
            let before = !next.is_null()
                && key.is_none_or(|k| (self.cmp)(unsafe { (*next).key() }, k) == Ordering::Less);
            if before {
                x = next;
                continue;
            }
            if level == 0 {
                return if x == self.head { ptr::null() } else { x };
            }
            level -= 1;
        }
    }

    /// A cursor on the last entry with key <= `key`.
    pub fn seek_for_prev(&self, key: &[u8]) -> Cursor<'_> {
        let c = self.seek(key);
        if c.valid() && (self.cmp)(c.key(), key) == Ordering::Equal {
            return c;
        }
        Cursor {
            node: self.find_less_than(Some(key)),
            list: self,
        }
    }

    /// A cursor on the last entry.
    pub fn last(&self) -> Cursor<'_> {
        Cursor {
            node: self.find_less_than(None),
            list: self,
        }
    }

    /// A cursor on the first entry.
    pub fn first(&self) -> Cursor<'_> {
        // SAFETY: head has MAX_HEIGHT links.
        let node = unsafe { Node::link(self.head, 0).load(AtOrd::Acquire) };
        Cursor { node, list: self }
    }
}

/// A position in a [`SkipList`]; valid while the list is borrowed.
#[derive(Clone, Copy)]
pub struct Cursor<'a> {
    node: *const Node,
    list: &'a SkipList,
}

// SAFETY: a cursor is a shared reference to the list plus a pointer to one of
// its published, immutable nodes; the list is Sync.
unsafe impl Send for Cursor<'_> {}
// SAFETY: as above.
unsafe impl Sync for Cursor<'_> {}

impl<'a> Cursor<'a> {
    /// Whether the cursor is on an entry.
    pub fn valid(&self) -> bool {
        !self.node.is_null()
    }
    /// The entry's key (cursor must be valid).
    pub fn key(&self) -> &'a [u8] {
        assert!(self.valid());
        // SAFETY: a valid cursor points at a published node that lives as long as the list.
        unsafe { (*self.node).key() }
    }
    /// The entry's value (cursor must be valid).
    pub fn value(&self) -> &'a [u8] {
        assert!(self.valid());
        // SAFETY: as for `key`.
        unsafe { (*self.node).value() }
    }
    /// Moves to the next entry.
    pub fn next(&mut self) {
        if self.valid() {
            // SAFETY: every node has at least one link.
            self.node = unsafe { Node::link(self.node, 0).load(AtOrd::Acquire) };
        }
    }
    /// Moves to the previous entry: a search from the head (nodes have no
    /// back links), O(log n).
    pub fn prev(&mut self) {
        if self.valid() {
            // SAFETY: a valid cursor points at a published node of the list.
            let key = unsafe { (*self.node).key() };
            self.node = self.list.find_less_than(Some(key));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn sorted_and_seekable() {
        let l = SkipList::new(|a, b| a.cmp(b));
        // Miri (`cargo +nightly miri test`) interprets every step: fewer keys.
        let n: u32 = if cfg!(miri) { 500 } else { 5000 };
        let mut keys: Vec<u32> = (0..n).map(|i| (i * 7919) % n).collect();
        for &k in &keys {
            l.insert([&k.to_be_bytes(), &[]], &[k as u8; 3]);
        }
        keys.sort();
        let mut c = l.first();
        for &k in &keys {
            assert_eq!(c.key(), k.to_be_bytes());
            assert_eq!(c.value(), [k as u8; 3]);
            c.next();
        }
        assert!(!c.valid());
        assert_eq!(l.seek(&100u32.to_be_bytes()).key(), 100u32.to_be_bytes());
        assert!(!l.seek(&n.to_be_bytes()).valid());
        let mut c = l.last();
        for &k in keys.iter().rev() {
            assert_eq!(c.key(), k.to_be_bytes());
            c.prev();
        }
        assert!(!c.valid());
        assert_eq!(
            l.seek_for_prev(&100u32.to_be_bytes()).key(),
            100u32.to_be_bytes()
        );
        assert_eq!(
            l.seek_for_prev(&[0, 0, 0, 100, 0]).key(),
            100u32.to_be_bytes()
        );
        assert!(!l.seek_for_prev(&[0, 0, 0]).valid());
        assert_eq!(l.seek_for_prev(&[0xFF; 5]).key(), (n - 1).to_be_bytes());
        l.insert([b"bi", b"g"], &vec![1u8; 600_000]);
        assert_eq!(l.seek(b"big").value().len(), 600_000);
    }

    #[test]
    fn concurrent_readers_see_sorted_prefixes() {
        let l = Arc::new(SkipList::new(|a, b| a.cmp(b)));
        let (n, scans): (u32, usize) = if cfg!(miri) { (300, 5) } else { (20_000, 50) };
        let w = {
            let l = l.clone();
            std::thread::spawn(move || {
                for i in 0..n {
                    l.insert([&(i.wrapping_mul(2_654_435_761)).to_be_bytes(), &[]], b"v");
                }
            })
        };
        for _ in 0..scans {
            let mut c = l.first();
            let mut last: Option<Vec<u8>> = None;
            while c.valid() {
                if let Some(p) = &last {
                    assert!(p.as_slice() < c.key());
                }
                last = Some(c.key().to_vec());
                c.next();
            }
        }
        w.join().unwrap();
        assert_eq!(l.len(), n as usize);
    }
}
