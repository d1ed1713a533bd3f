//! [`AlignedVec`]: a growable buffer of plain numbers starting on a 64-byte boundary.
//!
//! Frameworks take a batch without a copy only when its memory is aligned as their own
//! tensors are: XLA (JAX, TensorFlow) wants 64 bytes on the CPU and copies anything else,
//! and 64 bytes is also a cache line and an AVX-512 vector. `Vec<f32>` from the allocator
//! is aligned to 16 bytes at best. No crate of the usual set gives a resizable aligned
//! buffer of `Pod` values without `unsafe`, so this one is a `Vec` of 64-byte lines viewed
//! through `bytemuck` casts (safe: the lines are `Pod` with no padding).

use bytemuck::{Pod, Zeroable};

/// The alignment, bytes.
pub const ALIGN: usize = 64;

/// One 64-byte line, aligned to 64 bytes.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(64))]
struct Line([u8; ALIGN]);

/// A buffer of `len` values of `T` whose first value sits on a 64-byte boundary.
#[derive(Clone)]
pub struct AlignedVec<T> {
    lines: Vec<Line>,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T> std::fmt::Debug for AlignedVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedVec")
            .field("len", &self.len)
            .finish()
    }
}

impl<T: Pod> Default for AlignedVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Pod> AlignedVec<T> {
    /// An empty buffer (no allocation).
    #[must_use]
    pub fn new() -> Self {
        Self {
            lines: Vec::new(),
            len: 0,
            _t: std::marker::PhantomData,
        }
    }

    /// A buffer of `len` zeros.
    #[must_use]
    pub fn zeroed(len: usize) -> Self {
        let mut v = Self::new();
        v.resize(len);
        v
    }

    /// Sets the length to `len`. Values kept keep their contents; new ones are zero the
    /// first time the memory is used and hold earlier contents when it is reused (callers
    /// write every value they expose). Never reallocates once the buffer has been as large.
    pub fn resize(&mut self, len: usize) {
        let bytes = len * std::mem::size_of::<T>();
        let lines = bytes.div_ceil(ALIGN);
        if lines > self.lines.len() {
            self.lines.resize(lines, Line::zeroed());
        }
        self.len = len;
    }

    /// The values.
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        let all: &[T] = bytemuck::cast_slice(&self.lines);
        &all[..self.len]
    }

    /// The values, writable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        let all: &mut [T] = bytemuck::cast_slice_mut(&mut self.lines);
        &mut all[..self.len]
    }

    /// Number of values.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_resizable() {
        for n in [0, 1, 15, 16, 17, 1000, 12_345] {
            let mut v = AlignedVec::<f32>::zeroed(n);
            assert_eq!(v.len(), n);
            assert_eq!(v.as_slice().as_ptr() as usize % ALIGN, 0);
            assert!(v.as_slice().iter().all(|&x| x == 0.0));
            v.as_mut_slice()
                .iter_mut()
                .enumerate()
                .for_each(|(i, x)| *x = i as f32);
            let ptr = v.as_slice().as_ptr();
            v.resize(n / 2);
            v.resize(n);
            assert_eq!(
                v.as_slice().as_ptr(),
                ptr,
                "no reallocation below the high mark"
            );
            assert!(v.as_slice().iter().enumerate().all(|(i, &x)| x == i as f32));
        }
        let mut w = AlignedVec::<i64>::zeroed(5);
        w.as_mut_slice().copy_from_slice(&[0, 1, 2, 3, 4]);
        assert_eq!(w.as_slice(), &[0, 1, 2, 3, 4]);
        assert_eq!(w.as_slice().as_ptr() as usize % ALIGN, 0);
    }
}
