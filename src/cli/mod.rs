//! The commands of the `shaderfs` binary, apart from `mount` and `umount` (which live in
//! the library's `mount`): the tree read without FUSE, loose files, and test data. Each
//! returns a [`shaderfs::mount::Failure`] that `main` turns into a message and an exit
//! status.

pub mod check;
pub mod compile;
pub mod dev;
pub mod extract;
pub mod loose;
pub mod output;
pub mod run;
pub mod tree;
