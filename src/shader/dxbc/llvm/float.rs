//! Floating-point constants as LLVM's textual IR writes them: a `float` or `double` in
//! `%e` style with six digits after the point when that text reads back as the same
//! value, otherwise the bits of the value as a `double` in hexadecimal (`0x3FB99999A0000000`
//! for `float 0.1`); `half` and `bfloat` always in hexadecimal (`0xH3C00`, `0xR3F80`).
//!
//! The decimal digits are APFloat's `toString(…, 6, 0, false)`: the exact binary value
//! is written as an integer times a power of ten, digits past what the precision needs
//! are dropped by truncation, and the last six are rounded half up. Doing it exactly
//! needs numbers of up to about 2,500 bits, held in [`Big`].

/// An unsigned integer of any size, 32-bit limbs, least significant first.
#[derive(Debug, Clone)]
struct Big(Vec<u32>);

impl Big {
    fn from(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bits(&self) -> u32 {
        match self.0.last() {
            Some(&top) => (self.0.len() as u32 - 1) * 32 + (32 - top.leading_zeros()),
            None => 0,
        }
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let v = *limb as u64 * m as u64 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    /// Divide in place, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let v = rem << 32 | *limb as u64;
            *limb = (v / d as u64) as u32;
            rem = v % d as u64;
        }
        self.trim();
        rem as u32
    }

    fn shl(&mut self, n: u32) {
        let (words, bits) = ((n / 32) as usize, n % 32);
        if bits != 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let v = *limb;
                *limb = v << bits | carry;
                carry = v >> (32 - bits);
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        if !self.0.is_empty() {
            self.0.splice(0..0, std::iter::repeat(0).take(words));
        }
    }
}

/// The IEEE formats the text writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Half,
    BFloat,
    Single,
    Double,
}

impl Format {
    /// (mantissa bits without the implicit one, exponent bits)
    fn shape(self) -> (u32, u32) {
        match self {
            Format::Half => (10, 5),
            Format::BFloat => (7, 8),
            Format::Single => (23, 8),
            Format::Double => (52, 11),
        }
    }
}

/// The text of a constant of `format` whose bits are `bits`.
pub fn constant(bits: u128, format: Format) -> String {
    match format {
        Format::Half => format!("0xH{:04X}", bits as u16),
        Format::BFloat => format!("0xR{:04X}", bits as u16),
        Format::Single | Format::Double => {
            let as_double = match format {
                Format::Single => single_to_double(bits as u32),
                _ => bits as u64,
            };
            let value = f64::from_bits(as_double);
            if value.is_finite() {
                let text = decimal(bits as u64, format);
                if text.parse::<f64>().ok() == Some(value) {
                    return text;
                }
            }
            format!("0x{as_double:X}")
        }
    }
}

/// A `float`'s bits widened to a `double`'s, NaN payloads kept (as LLVM writes them).
fn single_to_double(bits: u32) -> u64 {
    let sign = (bits >> 31) as u64;
    let exp = (bits >> 23) & 0xFF;
    let man = (bits & 0x7F_FFFF) as u64;
    if exp == 0xFF {
        return sign << 63 | 0x7FF << 52 | man << 29;
    }
    (f32::from_bits(bits) as f64).to_bits()
}

/// `APFloat::toString(Str, 6, 0, false)` for a finite value.
fn decimal(bits: u64, format: Format) -> String {
    const PRECISION: usize = 6;
    let (man_bits, exp_bits) = format.shape();
    let negative = bits >> (man_bits + exp_bits) & 1 != 0;
    let biased = (bits >> man_bits) & ((1 << exp_bits) - 1);
    let fraction = bits & ((1 << man_bits) - 1);
    let bias = (1i64 << (exp_bits - 1)) - 1;
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if biased == 0 && fraction == 0 {
        out.push_str("0.000000e+00");
        return out;
    }
    // value = significand × 2^exp
    let (mut significand, mut exp) = if biased == 0 {
        (fraction, 1 - bias - man_bits as i64)
    } else {
        (
            fraction | 1 << man_bits,
            biased as i64 - bias - man_bits as i64,
        )
    };
    let zeros = significand.trailing_zeros();
    significand >>= zeros;
    exp += zeros as i64;
    let mut big = Big::from(significand);
    if exp > 0 {
        big.shl(exp as u32);
        exp = 0;
    } else if exp < 0 {
        // N × 2^-e = N × 5^e × 10^-e
        for _ in 0..-exp {
            big.mul_small(5);
        }
    }
    // Drop the digits the precision has no use for, by truncation (AdjustToPrecision
    // on the integer): 196/59 slightly overestimates log2(10).
    let required = (PRECISION as u32 * 196).div_ceil(59);
    let bits_now = big.bits();
    if bits_now > required {
        let tens = (bits_now - required) * 59 / 196;
        exp += tens as i64;
        let mut left = tens;
        while left >= 9 {
            big.div_small(1_000_000_000);
            left -= 9;
        }
        if left > 0 {
            big.div_small(10u32.pow(left));
        }
    }
    // Digits, least significant first, trailing zeros dropped.
    let mut digits: Vec<u8> = Vec::new();
    let mut trailing = true;
    while !big.is_zero() {
        let d = big.div_small(10) as u8;
        if trailing && d == 0 {
            exp += 1;
        } else {
            digits.push(b'0' + d);
            trailing = false;
        }
    }
    // Round half up to the precision (AdjustToPrecision on the digits).
    if digits.len() > PRECISION {
        let mut first = digits.len() - PRECISION;
        if digits[first - 1] < b'5' {
            while first < digits.len() && digits[first] == b'0' {
                first += 1;
            }
            exp += first as i64;
            digits.drain(..first);
        } else {
            let n = digits.len();
            let mut carried = true;
            for d in &mut digits[first..] {
                if *d == b'9' {
                    first += 1;
                } else {
                    *d += 1;
                    carried = false;
                    break;
                }
            }
            if carried {
                exp += first as i64;
                digits = vec![b'1'];
            } else {
                exp += first as i64;
                digits.drain(..first);
                let _ = n;
            }
        }
    }
    let n = digits.len();
    exp += n as i64 - 1;
    out.push(digits[n - 1] as char);
    out.push('.');
    for &d in digits[..n - 1].iter().rev() {
        out.push(d as char);
    }
    for _ in 0..(PRECISION + 1).saturating_sub(n) {
        out.push('0');
    }
    out.push('e');
    out.push(if exp >= 0 { '+' } else { '-' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    out.push_str(&e.to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(v: f32) -> String {
        constant(v.to_bits() as u128, Format::Single)
    }

    fn double(v: f64) -> String {
        constant(v.to_bits() as u128, Format::Double)
    }

    /// What `llvm-dis` prints for these constants.
    #[test]
    fn as_llvm_writes_them() {
        assert_eq!(single(0.0), "0.000000e+00");
        assert_eq!(single(-0.0), "-0.000000e+00");
        assert_eq!(single(1.0), "1.000000e+00");
        assert_eq!(single(2.0), "2.000000e+00");
        assert_eq!(single(0.5), "5.000000e-01");
        assert_eq!(single(-1.5), "-1.500000e+00");
        assert_eq!(single(255.0), "2.550000e+02");
        assert_eq!(single(1.0e10), "1.000000e+10");
        assert_eq!(single(0.1), "0x3FB99999A0000000");
        assert_eq!(single(0.2), "0x3FC99999A0000000");
        assert_eq!(single(1.0 / 3.0), "0x3FD5555560000000");
        assert_eq!(single(f32::INFINITY), "0x7FF0000000000000");
        assert_eq!(single(f32::NEG_INFINITY), "0xFFF0000000000000");
        assert_eq!(single(f32::NAN), "0x7FF8000000000000");
        assert_eq!(double(0.1), "1.000000e-01");
        assert_eq!(double(1.0e-300), "1.000000e-300");
        assert_eq!(double(1.0 / 3.0), "0x3FD5555555555555");
        // Checked with llvm-as-14 and llvm-dis-14.
        assert_eq!(double(123456.5), "0x40FE240800000000");
        assert_eq!(double(f64::from_bits(1)), "4.940660e-324");
        assert_eq!(double(999999.5), "0x412E847F00000000");
        assert_eq!(double(1.0e300), "1.000000e+300");
        assert_eq!(double(2.5e-5), "2.500000e-05");
        assert_eq!(double(99.5), "9.950000e+01");
        assert_eq!(double(-0.0), "-0.000000e+00");
        assert_eq!(single(f32::from_bits(1)), "0x36A0000000000000");
        assert_eq!(single(f32::MAX), "0x47EFFFFFE0000000");
        assert_eq!(constant(0x3C00, Format::Half), "0xH3C00");
    }

    #[test]
    fn big_arithmetic() {
        let mut b = Big::from(1);
        b.shl(100);
        assert_eq!(b.bits(), 101);
        for _ in 0..100 {
            assert_eq!(b.div_small(2), 0);
        }
        assert_eq!(b.0, [1]);
    }
}
