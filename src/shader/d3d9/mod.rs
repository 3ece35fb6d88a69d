//! Direct3D 9 shader bytecode (SM 1.0–3.0), per `shared/formats/d3d9-bytecode.md`.
pub mod ctab;
