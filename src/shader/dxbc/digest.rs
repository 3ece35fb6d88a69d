//! The container digest (`dxbc.md` §9) and the `HASH` part's MD5 (§7.2).
//!
//! Both are built on MD5's compression function (RFC 1321). The container digest feeds it
//! a non-standard final padding ("ComputeHashRetail" in DXC): the bit count comes first
//! in the final block and `2n + 1` last, and the raw state is the digest.

/// Bytes 4–20 of a container hold the digest; it covers bytes 20.. (`dxbc.md` §9.1).
pub const DIGEST_RANGE: std::ops::Range<usize> = 4..20;
const COVERED_FROM: usize = 20;

const INITIAL: [u32; 4] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476];

const SHIFTS: [[u32; 4]; 4] = [
    [7, 12, 17, 22],
    [5, 9, 14, 20],
    [4, 11, 16, 23],
    [6, 10, 15, 21],
];

/// RFC 1321's table, `K[i] = floor(|sin(i + 1)| · 2^32)` (a test recomputes it).
const K: [u32; 64] = [
    0xd76a_a478,
    0xe8c7_b756,
    0x2420_70db,
    0xc1bd_ceee,
    0xf57c_0faf,
    0x4787_c62a,
    0xa830_4613,
    0xfd46_9501,
    0x6980_98d8,
    0x8b44_f7af,
    0xffff_5bb1,
    0x895c_d7be,
    0x6b90_1122,
    0xfd98_7193,
    0xa679_438e,
    0x49b4_0821,
    0xf61e_2562,
    0xc040_b340,
    0x265e_5a51,
    0xe9b6_c7aa,
    0xd62f_105d,
    0x0244_1453,
    0xd8a1_e681,
    0xe7d3_fbc8,
    0x21e1_cde6,
    0xc337_07d6,
    0xf4d5_0d87,
    0x455a_14ed,
    0xa9e3_e905,
    0xfcef_a3f8,
    0x676f_02d9,
    0x8d2a_4c8a,
    0xfffa_3942,
    0x8771_f681,
    0x6d9d_6122,
    0xfde5_380c,
    0xa4be_ea44,
    0x4bde_cfa9,
    0xf6bb_4b60,
    0xbebf_bc70,
    0x289b_7ec6,
    0xeaa1_27fa,
    0xd4ef_3085,
    0x0488_1d05,
    0xd9d4_d039,
    0xe6db_99e5,
    0x1fa2_7cf8,
    0xc4ac_5665,
    0xf429_2244,
    0x432a_ff97,
    0xab94_23a7,
    0xfc93_a039,
    0x655b_59c3,
    0x8f0c_cc92,
    0xffef_f47d,
    0x8584_5dd1,
    0x6fa8_7e4f,
    0xfe2c_e6e0,
    0xa301_4314,
    0x4e08_11a1,
    0xf753_7e82,
    0xbd3a_f235,
    0x2ad7_d2bb,
    0xeb86_d391,
];

/// Which message word step `i` adds: the four rounds' orders.
const WORD: [usize; 64] = {
    let mut g = [0; 64];
    let mut i = 0;
    while i < 64 {
        g[i] = match i / 16 {
            0 => i,
            1 => (5 * i + 1) % 16,
            2 => (3 * i + 5) % 16,
            _ => (7 * i) % 16,
        };
        i += 1;
    }
    g
};

/// One step of round `R`; every index is a constant once the loops below unroll.
#[inline(always)]
fn step<const R: usize>(v: &mut [u32; 4], m: &[u32; 16], i: usize) {
    let [a, b, c, d] = *v;
    let f = match R {
        0 => (b & c) | (!b & d),
        1 => (d & b) | (!d & c),
        2 => b ^ c ^ d,
        _ => c ^ (b | !d),
    };
    let f = f
        .wrapping_add(a)
        .wrapping_add(K[i])
        .wrapping_add(m[WORD[i]]);
    *v = [d, b.wrapping_add(f.rotate_left(SHIFTS[R][i % 4])), b, c];
}

/// One application of MD5's compression function. Containers are hashed twice when a
/// program's JSON is rendered (the retail digest and the `HASH` part's MD5), so this is
/// written as four straight rounds the compiler unrolls, not one loop that branches on
/// the round at every step.
fn compress(state: &mut [u32; 4], block: &[u8]) {
    let m: [u32; 16] = std::array::from_fn(|i| {
        u32::from_le_bytes([
            block[4 * i],
            block[4 * i + 1],
            block[4 * i + 2],
            block[4 * i + 3],
        ])
    });
    let mut v = *state;
    for i in 0..16 {
        step::<0>(&mut v, &m, i);
    }
    for i in 16..32 {
        step::<1>(&mut v, &m, i);
    }
    for i in 32..48 {
        step::<2>(&mut v, &m, i);
    }
    for i in 48..64 {
        step::<3>(&mut v, &m, i);
    }
    for (s, x) in state.iter_mut().zip(v) {
        *s = s.wrapping_add(x);
    }
}

fn to_bytes(state: [u32; 4]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (chunk, word) in out.chunks_mut(4).zip(state) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// Standard MD5 (RFC 1321), as the `HASH` part uses it.
pub fn md5(data: &[u8]) -> [u8; 16] {
    let mut state = INITIAL;
    let whole = data.len() / 64 * 64;
    for block in data[..whole].chunks_exact(64) {
        compress(&mut state, block);
    }
    let mut tail = data[whole..].to_vec();
    tail.push(0x80);
    while tail.len() % 64 != 56 {
        tail.push(0);
    }
    tail.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_le_bytes());
    for block in tail.chunks_exact(64) {
        compress(&mut state, block);
    }
    to_bytes(state)
}

/// DXC's "ComputeHashRetail" of `data` (`dxbc.md` §9.1).
pub fn retail(data: &[u8]) -> [u8; 16] {
    let n = data.len();
    let mut state = INITIAL;
    let whole = n / 64 * 64;
    for block in data[..whole].chunks_exact(64) {
        compress(&mut state, block);
    }
    let left = &data[whole..];
    let bits = (n as u32).wrapping_mul(8);
    let tail = (n as u32).wrapping_mul(2).wrapping_add(1);
    let mut block = [0u8; 64];
    if left.len() < 56 {
        block[..4].copy_from_slice(&bits.to_le_bytes());
        block[4..4 + left.len()].copy_from_slice(left);
        block[4 + left.len()] = 0x80;
        block[60..].copy_from_slice(&tail.to_le_bytes());
        compress(&mut state, &block);
    } else {
        block[..left.len()].copy_from_slice(left);
        block[left.len()] = 0x80;
        compress(&mut state, &block);
        let mut last = [0u8; 64];
        last[..4].copy_from_slice(&bits.to_le_bytes());
        last[60..].copy_from_slice(&tail.to_le_bytes());
        compress(&mut state, &last);
    }
    to_bytes(state)
}

/// What the stored digest of a container is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signature {
    /// The retail digest of the container: what DXC's signing writes.
    Retail,
    /// 16 × `0x02`: DXC's bypass for pre-release shader models.
    PreviewBypass,
    /// 16 zero bytes: never signed.
    Unsigned,
    /// Anything else: the container was changed after it was signed, or signed wrongly.
    Mismatch,
}

impl Signature {
    pub fn as_str(self) -> &'static str {
        match self {
            Signature::Retail => "valid",
            Signature::PreviewBypass => "preview bypass (16 × 0x02)",
            Signature::Unsigned => "unsigned (zero)",
            Signature::Mismatch => "mismatch",
        }
    }
}

/// The retail digest a container of `size` bytes at the start of `bytes` should carry.
/// `size` is the container's own size field, already checked against `bytes`.
pub fn container_digest(bytes: &[u8], size: usize) -> [u8; 16] {
    retail(bytes.get(COVERED_FROM..size).unwrap_or(&[]))
}

/// Classify a container's stored digest against the one computed.
pub fn check(stored: &[u8; 16], computed: &[u8; 16]) -> Signature {
    if stored == computed {
        Signature::Retail
    } else if stored == &[2; 16] {
        Signature::PreviewBypass
    } else if stored == &[0; 16] {
        Signature::Unsigned
    } else {
        Signature::Mismatch
    }
}

/// Write the retail digest of the container of `size` bytes into `bytes` (the `-o sign`
/// of a mount: what DXC's signing would write).
pub fn sign(bytes: &mut [u8], size: usize) {
    let digest = container_digest(bytes, size);
    bytes[DIGEST_RANGE].copy_from_slice(&digest);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// DXC's `FixHashValueTest` gives the state as four words.
    fn words(bytes: [u8; 16]) -> String {
        bytes
            .chunks(4)
            .map(|c| format!("{:08x}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn md5_is_rfc_1321() {
        for (i, &k) in K.iter().enumerate() {
            assert_eq!(k, ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32);
        }
        assert_eq!(hex(&md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        let long =
            b"12345678901234567890123456789012345678901234567890123456789012345678901234567890";
        assert_eq!(hex(&md5(long)), "57edf4a22be3c955ac49da2e2107b67a");
    }

    #[test]
    fn dxc_test_vectors() {
        let alphabet = b"abcdefghijklmnopqrstuvwxyz";
        let mut mixed = Vec::new();
        for extra in [b"abcdef", b"ghijkl", b"mnopqr", b"stuvwx", b"yzabcd"] {
            mixed.extend_from_slice(alphabet);
            mixed.extend_from_slice(extra);
        }
        assert_eq!(mixed.len(), 160);
        let cases: [(&[u8], &str); 5] = [
            (b"", "f6600d14 bae275b7 d4be4a4e a1e9b201"),
            (&mixed, "00830fe6 d8d8a035 e6d62794 016629df"),
            (&[b'a'; 160], "a5e5a0bb d96dd9f8 0b4b7191 d63aa54a"),
            (&[b'z'; 160], "58ed1b7a 90ede58b f9ad857c 5440e613"),
            (&b"ab".repeat(80), "f4fc06fc 0bbd9ef7 765ae0f7 52a55925"),
        ];
        for (input, want) in cases {
            assert_eq!(words(retail(input)), want, "{} bytes", input.len());
        }
        assert_eq!(hex(&retail(b"")), "140d60f6b775e2ba4e4abed401b2e9a1");
    }

    #[test]
    fn boundary_vectors() {
        let cases = [
            (1, "2964836e48bd2a4cb17003dac0716b0a"),
            (3, "5aa7853c51e4677dc7c828e6a7a97221"),
            (55, "842e55534ba93daa93e94bd5af9b0c03"),
            (56, "00f9cc964ff2ec81959d4a3f092ce63f"),
            (57, "d05b09caf030a53741a97e95b26ad32d"),
            (63, "4400d428a41d0e75dc98b936693f7bfb"),
            (64, "f42eb06ca921c878e435e3b8d4f92b13"),
            (65, "9ce1a374e3f259448f5777113a2edb57"),
            (119, "ba3a67ecd4641ce4ed08f291896e1bc6"),
            (120, "882fce4f4c95194392e7adefd53fe343"),
            (128, "7f0468e3c7a668781a3d62e31d49bf72"),
        ];
        for (n, want) in cases {
            let data: Vec<u8> = (0..n).map(|i| (i & 0xFF) as u8).collect();
            assert_eq!(hex(&retail(&data)), want, "n = {n}");
        }
    }

    #[test]
    fn whole_container_vectors() {
        let empty = "44584243fe86074c402fc2e90e0f4fa3bf065bc0010000002000000000000000";
        let sfi0 = "44584243c929a9c1c9ac72210da691e0b065d1680100000034000000010000002400000053464930080000000040000000000000";
        for want in [empty, sfi0] {
            let bytes: Vec<u8> = (0..want.len() / 2)
                .map(|i| u8::from_str_radix(&want[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            let mut blank = bytes.clone();
            blank[DIGEST_RANGE].fill(0);
            sign(&mut blank, bytes.len());
            assert_eq!(blank, bytes);
            let stored: [u8; 16] = bytes[DIGEST_RANGE].try_into().unwrap();
            assert_eq!(
                check(&stored, &container_digest(&bytes, bytes.len())),
                Signature::Retail
            );
        }
    }
}
