//! The CPU emulator (`cuda_emu`) without a GPU: each planted bug of the `emulator`
//! probes and the exact report, and kernels of the GPU tests against their CPU references.
//! The emulator's speed is a benchmark: `cargo xtask emu-speed` (`tests/benches/emu_speed.rs`).

use std::ffi::c_void;
use std::time::Instant;

use cuda_emu::{self as emu, AccessKind, Dim3, EmuError, EmuOptions, HostBuffer};
use cuda_std::launch::Kernel;
use probes::emulator as probe;
use probes::primitives as prim;

#[path = "support/emulate.rs"]
#[macro_use]
mod emulate;
#[path = "support/speed_probes.rs"]
mod speed_probes;
use emulate::{opts, run, slice, slice_mut};

/// The line of the `nth` occurrence of `needle` after the line holding `kernel` in the
/// probes' source, for asserting reported locations without hard-coding line numbers.
fn probe_line_in(kernel: &str, needle: &str, nth: usize) -> u32 {
    let src = include_str!("../kernels/src/emulator.rs");
    let start = src
        .lines()
        .position(|l| l.contains(kernel))
        .unwrap_or_else(|| panic!("{kernel:?} not in the probes"));
    let line = src
        .lines()
        .enumerate()
        .skip(start)
        .filter(|(_, l)| l.contains(needle))
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} not in the probes"))
        .0;
    line as u32 + 1
}

/// [`probe_line_in`] from the top of the file.
fn probe_line(needle: &str, nth: usize) -> u32 {
    probe_line_in("//!", needle, nth)
}

const PROBES_FILE: &str = "tests/kernels/src/emulator.rs";

// ---------------------------------------------------------------------------------------
// Planted bugs

/// A race's access as its thread, kind and source line (what the planted-race tests check).
fn site(a: &emu::Access) -> ([u32; 3], AccessKind, u32) {
    (a.thread, a.kind, a.location.line)
}

#[test]
fn shared_race_names_both_threads_and_the_write() {
    let mut out = vec![0u32; 32];
    let err = emulate!(probe::emu_race, [1, 1, 1], [32, 1, 1], 0, &opts(); slice_mut(&mut out))
        .expect_err("the race is reported");
    let EmuError::SharedRace {
        kernel,
        block,
        offset,
        first,
        second,
        allocation,
        ..
    } = &err
    else {
        panic!("expected a race, got {err}")
    };
    assert_eq!((*kernel, *block, *offset), ("emu_race", [0, 0, 0], 0));
    // Named by its type and declaration site (the probe's `shared_array!`).
    assert!(
        allocation.starts_with("shared array `[u32; ") && allocation.contains(PROBES_FILE),
        "{allocation}"
    );
    let line = probe_line("shared::write(s, thread_idx_x())", 0);
    assert_eq!((first.thread, first.kind), ([0, 0, 0], AccessKind::Write));
    assert_eq!((second.thread, second.kind), ([1, 0, 0], AccessKind::Write));
    for access in [first, second] {
        assert_eq!(
            (access.location.file, access.location.line),
            (PROBES_FILE, line)
        );
    }
    println!("planted race: {err}");
}

#[test]
fn uninitialised_shared_read_names_the_reader_and_the_byte() {
    let mut out = vec![0u32; 32];
    let err = emulate!(probe::emu_uninit, [1, 1, 1], [32, 1, 1], 0, &opts(); slice_mut(&mut out))
        .expect_err("reported");
    let EmuError::UninitRead {
        kernel,
        thread,
        offset,
        element,
        location,
        ..
    } = &err
    else {
        panic!("expected an uninitialised read, got {err}")
    };
    assert_eq!((*kernel, *thread, *offset), ("emu_uninit", [4, 0, 0], 20));
    // The pointer form names the element by its declared type too.
    assert_eq!(
        element.as_ref().map(|e| e.to_string()).as_deref(),
        Some("element [5] of type `u32`")
    );
    assert_eq!(location.line, probe_line("shared::read(s.add(((t + 1)", 0));
    println!("planted uninitialised read: {err}");
}

/// Runs [`probe::emu_transpose`] on a 64×64 matrix (one block per row of tiles, so each
/// block transposes four tiles through the same shared tile) with `skip`.
fn transpose(skip: u32, options: &EmuOptions) -> (Result<emu::EmuReport, EmuError>, Vec<f32>) {
    let n = 64usize;
    let input: Vec<f32> = (0..n * n).map(|i| i as f32).collect();
    let mut out = vec![0f32; n * n];
    let grid = [1, (n / probe::EMU_TILE) as u32, 1];
    let result = emulate!(probe::emu_transpose, grid, [16, 16, 1], 0, options;
        slice(&input), slice_mut(&mut out), n as u32, skip);
    let expected: Vec<f32> = (0..n * n).map(|i| ((i % n) * n + i / n) as f32).collect();
    if result.is_ok() {
        assert_eq!(out, expected, "the transpose");
    }
    (result, out)
}

/// The access sites of [`probe::emu_transpose`]: the tile's write and its transposed read.
fn transpose_sites() -> (u32, u32) {
    (
        probe_line_in("fn emu_transpose", "tile[ty][tx] = input", 0),
        probe_line_in("fn emu_transpose", "tile[tx][ty]", 0),
    )
}

#[test]
fn transpose_through_an_indexed_tile_is_clean_with_its_barriers() {
    let (result, _) = transpose(probe::SKIP_NONE, &opts());
    result.unwrap_or_else(|e| panic!("the correct transpose: {e}"));
}

#[test]
fn transpose_missing_the_barrier_after_its_reads_is_a_race_naming_both_sites() {
    let (result, _) = transpose(probe::SKIP_AFTER_READ, &opts());
    let err = result.expect_err("the race is reported");
    let EmuError::SharedRace {
        kernel,
        offset,
        element,
        first,
        second,
        allocation,
        ..
    } = &err
    else {
        panic!("expected a race, got {err}")
    };
    let (write, read) = transpose_sites();
    // Thread (1, 0) writes element [0][1] of the second tile while thread (0, 1) has yet to
    // read it from the first.
    assert_eq!((*kernel, *offset), ("emu_transpose", 4));
    assert_eq!(
        element.as_ref().map(|e| e.to_string()).as_deref(),
        Some("element [0][1] of type `f32`")
    );
    assert!(
        allocation.starts_with("shared array `[[f32; EMU_TILE + 1]; EMU_TILE]` declared at ")
            && allocation.contains(PROBES_FILE),
        "{allocation}"
    );
    assert_eq!(
        (site(first), site(second)),
        (
            ([1, 0, 0], AccessKind::Write, write),
            ([0, 1, 0], AccessKind::Read, read)
        )
    );
    println!("planted race (indexed tile): {err}");
}

#[test]
fn transpose_missing_the_barrier_before_its_reads_is_reported() {
    // Thread (1, 0) reads element [1][0] before thread (0, 1) writes it in the same barrier
    // interval: with every check on, and with the initialisation check off, the finding is
    // the race with both sites, not an uninitialised read (which would invite a zero fill).
    let (write, read) = transpose_sites();
    let no_uninit = emu::EmuChecks {
        uninit_reads: false,
        ..emu::EmuChecks::ALL
    };
    for checks in [emu::EmuChecks::ALL, no_uninit] {
        let (result, _) = transpose(probe::SKIP_AFTER_WRITE, &EmuOptions { checks, ..opts() });
        let err = result.expect_err("the race is reported");
        let EmuError::SharedRace {
            element,
            first,
            second,
            ..
        } = &err
        else {
            panic!("expected a race, got {err}")
        };
        assert_eq!(
            element.as_ref().map(|e| e.to_string()).as_deref(),
            Some("element [1][0] of type `f32`")
        );
        assert_eq!(
            (site(first), site(second)),
            (
                ([1, 0, 0], AccessKind::Read, read),
                ([0, 1, 0], AccessKind::Write, write)
            )
        );
        println!("planted missing barrier ({checks:?}): {err}");
    }
}

/// Runs [`probe::emu_histogram`] over `0..64` (one block of 64 threads) and checks the
/// counts on success.
fn histogram(atomic: u32) -> Result<emu::EmuReport, EmuError> {
    let input: Vec<u32> = (0..64).collect();
    let mut bins = vec![0u32; probe::EMU_BINS];
    let result = emulate!(probe::emu_histogram, [1, 1, 1], [64, 1, 1], 0, &opts();
        slice(&input), slice_mut(&mut bins), atomic);
    if result.is_ok() {
        assert_eq!(bins, vec![4u32; probe::EMU_BINS], "the histogram");
    }
    result
}

#[test]
fn histogram_with_shared_atomics_is_clean() {
    histogram(1).unwrap_or_else(|e| panic!("the atomic histogram: {e}"));
}

#[test]
fn histogram_counting_with_plus_equals_is_a_race() {
    let err = histogram(0).expect_err("the lost updates are reported");
    let EmuError::SharedRace {
        element,
        first,
        second,
        ..
    } = &err
    else {
        panic!("expected a race, got {err}")
    };
    // Threads 0 and 16 both count input values ≡ 0 (mod 16): bin 0.
    let line = probe_line_in("fn emu_histogram", "counts[d] += 1", 0);
    assert_eq!(
        element.as_ref().map(|e| e.to_string()).as_deref(),
        Some("element [0] of type `u32`")
    );
    assert_eq!(
        (site(first), site(second)),
        (
            ([0, 0, 0], AccessKind::Write, line),
            ([16, 0, 0], AccessKind::Write, line)
        )
    );
    println!("planted race (+= on a shared counter): {err}");
}

/// Runs [`probe::emu_atomic_plain_mix`] with 64 threads; on success, the count read.
fn atomic_plain_mix(plant: u32) -> Result<u32, EmuError> {
    let mut out = vec![0u32; 1];
    emulate!(probe::emu_atomic_plain_mix, [1, 1, 1], [64, 1, 1], 0, &opts();
        slice_mut(&mut out), plant)?;
    Ok(out[0])
}

#[test]
fn atomics_and_plain_accesses_ordered_by_barriers_are_clean() {
    let count = atomic_plain_mix(0).unwrap_or_else(|e| panic!("the correct twin: {e}"));
    assert_eq!(count, 64, "every thread's add");
}

#[test]
fn a_plain_read_of_a_word_others_add_to_atomically_is_a_race() {
    let err = atomic_plain_mix(1).expect_err("the unordered read is reported");
    let EmuError::SharedRace { first, second, .. } = &err else {
        panic!("expected a race, got {err}")
    };
    // Thread 0 runs first (seed 0): its add, then its plain read; thread 1's add follows.
    let read = probe_line_in("fn emu_atomic_plain_mix", "out.write(0, counter[0])", 0);
    let add = probe_line_in("fn emu_atomic_plain_mix", "atomic::fetch_add::<Block", 0);
    assert_eq!(
        (site(first), site(second)),
        (
            ([0, 0, 0], AccessKind::Read, read),
            ([1, 0, 0], AccessKind::Atomic, add)
        )
    );
    println!("planted race (plain read of an atomic counter): {err}");
}

#[test]
fn a_plain_store_to_a_word_others_add_to_atomically_is_a_race() {
    let err = atomic_plain_mix(2).expect_err("the unordered store is reported");
    // Thread 0's store, its add and its read come first (seed 0); thread 1's add follows.
    let EmuError::SharedRace { first, second, .. } = &err else {
        panic!("expected a race, got {err}")
    };
    let store = probe_line_in("fn emu_atomic_plain_mix", "counter[0] = 0", 1);
    let add = probe_line_in("fn emu_atomic_plain_mix", "atomic::fetch_add::<Block", 0);
    assert_eq!(
        (site(first), site(second)),
        (
            ([0, 0, 0], AccessKind::Write, store),
            ([1, 0, 0], AccessKind::Atomic, add)
        ),
        "{err}"
    );
    println!("planted race (plain store to an atomic counter): {err}");
}

/// Runs [`probe::emu_lost_update`] over one block of 64 threads with every check off and
/// `seed`; the count it ends with.
fn lost_update(seed: u64) -> u32 {
    let mut out = vec![0u32; 1];
    let options = EmuOptions {
        checks: emu::EmuChecks::NONE,
        seed,
        ..opts()
    };
    emulate!(probe::emu_lost_update, [1, 1, 1], [64, 1, 1], 0, &options; slice_mut(&mut out))
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    out[0]
}

#[test]
fn with_a_seed_threads_interleave_at_memory_accesses_and_updates_get_lost() {
    // Seed 0: each thread runs from barrier to barrier alone, so no update is lost.
    assert_eq!(lost_update(0), 64);
    // With a seed, threads yield before some accesses: another thread's read can fall
    // between a read and its write back, as on a GPU.
    let counts: Vec<u32> = (1..=8).map(lost_update).collect();
    assert!(
        counts.iter().any(|&c| c < 64),
        "no seed lost an update: {counts:?}"
    );
    assert!(counts.iter().all(|&c| (1..=64).contains(&c)), "{counts:?}");
    // The order is the seed's: the same seed loses the same updates.
    assert_eq!(lost_update(3), counts[2]);
    println!("counts of 64 racing increments under seeds 1-8: {counts:?}");
}

#[test]
fn the_race_check_reports_the_lost_update_under_a_seed() {
    let mut out = vec![0u32; 1];
    let options = EmuOptions { seed: 5, ..opts() };
    let err = emulate!(probe::emu_lost_update, [1, 1, 1], [64, 1, 1], 0, &options;
        slice_mut(&mut out))
    .expect_err("the unsynchronised update is a race");
    assert!(matches!(err, EmuError::SharedRace { .. }), "{err}");
}

/// Runs [`probe::emu_global_stores`] over 4 blocks of 64 threads; the output on success.
fn global_stores(plant: u32) -> Result<Vec<u32>, EmuError> {
    let mut out = vec![0u32; 4 * 64];
    emulate!(probe::emu_global_stores, [4, 1, 1], [64, 1, 1], 0, &opts();
        slice_mut(&mut out), plant)?;
    Ok(out)
}

/// The sites of a global race's two sides: (block, thread, kind, line).
fn global_sites(err: &EmuError) -> [(Dim3, Dim3, AccessKind, u32); 2] {
    let EmuError::GlobalRace { first, second, .. } = err else {
        panic!("expected a global-memory race, got {err}")
    };
    [first, second].map(|a| (a.block, a.thread, a.kind, a.location.line))
}

#[test]
fn global_stores_ordered_by_barriers_and_one_per_thread_are_clean() {
    let out = global_stores(0).unwrap_or_else(|e| panic!("the correct twin: {e}"));
    let expected: Vec<u32> = (0..4 * 64)
        .map(|i| if i % 64 == 0 { 64 } else { i % 64 })
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn two_blocks_storing_one_global_word_is_a_race() {
    let err = global_stores(1).expect_err("the stores of blocks 0 and 1 are reported");
    let line = probe_line_in("fn emu_global_stores", "out.write(0, b)", 0);
    // Blocks run on several workers, in any order: each side is thread 0 of some block at
    // the store, and the two blocks differ.
    let [first, second] = global_sites(&err);
    for side in [first, second] {
        assert_eq!(
            (side.1, side.2, side.3),
            ([0, 0, 0], AccessKind::Write, line),
            "{err}"
        );
    }
    assert_ne!(first.0, second.0, "two different blocks: {err}");
    println!("planted race (two blocks store one word): {err}");
}

#[test]
fn two_threads_of_a_block_storing_one_global_word_without_a_barrier_is_a_race() {
    let err = global_stores(2).expect_err("the stores of threads 0 and 1 are reported");
    let line = probe_line_in("fn emu_global_stores", "out.write(0, t)", 0);
    assert_eq!(
        global_sites(&err),
        [
            ([0, 0, 0], [0, 0, 0], AccessKind::Write, line),
            ([0, 0, 0], [1, 0, 0], AccessKind::Write, line)
        ],
        "{err}"
    );
    println!("planted race (two threads, one global word): {err}");
}

#[test]
fn an_atomic_and_another_blocks_plain_store_to_one_global_word_is_a_race() {
    let err = global_stores(3).expect_err("the atomic and the store are reported");
    let add = probe_line_in("fn emu_global_stores", "atomic::fetch_add::<Device", 0);
    let store = probe_line_in("fn emu_global_stores", "out.write(0, 7)", 0);
    let sites = global_sites(&err);
    // Blocks may run on different workers in either order: one side is each.
    let mut kinds = sites;
    kinds.sort_by_key(|s| s.0);
    assert_eq!(
        kinds,
        [
            ([0, 0, 0], [0, 0, 0], AccessKind::Atomic, add),
            ([1, 0, 0], [0, 0, 0], AccessKind::Write, store)
        ],
        "{err}"
    );
    println!("planted race (an atomic and a plain store, one global word): {err}");
}

/// [`probe::emu_global_stores`] with `plant` over one block of 64 threads, its output
/// 16-byte aligned (the probe loads four elements at once).
fn global_stores_aligned(plant: u32) -> Result<Vec<u32>, EmuError> {
    let mut out = Aligned64([0; 64]);
    emulate!(probe::emu_global_stores, [1, 1, 1], [64, 1, 1], 0, &opts();
        slice_mut(&mut out.0), plant)?;
    Ok(out.0.to_vec())
}

/// 64 `u32`, 16-byte aligned.
#[repr(C, align(16))]
struct Aligned64([u32; 64]);

#[test]
fn a_load_then_another_threads_store_without_a_barrier_is_a_race() {
    let err = global_stores_aligned(4).expect_err("the load and the store are reported");
    let load = probe_line_in("fn emu_global_stores", "mem::load_v4_u32(", 0);
    let store = probe_line_in("fn emu_global_stores", "out.write(0, 9)", 0);
    assert_eq!(
        global_sites(&err),
        [
            ([0, 0, 0], [0, 0, 0], AccessKind::Read, load),
            ([0, 0, 0], [1, 0, 0], AccessKind::Write, store)
        ],
        "{err}"
    );
    println!("planted race (a load, then another thread's store): {err}");
    // The twin: a barrier between them.
    let out = global_stores_aligned(5).unwrap_or_else(|e| panic!("the correct twin: {e}"));
    assert_eq!(out[..2], [9, 0]);
}

#[test]
fn an_atomic_then_another_threads_plain_load_is_a_race() {
    let err = global_stores_aligned(6).expect_err("the atomic and the load are reported");
    let add = probe_line_in("fn emu_global_stores", "atomic::fetch_add::<Device", 1);
    let load = probe_line_in("fn emu_global_stores", "mem::load_v4_u32(", 1);
    assert_eq!(
        global_sites(&err),
        [
            ([0, 0, 0], [0, 0, 0], AccessKind::Atomic, add),
            ([0, 0, 0], [1, 0, 0], AccessKind::Read, load)
        ],
        "{err}"
    );
    println!("planted race (an atomic, then another thread's plain load): {err}");
}

#[test]
fn a_store_into_a_buffer_the_kernel_holds_as_a_shared_slice_is_reported() {
    // The correct twin: input and output in two buffers.
    let input: Vec<u32> = (0..64).collect();
    let mut out = vec![0u32; 64];
    emulate!(probe::emu_add_one, [2, 1, 1], [32, 1, 1], 0, &opts();
        slice(&input), slice_mut(&mut out))
    .unwrap_or_else(|e| panic!("the correct twin: {e}"));
    assert_eq!(out, (1..=64).collect::<Vec<u32>>());
    // The planted bug: one buffer passed as both the `&[u32]` and the output. (The
    // kernel's host body then holds a `&[u32]` to memory it writes: what the check
    // exists to refuse.)
    let mut both = vec![0u32; 64];
    let whole = slice_mut(&mut both);
    let err = emulate!(probe::emu_add_one, [2, 1, 1], [32, 1, 1], 0, &opts(); whole, whole)
        .expect_err("the store into parameter 0 is reported");
    let EmuError::ReadOnlyWrite {
        kernel,
        parameter,
        offset,
        access,
        ..
    } = &err
    else {
        panic!("expected a store into a `&[T]`, got {err}")
    };
    let line = probe_line_in("fn emu_add_one", "out.write(i, input[i] + 1)", 0);
    assert_eq!(
        (
            *kernel,
            parameter.as_str(),
            access.kind,
            access.location.line
        ),
        ("emu_add_one", "parameter 0", AccessKind::Write, line),
        "{err}"
    );
    // The first store of its block, at its own element.
    assert_eq!(
        *offset as u32,
        4 * (32 * access.block[0] + access.thread[0]),
        "{err}"
    );
    assert!(
        err.to_string().contains("a `&[T]` the kernel only reads"),
        "{err}"
    );
    println!("planted store into a `&[T]`: {err}");
}

#[test]
fn an_unseeded_spin_on_plain_reads_of_a_flag_nobody_sets_is_a_livelock() {
    // Without a seed thread 0 runs alone; its long step makes the block interleave, and
    // the spin is then seen as with a seed.
    let mut out = vec![0u32; 1];
    let start = Instant::now();
    let err = emulate!(probe::emu_plain_spin, [1, 1, 1], [64, 1, 1], 0, &opts();
        slice_mut(&mut out), 0u32)
    .expect_err("reported, not a hang");
    let elapsed = start.elapsed();
    let EmuError::Livelock { spinning, .. } = &err else {
        panic!("expected a livelock, got {err}")
    };
    let [site] = &spinning[..] else {
        panic!("expected one spinning thread: {err}")
    };
    let line = probe_line_in("fn emu_plain_spin", "while word[0] == 0", 0);
    assert_eq!(
        (site.thread, site.waits_at, site.location.map(|l| l.line)),
        ([0, 0, 0], "a memory read (a busy-wait)", Some(line)),
        "{err}"
    );
    assert!(elapsed.as_secs_f64() < 10.0, "reported after {elapsed:?}");
    println!("planted livelock (plain reads, no seed): {err} (after {elapsed:?})");
}

#[test]
fn an_unseeded_spin_on_plain_reads_ends_when_another_thread_stores() {
    // Checks off: thread 1's store ends thread 0's spin (no hang).
    let mut out = vec![0u32; 1];
    let options = EmuOptions {
        checks: emu::EmuChecks::NONE,
        ..opts()
    };
    emulate!(probe::emu_plain_spin, [1, 1, 1], [32, 1, 1], 0, &options;
        slice_mut(&mut out), 1u32)
    .unwrap_or_else(|e| panic!("the spin ends: {e}"));
    assert_eq!(out, [7]);
    // Checks on: the same handover is the race it is, naming both sides.
    let err = emulate!(probe::emu_plain_spin, [1, 1, 1], [32, 1, 1], 0, &opts();
        slice_mut(&mut out), 1u32)
    .expect_err("the plain handover is a race");
    let EmuError::SharedRace { first, second, .. } = &err else {
        panic!("expected a shared-memory race, got {err}")
    };
    let read = probe_line_in("fn emu_plain_spin", "while word[0] == 0", 0);
    let write = probe_line_in("fn emu_plain_spin", "word[0] = 7", 0);
    assert_eq!(
        [
            (first.thread, first.location.line),
            (second.thread, second.location.line)
        ],
        [([0, 0, 0], read), ([1, 0, 0], write)],
        "{err}"
    );
    println!("planted race (a plain handover, no seed): {err}");
}

/// 32 `u32`, 16-byte aligned (the handover probe reads them with `mem::load_v4_u32`).
#[repr(C, align(16))]
struct Aligned32([u32; 32]);

/// Runs [`probe::emu_handover_grid`] (2 blocks of 32 threads) with `plant` and `seed`; what
/// block 1 copied on success.
fn handover_grid(plant: u32, seed: u64) -> Result<Vec<u32>, EmuError> {
    let (mut data, mut flag, mut out) = (Aligned32([0; 32]), vec![0u32; 1], vec![0u32; 32]);
    let options = EmuOptions { seed, ..opts() };
    emulate!(probe::emu_handover_grid, [2, 1, 1], [32, 1, 1], 0, &options;
        slice_mut(&mut data.0), slice_mut(&mut flag), slice_mut(&mut out), plant)?;
    Ok(out)
}

/// The values [`probe::emu_handover_grid`] and [`probe::emu_handover_block`] hand over.
fn handed_over() -> Vec<u32> {
    (100..132).collect()
}

/// Asserts that `handover` hands over [`handed_over`] cleanly with both correct patterns
/// (plant 0: release store and acquire load; 1: release fence + relaxed store, relaxed
/// load + acquire fence; both the PTX memory model's release and acquire patterns), under
/// seeds 0, 1 and 7.
fn assert_clean_handovers(handover: impl Fn(u32, u64) -> Result<Vec<u32>, EmuError>) {
    for plant in [0, 1] {
        for seed in [0, 1, 7] {
            let out =
                handover(plant, seed).unwrap_or_else(|e| panic!("plant {plant}, seed {seed}: {e}"));
            assert_eq!(out, handed_over(), "plant {plant}, seed {seed}");
        }
    }
}

#[test]
fn a_flag_handover_between_blocks_with_release_and_acquire_is_clean() {
    assert_clean_handovers(handover_grid);
}

/// Asserts that `err` is the race of a handover between blocks: block 0's thread 0 stored
/// the data, a thread of block 1 read it (which one depends on the spin's order).
fn assert_grid_handover_race(err: &EmuError) {
    let store = probe_line_in("fn emu_handover_grid", "data.write(i, 100 + i as u32)", 0);
    let load = probe_line_in("fn emu_handover_grid", "mem::load_v4_u32(", 0);
    let [first, second] = global_sites(err);
    assert_eq!(
        first,
        ([0, 0, 0], [0, 0, 0], AccessKind::Write, store),
        "{err}"
    );
    assert_eq!(
        (second.0, second.2, second.3),
        ([1, 0, 0], AccessKind::Read, load),
        "{err}"
    );
}

#[test]
fn a_flag_handover_between_blocks_without_the_writers_release_is_a_race() {
    // A relaxed flag store with no fence before it: the data may arrive after the flag.
    for seed in [0, 3] {
        let err = handover_grid(2, seed).expect_err("the unpublished data is reported");
        assert_grid_handover_race(&err);
        if seed == 0 {
            println!("planted race (handover without a release fence): {err}");
        }
    }
}

#[test]
fn a_flag_handover_between_blocks_without_the_readers_acquire_is_a_race() {
    // A relaxed load of the flag and no fence after it: the data loads may go first.
    let err = handover_grid(3, 0).expect_err("the unacquired data is reported");
    assert_grid_handover_race(&err);
    println!("planted race (handover without an acquire): {err}");
}

#[test]
fn block_scope_fences_order_nothing_between_blocks() {
    // `fence::<Block>` on both sides: a `.cta` release and acquire synchronise only threads
    // of one block.
    let err = handover_grid(4, 0).expect_err("the block-scoped handover is reported");
    assert_grid_handover_race(&err);
}

/// Runs [`probe::emu_handover_block`] (one block of 64 threads) with `plant` and `seed`;
/// what warp 0 read on success.
fn handover_block(plant: u32, seed: u64) -> Result<Vec<u32>, EmuError> {
    let mut out = vec![0u32; 32];
    let options = EmuOptions { seed, ..opts() };
    emulate!(probe::emu_handover_block, [1, 1, 1], [64, 1, 1], 0, &options;
        slice_mut(&mut out), plant)?;
    Ok(out)
}

#[test]
fn a_flag_handover_between_warps_with_release_and_acquire_is_clean() {
    // Warp 0 runs first (seed 0) and spins until thread 32 publishes.
    assert_clean_handovers(handover_block);
}

#[test]
fn a_flag_handover_between_warps_without_its_fences_is_a_race() {
    let store = probe_line_in("fn emu_handover_block", "data[i] = 100 + i as u32", 0);
    let load = probe_line_in("fn emu_handover_block", "data[t as usize]", 0);
    // 2: no release before the relaxed flag store; 3: no acquire after the relaxed loads.
    for plant in [2, 3] {
        let err = handover_block(plant, 0).expect_err("the race is reported");
        let EmuError::SharedRace { first, second, .. } = &err else {
            panic!("plant {plant}: expected a shared-memory race, got {err}")
        };
        assert_eq!(
            site(first),
            ([32, 0, 0], AccessKind::Write, store),
            "plant {plant}: {err}"
        );
        // Some thread of warp 0 (which one depends on the spin's order).
        assert!(second.thread[0] < 32, "plant {plant}: {err}");
        assert_eq!(
            (second.kind, second.location.line),
            (AccessKind::Read, load),
            "plant {plant}: {err}"
        );
        println!("planted race (handover between warps, plant {plant}): {err}");
    }
}

#[test]
fn uninitialised_read_through_indexing_names_the_element() {
    for (kernel, name) in [
        (probe::emu_uninit_indexed, "emu_uninit_indexed"),
        (probe::emu_dynamic_indexed, "emu_dynamic_indexed"),
    ] {
        let run_with = |skip: u32| {
            let mut out = vec![0u32; 32];
            let result = emulate!(kernel, [1, 1, 1], [32, 1, 1], 128, &opts();
                slice_mut(&mut out), skip);
            (result, out)
        };
        let (result, out) = run_with(32);
        result.unwrap_or_else(|e| panic!("{name}, every element written: {e}"));
        assert_eq!(out, (0..32).map(|t| (t + 1) % 32).collect::<Vec<u32>>());
        let (result, _) = run_with(5);
        let err = result.expect_err("reported");
        let EmuError::UninitRead {
            kernel,
            thread,
            offset,
            element,
            allocation,
            location,
            ..
        } = &err
        else {
            panic!("{name}: expected an uninitialised read, got {err}")
        };
        assert_eq!((*kernel, *thread, *offset), (name, [4, 0, 0], 20));
        assert_eq!(
            location.line,
            probe_line_in(&format!("fn {name}"), "out.write_at_thread(s[", 0)
        );
        if name == "emu_dynamic_indexed" {
            // Dynamic shared memory has no declared element type: the byte offset names it.
            assert_eq!(
                (allocation.as_str(), element),
                ("dynamic shared memory", &None)
            );
        } else {
            assert_eq!(
                element.as_ref().map(|e| e.to_string()).as_deref(),
                Some("element [5] of type `u32`")
            );
        }
        println!("planted uninitialised read ({name}): {err}");
    }
}

#[test]
fn divergent_barriers_are_reported_with_both_sites() {
    let mut out = vec![0u32; 32];
    let err = emulate!(probe::emu_divergent_barrier, [1, 1, 1], [32, 1, 1], 0, &opts();
        slice_mut(&mut out))
    .expect_err("reported");
    let EmuError::BarrierDivergence { waiting, other, .. } = &err else {
        panic!("expected barrier divergence, got {err}")
    };
    assert_eq!(
        (waiting.thread, waiting.waits_at),
        ([0, 0, 0], "sync_threads")
    );
    assert_eq!((other.thread, other.waits_at), ([16, 0, 0], "sync_threads"));
    let first = probe_line_in("fn emu_divergent_barrier", "sync_threads();", 0);
    assert_eq!(waiting.location.map(|l| l.line), Some(first));
    assert_eq!(
        other.location.map(|l| l.line),
        Some(probe_line_in(
            "fn emu_divergent_barrier",
            "sync_threads();",
            1
        ))
    );
    println!("planted divergent barrier: {err}");

    let err = emulate!(probe::emu_exited_at_barrier, [1, 1, 1], [32, 1, 1], 0, &opts();
        slice_mut(&mut out))
    .expect_err("reported");
    let EmuError::BarrierDivergence { waiting, other, .. } = &err else {
        panic!("expected barrier divergence, got {err}")
    };
    assert_eq!(
        (waiting.thread, other.thread, other.waits_at),
        ([0, 0, 0], [8, 0, 0], "exited")
    );
    println!("planted barrier after exit: {err}");
}

#[test]
fn warp_masks_naming_exited_or_absent_lanes_are_reported() {
    let mut out = vec![0u32; 32];
    let err = emulate!(probe::emu_shuffle_exited_lane, [1, 1, 1], [32, 1, 1], 0, &opts();
        slice_mut(&mut out))
    .expect_err("reported");
    let EmuError::WarpMask {
        thread,
        op,
        mask,
        lanes,
        reason,
        location,
        ..
    } = &err
    else {
        panic!("expected a warp mask error, got {err}")
    };
    assert_eq!(
        (*thread, *op, *mask, *lanes, *reason),
        (
            [0, 0, 0],
            "shfl_down_sync",
            u32::MAX,
            1 << 31,
            "lanes named by the mask have exited"
        )
    );
    assert_eq!(
        location.line,
        probe_line("warp::shfl_down_sync(FULL_MASK", 0)
    );
    println!("planted shuffle with an exited lane: {err}");

    let err = emulate!(probe::emu_vote_missing_lanes, [1, 1, 1], [32, 1, 1], 0, &opts();
        slice_mut(&mut out))
    .expect_err("reported");
    let EmuError::WarpMask {
        thread,
        op,
        lanes,
        reason,
        ..
    } = &err
    else {
        panic!("expected a warp mask error, got {err}")
    };
    assert_eq!(
        (*thread, *op, *lanes, *reason),
        (
            [0, 0, 0],
            "vote_any_sync",
            0xffff_0000,
            "lanes named by the mask never arrive"
        )
    );
    println!("planted vote with missing lanes: {err}");
}

#[test]
fn out_of_bounds_accesses_name_the_nearest_allocation() {
    let mut out = vec![0u32; 32];
    let err =
        emulate!(probe::emu_shared_oob, [1, 1, 1], [32, 1, 1], 64, &opts(); slice_mut(&mut out))
            .expect_err("reported");
    let EmuError::OutOfBounds {
        thread,
        size,
        kind,
        nearest,
        location,
        address,
        ..
    } = &err
    else {
        panic!("expected out of bounds, got {err}")
    };
    let (what, start, len) = *nearest.clone().expect("the dynamic allocation");
    assert_eq!((*thread, *size, *kind), ([0, 0, 0], 4, AccessKind::Read));
    assert_eq!(
        (what.as_str(), len, *address),
        ("dynamic shared memory", 64, start + 64)
    );
    assert_eq!(location.line, probe_line("shared::read(d.add(16))", 0));
    println!("planted shared out-of-bounds read: {err}");

    let mut counts = vec![0u32; 63];
    let err = emulate!(probe::emu_atomic_oob, [2, 1, 1], [32, 1, 1], 0, &opts();
        slice_mut(&mut counts))
    .expect_err("reported");
    let EmuError::OutOfBounds {
        block,
        thread,
        kind,
        nearest,
        address,
        ..
    } = &err
    else {
        panic!("expected out of bounds, got {err}")
    };
    assert_eq!(
        (*block, *thread, *kind),
        ([1, 0, 0], [31, 0, 0], AccessKind::Atomic)
    );
    assert_eq!(*address, counts.as_ptr() as usize + 63 * 4);
    assert_eq!(nearest.as_ref().map(|n| n.0.as_str()), Some("parameter 0"));
    assert!(
        counts.iter().all(|&c| c == 1),
        "the in-bounds adds happened"
    );
    println!("planted global out-of-bounds atomic: {err}");
}

#[test]
fn panics_and_assertions_name_kernel_block_and_thread() {
    let input = vec![7u32; 64];
    let mut out = vec![0u32; 64];
    let err = emulate!(probe::emu_index_panic, [2, 1, 1], [32, 1, 1], 0, &opts();
        slice(&input), slice_mut(&mut out))
    .expect_err("reported");
    let EmuError::Panic {
        kernel,
        block,
        thread,
        message,
        location,
    } = &err
    else {
        panic!("expected a panic, got {err}")
    };
    assert_eq!(
        (*kernel, *block, *thread),
        ("emu_index_panic", [1, 0, 0], [31, 0, 0])
    );
    assert_eq!(
        message,
        "index out of bounds: the len is 64 but the index is 64"
    );
    assert_eq!(
        location.map(|l| l.line),
        Some(probe_line("input[i + 1]", 0))
    );
    println!("planted index panic: {err}");

    let err = emulate!(probe::emu_assert, [3, 1, 1], [32, 1, 1], 0, &opts(); slice_mut(&mut out))
        .expect_err("reported");
    let EmuError::Assert {
        kernel,
        block,
        thread,
        condition,
        line,
        ..
    } = &err
    else {
        panic!("expected an assertion, got {err}")
    };
    assert_eq!(
        (*kernel, *block, *thread),
        ("emu_assert", [0, 0, 0], [3, 0, 0])
    );
    assert_eq!(
        (condition.as_str(), *line),
        ("t != 3", probe_line("device_assert!(t != 3)", 0))
    );
    println!("planted assertion: {err}");
}

#[test]
fn println_output_is_collected_in_block_order() {
    let mut out = vec![0u32; 96];
    let report = emulate!(probe::emu_print, [3, 1, 1], [32, 1, 1], 0, &opts(); slice_mut(&mut out))
        .unwrap_or_else(|e| panic!("{e}"));
    let texts: Vec<(Dim3, &str)> = report
        .printed
        .iter()
        .map(|p| (p.block, p.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            ([0, 0, 0], "block 0 of 3: -7 2.500\n"),
            ([1, 0, 0], "block 1 of 3: -7 2.500\n"),
            ([2, 0, 0], "block 2 of 3: -7 2.500\n"),
        ]
    );
}

#[test]
fn kernels_outside_a_launch_still_panic_as_gpu_only() {
    let err = std::panic::catch_unwind(cuda_std::thread::thread_idx_x).expect_err("panics");
    let text = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("can only be called in GPU code"), "{text}");
}

#[test]
fn external_handles_and_bad_configurations_are_refused() {
    const EXT: Kernel<(cuda_std::launch::Value<u32>,), cuda_std::launch::Unsafe> =
        Kernel::external("cu_thing");
    let err = emulate!(EXT, [1, 1, 1], [1, 1, 1], 0, &opts(); 0u32).expect_err("refused");
    assert_eq!(err, EmuError::NoHostEntry { kernel: "cu_thing" });
    let mut out = vec![0u32; 4];
    let err = emulate!(probe::emu_print, [1, 1, 1], [2048, 1, 1], 0, &opts(); slice_mut(&mut out))
        .expect_err("refused");
    assert!(matches!(err, EmuError::InvalidConfig { .. }), "{err}");
}

#[test]
fn a_flag_handed_over_in_a_block_without_nanosleep_arrives() {
    // Thread 0 spins on the flag before thread 32 has run: its atomic load lets the
    // block's other threads run, so the store comes.
    let mut out = vec![0u32; 1];
    emulate!(probe::emu_flag_handover, [1, 1, 1], [64, 1, 1], 0, &opts(); slice_mut(&mut out), 7u32)
        .expect("thread 0 sees thread 32's store");
    assert_eq!(out, [7]);
}

#[test]
fn a_spin_on_a_flag_nobody_sets_is_a_livelock_naming_the_thread_and_its_load() {
    let mut out = vec![0u32; 1];
    let start = Instant::now();
    let err =
        emulate!(probe::emu_flag_handover, [1, 1, 1], [64, 1, 1], 0, &opts(); slice_mut(&mut out), 0u32)
            .expect_err("reported, not a hang");
    let elapsed = start.elapsed();
    let EmuError::Livelock {
        kernel,
        block,
        spinning,
        elsewhere,
    } = &err
    else {
        panic!("expected a livelock, got {err}")
    };
    assert_eq!((*kernel, *block), ("emu_flag_handover", [0, 0, 0]));
    // Thread 0 alone spins; the others have exited.
    let [site] = &spinning[..] else {
        panic!("expected one spinning thread: {err}")
    };
    assert_eq!((site.thread, site.waits_at), ([0, 0, 0], "atomic::load"));
    let line = probe_line_in("fn emu_flag_handover", "flag.load(", 0);
    let location = site.location.expect("the load's call");
    assert_eq!((location.file, location.line), (PROBES_FILE, line));
    assert_eq!(*elsewhere, None);
    // Reported after one second without progress (the bound leaves room for a loaded
    // machine).
    assert!(elapsed.as_secs_f64() < 5.0, "reported after {elapsed:?}");
    println!("planted livelock: {err} (after {elapsed:?})");
}

#[test]
fn a_seeded_spin_on_plain_reads_of_a_flag_nobody_sets_is_a_livelock() {
    // With a seed a thread yields at some reads; a yield at an address it already read at
    // a recent yield, with nothing written since, is a spin, so the wait is reported.
    let mut out = vec![0u32; 1];
    let options = EmuOptions { seed: 5, ..opts() };
    let start = Instant::now();
    let err = emulate!(probe::emu_plain_spin, [1, 1, 1], [64, 1, 1], 0, &options;
        slice_mut(&mut out), 0u32)
    .expect_err("reported, not a hang");
    let elapsed = start.elapsed();
    let EmuError::Livelock {
        kernel, spinning, ..
    } = &err
    else {
        panic!("expected a livelock, got {err}")
    };
    assert_eq!(*kernel, "emu_plain_spin");
    let [site] = &spinning[..] else {
        panic!("expected one spinning thread: {err}")
    };
    assert_eq!(
        (site.thread, site.waits_at),
        ([0, 0, 0], "a memory read (a busy-wait)")
    );
    let line = probe_line_in("fn emu_plain_spin", "while word[0] == 0", 0);
    let location = site.location.expect("the read's call");
    assert_eq!((location.file, location.line), (PROBES_FILE, line));
    // After one second without progress (the bound leaves room for a loaded machine).
    assert!(elapsed.as_secs_f64() < 5.0, "reported after {elapsed:?}");
    println!("planted livelock (plain reads, seed 5): {err} (after {elapsed:?})");
}

#[test]
fn a_seeded_spin_on_an_atomic_flag_nobody_sets_is_a_livelock() {
    // The seeded yields before its loads once counted as progress and hid the spin.
    let mut out = vec![0u32; 1];
    let options = EmuOptions { seed: 3, ..opts() };
    let err = emulate!(probe::emu_flag_handover, [1, 1, 1], [64, 1, 1], 0, &options;
        slice_mut(&mut out), 0u32)
    .expect_err("reported, not a hang");
    let EmuError::Livelock { spinning, .. } = &err else {
        panic!("expected a livelock, got {err}")
    };
    let [site] = &spinning[..] else {
        panic!("expected one spinning thread: {err}")
    };
    assert_eq!(site.thread, [0, 0, 0], "{err}");
    let line = probe_line_in("fn emu_flag_handover", "flag.load(", 0);
    assert_eq!(site.location.map(|l| l.line), Some(line), "{err}");
}

#[test]
fn a_spin_lock_taken_with_compare_exchange_serialises_the_block() {
    // A failed `compare_exchange`, repeated, lets the holder (suspended at its `nanosleep`
    // inside the lock) run again.
    let mut cells = vec![0u32; 2];
    emulate!(probe::emu_spin_lock, [1, 1, 1], [256, 1, 1], 0, &opts(); slice_mut(&mut cells))
        .expect("every thread takes the lock once");
    assert_eq!(cells, [0, 256]);
}

// ---------------------------------------------------------------------------------------
// Correct kernels against CPU references

#[test]
fn block_sum_with_shuffles_shared_memory_and_atomics_matches_the_cpu() {
    let n = 100_000usize;
    let input: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let expected: u64 = input.iter().map(|&v| u64::from(v)).sum();
    let odd = input.iter().filter(|&&v| v % 2 == 1).count() as u32;
    for seed in [0, 1, 0xdead_beef] {
        let (mut total, mut odd_out) = (vec![0u64], vec![0u32]);
        let options = EmuOptions { seed, ..opts() };
        let blocks = n.div_ceil(256) as u32;
        emulate!(probe::emu_block_sum, [blocks, 1, 1], [256, 1, 1], 0, &options;
            slice(&input), slice_mut(&mut total), slice_mut(&mut odd_out))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((total[0], odd_out[0]), (expected, odd), "seed {seed}");
    }
}

#[test]
fn the_gpu_tests_vote_probe_matches_its_cpu_model() {
    let (n, block) = (256usize, 128u32);
    let input: Vec<u32> = (0..n as u32).map(|i| prim::hash32(i) & 1).collect();
    for mask in [u32::MAX, 0xffff_0000, 0x0f0f_0f0f] {
        let mut out = vec![0u32; 4 * n];
        emulate!(prim::prim_vote, [2, 1, 1], [block, 1, 1], 0, &opts();
            slice(&input), out.as_mut_ptr(), mask)
        .unwrap_or_else(|e| panic!("{e}"));
        for base in (0..n).step_by(32) {
            let ballot = (0..32)
                .filter(|l| mask & (1 << l) != 0 && input[base + l] != 0)
                .fold(0u32, |b, l| b | 1 << l);
            for l in (0..32).filter(|l| mask & (1 << l) != 0) {
                let i = base + l;
                let expected = [
                    u32::from(ballot == mask),
                    u32::from(ballot != 0),
                    ballot,
                    u32::from(ballot == mask || ballot == 0),
                ];
                assert_eq!(
                    out[4 * i..4 * i + 4],
                    expected,
                    "mask {mask:#010x}, thread {i}"
                );
            }
        }
    }
}

#[test]
fn the_gpu_tests_tiled_matmul_is_bit_identical_to_the_cpu_loop() {
    let (m, k, n) = (37usize, 53usize, 29usize);
    let a: Vec<f32> = (0..m * k).map(|i| (i % 17) as f32 * 0.25 - 2.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 13) as f32 * 0.5 - 3.0).collect();
    let expected = tests::matmul_f32(&a, &b, m, k, n);
    let mut c = vec![0f32; m * n];
    let options = EmuOptions {
        buffers: vec![HostBuffer {
            address: c.as_ptr() as usize,
            bytes: 4 * c.len(),
        }],
        ..opts()
    };
    let grid = [n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1];
    emulate!(prim::matmul_tiled_f32, grid, [16, 16, 1], 0, &options;
        slice(&a), slice(&b), c.as_mut_ptr(), m as u32, k as u32, n as u32)
    .unwrap_or_else(|e| panic!("{e}"));
    tests::assert_identical(
        "tiled matmul on the emulator",
        &tests::f32_bits(&expected),
        &tests::f32_bits(&c),
    );
}

#[test]
fn the_gpu_tests_shared_reverse_probe_reverses_each_block() {
    let n = 1024usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 1.5).collect();
    let (mut out_f, mut out_u) = (vec![0f32; n], vec![0u32; n]);
    emulate!(prim::prim_shared_reverse, [4, 1, 1], [256, 1, 1], 0, &opts();
        slice(&input), out_f.as_mut_ptr(), out_u.as_mut_ptr())
    .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..n {
        let (b, t) = (i / 256, i % 256);
        assert_eq!(out_f[i], input[b * 256 + 255 - t], "f32 at {i}");
        assert_eq!(out_u[i], 3 * (255 - t) as u32 + b as u32, "u32 at {i}");
    }
}

// ---------------------------------------------------------------------------------------
// The speed benchmark's probes (`tests/benches/emu_speed.rs` times them)

/// The benchmark's three probes (a reduction over 2^20, a 256³ tiled SGEMM, a 512×512
/// Mandelbrot tile) give the CPU's answers with every check on and with none.
#[test]
fn speed_probes_match_the_cpu() {
    let probes = speed_probes::Probes::new();
    for checks in [emu::EmuChecks::ALL, emu::EmuChecks::NONE] {
        let (_, reduce) = probes.reduce(checks);
        assert_eq!((reduce.threads, reduce.thread_steps), (65_536, 565_248));
        let (_, sgemm) = probes.sgemm(checks);
        assert_eq!((sgemm.threads, sgemm.thread_steps), (65_536, 2_162_688));
        let (_, mandelbrot) = probes.mandelbrot(checks);
        assert_eq!(
            (mandelbrot.threads, mandelbrot.thread_steps),
            (262_144, 262_144)
        );
    }
}

/// A context's emulator options reach every typed launch: the planted race is reported with
/// the checks on and passes unseen with them off, under a non-zero seed.
#[test]
// ANCHOR: emu_options
fn context_options_choose_the_seed_and_the_checks() {
    use cust::context::{Context, EmuChecks, EmulatorOptions};
    use cust::error::CudaError;
    use cust::function::LaunchConfig;
    use cust::memory::DeviceBuffer;
    use cust::module::Module;
    use cust::stream::Stream;
    for (checks, race_reported) in [(EmuChecks::ALL, true), (EmuChecks::NONE, false)] {
        let ctx = Context::emulator_with(EmulatorOptions {
            seed: 3,
            checks,
            ..EmulatorOptions::default()
        });
        let module = Module::from_image_in(&ctx, &tests::PROBES).unwrap();
        let stream = Stream::default_of(&ctx);
        let mut out = DeviceBuffer::<u32>::zeroed_in(&ctx, 32).unwrap();
        let race = module.kernel(probe::emu_race).unwrap();
        let result = race.launch(&stream, LaunchConfig::new(1, 32, 0), (&mut out,));
        match (result, race_reported) {
            (Err(CudaError::Emulator(e)), true) => {
                assert!(matches!(*e, EmuError::SharedRace { .. }), "{e}")
            }
            (Ok(()), false) => {}
            (other, _) => panic!("checks {checks:?}: {other:?}"),
        }
    }
}
// ANCHOR_END: emu_options
