//! Intrusive doubly linked lists of pfns (the model's `list_head`), using the frame table's
//! `prev`/`next` links ([`LinkStore`]). Insertion at the head, scanners take from the tail, as in the kernel.

use crate::types::{Pfn, NIL};

#[derive(Clone, Copy, Debug)]
pub struct ListHead {
    pub head: u32,
    pub tail: u32,
    /// Number of entries (folios, not pages).
    pub len: u32,
}

impl Default for ListHead {
    fn default() -> Self {
        ListHead::new()
    }
}

impl ListHead {
    pub const fn new() -> Self {
        ListHead {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// Where a list's links are kept: `prev`/`next` of entry `i`. The frame table keeps them in
/// its per-frame record ([`crate::page::Frame`], so a folio's links share a cache line with
/// its flags); other lists (the dentry LRU) in two arrays ([`Links`]).
pub trait LinkStore {
    fn prev(&self, i: usize) -> u32;
    fn next(&self, i: usize) -> u32;
    fn set_prev(&mut self, i: usize, v: u32);
    fn set_next(&mut self, i: usize, v: u32);

    /// `list_add()`: insert at the head.
    #[inline]
    fn add_head(&mut self, l: &mut ListHead, pfn: Pfn) {
        let p = pfn as usize;
        self.set_prev(p, NIL);
        self.set_next(p, l.head);
        if l.head != NIL {
            self.set_prev(l.head as usize, pfn);
        } else {
            l.tail = pfn;
        }
        l.head = pfn;
        l.len += 1;
    }
    /// `list_add_tail()`.
    #[inline]
    fn add_tail(&mut self, l: &mut ListHead, pfn: Pfn) {
        let p = pfn as usize;
        self.set_next(p, NIL);
        self.set_prev(p, l.tail);
        if l.tail != NIL {
            self.set_next(l.tail as usize, pfn);
        } else {
            l.head = pfn;
        }
        l.tail = pfn;
        l.len += 1;
    }
    /// `list_del()`.
    #[inline]
    fn del(&mut self, l: &mut ListHead, pfn: Pfn) {
        let p = pfn as usize;
        let (pr, nx) = (self.prev(p), self.next(p));
        if pr != NIL {
            self.set_next(pr as usize, nx);
        } else {
            l.head = nx;
        }
        if nx != NIL {
            self.set_prev(nx as usize, pr);
        } else {
            l.tail = pr;
        }
        self.set_prev(p, NIL);
        self.set_next(p, NIL);
        l.len -= 1;
    }
    /// Rotate the list so that `pfn` (an entry) is its head; the entries that were before it
    /// follow the old tail (`list_cut_before()` + `list_splice_tail()`, as compaction's
    /// `move_freelist_head()` does; `move_freelist_tail()` is a rotation to the entry after).
    #[inline]
    fn rotate_to_head(&mut self, l: &mut ListHead, pfn: Pfn) {
        if pfn == NIL || l.head == pfn {
            return;
        }
        let new_tail = self.prev(pfn as usize);
        self.set_next(l.tail as usize, l.head);
        self.set_prev(l.head as usize, l.tail);
        self.set_next(new_tail as usize, NIL);
        self.set_prev(pfn as usize, NIL);
        l.head = pfn;
        l.tail = new_tail;
    }
}

/// Link storage in two arrays.
pub struct Links<'a> {
    pub prev: &'a mut [u32],
    pub next: &'a mut [u32],
}

impl LinkStore for Links<'_> {
    #[inline]
    fn prev(&self, i: usize) -> u32 {
        self.prev[i]
    }
    #[inline]
    fn next(&self, i: usize) -> u32 {
        self.next[i]
    }
    #[inline]
    fn set_prev(&mut self, i: usize, v: u32) {
        self.prev[i] = v;
    }
    #[inline]
    fn set_next(&mut self, i: usize, v: u32) {
        self.next[i] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn add_del_order() {
        let mut prev = vec![NIL; 8];
        let mut next = vec![NIL; 8];
        let mut l = ListHead::new();
        let mut k = Links {
            prev: &mut prev,
            next: &mut next,
        };
        k.add_head(&mut l, 1);
        k.add_head(&mut l, 2);
        k.add_tail(&mut l, 3);
        // head [2 1 3] tail
        assert_eq!((l.head, l.tail, l.len), (2, 3, 3));
        k.del(&mut l, 1);
        assert_eq!(k.next[2], 3);
        assert_eq!(k.prev[3], 2);
        k.del(&mut l, 2);
        k.del(&mut l, 3);
        assert!(l.is_empty());
        assert_eq!(l.tail, NIL);
        // Rotation: [4 5 6 7] -> rotate_to_head(6) -> [6 7 4 5].
        for p in 4..8 {
            k.add_tail(&mut l, p);
        }
        k.rotate_to_head(&mut l, 6);
        let mut order = vec![];
        let mut c = l.head;
        while c != NIL {
            order.push(c);
            c = k.next[c as usize];
        }
        assert_eq!(order, vec![6, 7, 4, 5]);
        assert_eq!((l.head, l.tail, l.len), (6, 5, 4));
        assert_eq!((k.prev[6], k.prev[4], k.next[5]), (NIL, 7, NIL));
    }
}
