//! Tests that really mount, and drive the mount with the programs people use: ls, cat,
//! cp, mv, rm, grep, diff. They need /dev/fuse and root (or fusermount3); without them
//! they say they are skipped, except under CI=true, where that is a failure.

mod support;

mod bounds;
mod conventions;
mod d3d9_views;
mod diffing;
mod durability;
mod dxil_ir;
mod extract;
mod races;
mod safety;
mod sdp;
mod sdp_hlsl;
mod sdp_views;
mod sgd2;
mod sgd2_write;
mod sha;
mod sha_hlsl;
mod users;
