//! libFuzzer's input to [`shaderfs_fuzz::d3d9_decompile`], which says what it drives.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shaderfs_fuzz::d3d9_decompile(data));
