//! DXBC containers as they carry DXIL (Shader Model 6), per `shared/formats/dxbc.md`.
//! Only the envelope is read here: the header, the part table and the program header of
//! the `DXIL` part.

pub mod container;
pub mod digest;
