//! Writing a batch that another thread reads later: non-temporal ("streaming") stores.
//!
//! A worker writes a whole batch (8 MB for `[32, 800, 80]` float32), then the batch waits
//! in a queue behind others while the worker builds the next one: by the time the consumer
//! reads it, the cache lines the worker wrote have long been evicted. An ordinary store
//! first reads each destination line into the cache (a read for ownership) only to
//! overwrite all of it, so the worker moves its bytes through memory three times (read the
//! source, read the destination, write it back). A non-temporal store writes whole lines
//! straight to memory: two passes instead of three. On the 2-core VM of the "From
//! Python" figures of docs/performance.md, this raised the loader's throughput by 5 to 35 %
//! (five alternated pairs of processes, 2 workers; `python python/bench/loader_bench.py`).
//!
//! glibc's `memcpy` makes the same switch, but only for one copy larger than about three
//! quarters of the shared cache; a batch is 32 row copies of at most a few hundred KB, each
//! below that threshold, so the choice has to be made here, where it is known that the
//! batch is read later and elsewhere. No crate of the usual set gives a non-temporal copy;
//! the x86-64 intrinsics are in `std::arch`. SSE2's 16-byte `_mm_stream_ps` is in every
//! x86-64 CPU, so no runtime detection is needed; the CPU's write-combining buffers merge
//! the 16-byte stores into whole lines. Other architectures copy as usual.
//!
//! Non-temporal stores are weakly ordered: [`fence`] must run after the last of them and
//! before the batch is handed to another thread, or the reader may see stale memory.

/// Copies `src` into `dst` (equal lengths) bypassing the cache where the CPU allows.
///
/// # Panics
/// If the lengths differ, as `copy_from_slice` does.
pub fn copy(dst: &mut [f32], src: &[f32]) {
    assert_eq!(dst.len(), src.len(), "stream_store::copy: lengths differ");
    #[cfg(target_arch = "x86_64")]
    {
        let (head, body) = split_aligned(dst.as_ptr(), dst.len());
        dst[..head].copy_from_slice(&src[..head]);
        #[allow(unsafe_code)]
        // SAFETY: `body` whole groups of 4 floats from `head` on lie inside both slices
        // (equal lengths, `head + 4 * body <= len`); `dst.add(head)` is 16-byte aligned, as
        // `_mm_stream_ps` requires; `_mm_loadu_ps` takes any alignment. SSE2 is part of
        // x86-64, so the instructions exist on every CPU this code runs on.
        unsafe {
            use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
            let d = dst.as_mut_ptr().add(head);
            let s = src.as_ptr().add(head);
            for k in 0..body {
                _mm_stream_ps(d.add(4 * k), _mm_loadu_ps(s.add(4 * k)));
            }
        }
        let tail = head + 4 * body;
        dst[tail..].copy_from_slice(&src[tail..]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// Sets `dst` to zero bypassing the cache where the CPU allows.
pub fn zero(dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        let (head, body) = split_aligned(dst.as_ptr(), dst.len());
        dst[..head].fill(0.0);
        #[allow(unsafe_code)]
        // SAFETY: as in `copy`: `body` aligned groups of 4 floats from `head` lie in `dst`.
        unsafe {
            use std::arch::x86_64::{_mm_setzero_ps, _mm_stream_ps};
            let d = dst.as_mut_ptr().add(head);
            for k in 0..body {
                _mm_stream_ps(d.add(4 * k), _mm_setzero_ps());
            }
        }
        dst[head + 4 * body..].fill(0.0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.fill(0.0);
}

/// Orders every non-temporal store made so far by this thread before its later stores (the
/// hand-over of the batch): `sfence`. Without it another thread could take the batch and
/// read memory the streaming stores have not reached yet.
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: `sfence` has no operands and no precondition (SSE, part of x86-64).
    unsafe {
        std::arch::x86_64::_mm_sfence();
    }
}

/// The floats before the first 16-byte boundary of a slice of `len` floats at `ptr`, and
/// the number of whole groups of 4 floats after it.
#[cfg(target_arch = "x86_64")]
fn split_aligned(ptr: *const f32, len: usize) -> (usize, usize) {
    let head = ptr.align_offset(16).min(len);
    (head, (len - head) / 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_zeroes_every_float_at_every_alignment_and_length() {
        let src: Vec<f32> = (0..300).map(|i| i as f32 + 0.5).collect();
        for start in 0..5 {
            for len in [0, 1, 3, 4, 5, 7, 8, 15, 16, 17, 63, 64, 65, 255] {
                let mut dst = vec![-1.0_f32; 300];
                let s = &src[start..start + len];
                copy(&mut dst[start..start + len], s);
                fence();
                assert_eq!(&dst[start..start + len], s, "start {start}, len {len}");
                assert!(dst[..start].iter().all(|&x| x == -1.0), "wrote before");
                assert!(dst[start + len..].iter().all(|&x| x == -1.0), "wrote after");
                zero(&mut dst[start..start + len]);
                fence();
                assert!(dst[start..start + len].iter().all(|&x| x == 0.0));
                assert!(
                    dst[start + len..].iter().all(|&x| x == -1.0),
                    "zeroed after"
                );
            }
        }
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn refuses_slices_of_different_lengths() {
        copy(&mut [0.0; 4], &[1.0; 5]);
    }
}
