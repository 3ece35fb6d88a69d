//! shaderfs: game shader archives as directory trees.
//!
//! Layers, each blind to the ones above it (see `../shared/DESIGN.md`):
//! - [`shader`]: what lives inside archives (D3D9 bytecode, CTAB, …); knows no archive.
//! - [`archive`]: one module per archive format; fills the format-free tree of [`vfs`].
//! - [`vfs`]: the virtual tree, inode numbers, write buffers and atomic commit.
//! - [`fuse`]: the fuser adapter over [`vfs`]; knows no format.

pub mod archive;
pub mod fuse;
pub mod kernel_mount;
pub mod mount;
pub mod mountinfo;
pub mod shader;
pub mod tuning;
pub mod uring;
pub mod vfs;

/// Where tests and benchmarks find `../shared/corpus` (the unit tests, `mount-tests/`,
/// `benches/`): one rule for skipping and for failing under CI.
#[doc(hidden)]
pub mod test_corpus;
