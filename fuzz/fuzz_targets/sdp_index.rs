//! libFuzzer's input to [`shaderfs_fuzz::sdp_index`], which says what it drives.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shaderfs_fuzz::sdp_index(data));
