//! libFuzzer's input to [`shaderfs_fuzz::hlsl_compile`], which says what it drives.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shaderfs_fuzz::hlsl_compile(data));
