//! What lives inside archives. Nothing here knows about archives or trees.

pub mod d3d12;
pub mod d3d9;
pub mod dxbc;
pub mod hlsl;
