//! Modules the corpus does not hold, written record by record as dxc's LLVM 3.7 writer
//! lays them out (unabbreviated), and disassembled both here and by `llvm-dis-14`: the
//! two texts must agree line for line. They cover what real programs may carry beyond
//! the corpus: 16- and 64-bit types, every binary operator, cast and comparison with
//! their flags, vectors, atomics, switches, constant expressions, globals of every
//! linkage and attribute, names that need quotes, metadata of every shape.
//!
//! `SHOW_WRITTEN=1` prints our text of each module (what to look at when one fails).

use super::disassemble;
use super::tests::{compared, llvm_dis};

/// A bitstream being written: fields packed from the least significant bit.
#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    cur: u64,
    n: u32,
}

impl Bits {
    fn emit(&mut self, v: u64, width: u32) {
        for i in 0..width {
            self.cur |= ((v >> i) & 1) << self.n;
            self.n += 1;
            if self.n == 8 {
                self.bytes.push(self.cur as u8);
                self.cur = 0;
                self.n = 0;
            }
        }
    }

    fn vbr(&mut self, mut v: u64, width: u32) {
        let data = width - 1;
        loop {
            let chunk = v & ((1 << data) - 1);
            v >>= data;
            if v == 0 {
                self.emit(chunk, width);
                return;
            }
            self.emit(chunk | 1 << data, width);
        }
    }

    fn align32(&mut self) {
        while self.n != 0 || self.bytes.len() % 4 != 0 {
            self.emit(0, 1);
        }
    }
}

/// Blocks and unabbreviated records (abbreviation width 4 in every block).
struct Writer {
    bits: Bits,
    /// Per open block: where its length word is, and the enclosing width.
    open: Vec<(usize, u32)>,
    width: u32,
}

impl Writer {
    fn new() -> Writer {
        let mut bits = Bits::default();
        for b in [0x42, 0x43, 0xC0, 0xDE] {
            bits.emit(b, 8);
        }
        Writer {
            bits,
            open: Vec::new(),
            width: 2,
        }
    }

    fn enter(&mut self, id: u64) {
        self.bits.emit(1, self.width);
        self.bits.vbr(id, 8);
        self.bits.vbr(4, 4);
        self.bits.align32();
        let at = self.bits.bytes.len();
        self.bits.emit(0, 32);
        self.open.push((at, self.width));
        self.width = 4;
    }

    fn end(&mut self) {
        self.bits.emit(0, self.width);
        self.bits.align32();
        let (at, width) = self.open.pop().expect("an open block");
        let words = ((self.bits.bytes.len() - at - 4) / 4) as u32;
        self.bits.bytes[at..at + 4].copy_from_slice(&words.to_le_bytes());
        self.width = width;
    }

    fn record(&mut self, code: u64, ops: &[u64]) {
        self.bits.emit(3, self.width);
        self.bits.vbr(code, 6);
        self.bits.vbr(ops.len() as u64, 6);
        for &o in ops {
            self.bits.vbr(o, 6);
        }
    }

    /// A record whose operands are a string's bytes after `head`.
    fn text(&mut self, code: u64, head: &[u64], s: &[u8]) {
        let mut ops = head.to_vec();
        ops.extend(s.iter().map(|&c| c as u64));
        self.record(code, &ops);
    }

    fn finish(mut self) -> Vec<u8> {
        assert!(self.open.is_empty());
        self.bits.align32();
        self.bits.bytes
    }
}

/// A signed value as bitcode stores it (the sign in bit 0).
fn s(v: i64) -> u64 {
    if v < 0 {
        ((v.unsigned_abs()) << 1) | 1
    } else {
        (v as u64) << 1
    }
}

const DATALAYOUT: &[u8] =
    b"e-m:e-p:32:32-i1:32-i8:32-i16:32-i32:32-i64:64-f16:32-f32:32-f64:64-n8:16:32:64";

/// Ours and llvm-dis-14's texts of `bitcode`, line for line (the module's name aside).
fn agree(bitcode: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let Some(reference) = llvm_dis(bitcode, dir.path()) else {
        return;
    };
    let ours = disassemble(bitcode, "written").unwrap_or_else(|e| panic!("{e}\n{reference}"));
    if std::env::var("SHOW_WRITTEN").is_ok() {
        eprintln!("{ours}");
    }
    let (want, have) = (compared(&reference), compared(&ours));
    for (i, (a, b)) in want.iter().zip(&have).enumerate() {
        assert_eq!(
            a,
            b,
            "line {}\nllvm-dis-14:\n{reference}\nours:\n{ours}",
            i + 3
        );
    }
    assert_eq!(
        want.len(),
        have.len(),
        "llvm-dis-14:\n{reference}\nours:\n{ours}"
    );
}

/// The module's header records and its type table; `types` are (code, operands).
fn header(w: &mut Writer, types: &[(u64, &[u64])], struct_names: &[(usize, &[u8])]) {
    w.enter(8);
    w.record(1, &[1]);
    w.text(2, &[], b"dxil-ms-dx");
    w.text(3, &[], DATALAYOUT);
    w.enter(17);
    w.record(1, &[types.len() as u64]);
    for (i, (code, ops)) in types.iter().enumerate() {
        if let Some((_, name)) = struct_names.iter().find(|n| n.0 == i) {
            w.text(19, &[], name);
        }
        w.record(*code, ops);
    }
    w.end();
}

/// A function record: type, calling convention, declaration or not, linkage, attributes.
fn function(w: &mut Writer, ty: u64, proto: bool, linkage: u64, attrs: u64) {
    w.record(
        8,
        &[
            ty,
            0,
            proto as u64,
            linkage,
            attrs,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ],
    );
}

fn symbols(w: &mut Writer, names: &[(u64, &[u8])], blocks: &[(u64, &[u8])]) {
    w.enter(14);
    for (id, name) in names {
        w.text(1, &[*id], name);
    }
    for (id, name) in blocks {
        w.text(2, &[*id], name);
    }
    w.end();
}

/// Every binary operator, cast and comparison with their flags, 16- and 64-bit types,
/// vectors, memory and atomic operations, calls of a varargs function, a switch, phis,
/// named and numbered values and blocks, an unreachable block.
#[test]
fn instructions_of_every_kind() {
    let mut w = Writer::new();
    let types: &[(u64, &[u64])] = &[
        (7, &[32]),                             // 0 i32
        (3, &[]),                               // 1 float
        (10, &[]),                              // 2 half
        (4, &[]),                               // 3 double
        (7, &[16]),                             // 4 i16
        (7, &[64]),                             // 5 i64
        (7, &[1]),                              // 6 i1
        (2, &[]),                               // 7 void
        (12, &[4, 1]),                          // 8 <4 x float>
        (12, &[2, 0]),                          // 9 <2 x i32>
        (8, &[0, 0]),                           // 10 i32*
        (12, &[2, 1]),                          // 11 <2 x float>
        (21, &[0, 7, 0, 1, 2, 8, 10, 6, 4, 3]), // 12 void (i32, float, half, <4 x float>, i32*, i1, i16, double)
        (18, &[0, 0, 6]),                       // 13 { i32, i1 }
        (7, &[8]),                              // 14 i8
        (8, &[0, 3]),                           // 15 i32 addrspace(3)*
        (21, &[1, 1, 1]),                       // 16 float (float, ...)
        (11, &[2, 1]),                          // 17 [2 x float]
        (20, &[0, 1, 17]),                      // 18 %S = { float, [2 x float] }
        (8, &[18, 0]),                          // 19 %S*
        (12, &[2, 6]),                          // 20 <2 x i1>
    ];
    header(&mut w, types, &[(18, b"S")]);
    function(&mut w, 12, false, 0, 0); // v0 @main
    function(&mut w, 16, true, 0, 0); // v1 @vf
    symbols(&mut w, &[(0, b"main"), (1, b"vf")], &[]);

    w.enter(12);
    w.record(1, &[5]);
    // Arguments are v2..v9; constants v10..v31.
    w.enter(11);
    w.record(1, &[0]);
    w.record(4, &[s(7)]); // v10
    w.record(4, &[s(-3)]); // v11
    w.record(4, &[s(0)]); // v12
    w.record(4, &[s(1)]); // v13
    w.record(3, &[]); // v14 undef
    w.record(1, &[1]);
    w.record(6, &[0x3F00_0000]); // v15 0.5
    w.record(6, &[0x3DCC_CCCD]); // v16 0.1
    w.record(6, &[0x7FC0_0000]); // v17 NaN
    w.record(1, &[2]);
    w.record(6, &[0x3C00]); // v18 half 1.0
    w.record(1, &[3]);
    w.record(6, &[0x3FB9_9999_9999_999A]); // v19 0.1
    w.record(6, &[0x8000_0000_0000_0000]); // v20 -0.0
    w.record(1, &[4]);
    w.record(4, &[s(-1)]); // v21 i16 -1
    w.record(1, &[5]);
    w.record(4, &[s(i64::MAX)]); // v22
    w.record(1, &[6]);
    w.record(4, &[s(1)]); // v23 true
    w.record(2, &[]); // v24 false
    w.record(1, &[9]);
    w.record(22, &[0, 3]); // v25 <2 x i32> <0, 3>
    w.record(7, &[13, 14]); // v26 <i32 1, i32 undef>
    w.record(1, &[8]);
    w.record(22, &[0x3F80_0000, 0x4000_0000, 0x4040_0000, 0x4080_0000]); // v27
    w.record(1, &[18]);
    w.record(2, &[]); // v28 %S zeroinitializer
    w.record(7, &[15, 30]); // v29 %S { 0.5, v30 }
    w.record(1, &[17]);
    w.record(7, &[15, 16]); // v30 [2 x float]
    w.record(1, &[13]);
    w.record(3, &[]); // v31 { i32, i1 } undef
    w.end();
    // Block 0 (numbered): arithmetic, casts, comparisons, vectors, memory, calls.
    w.record(2, &[30, 22, 0, 2]); // v32 add nsw %a0, 7
    w.record(2, &[1, 22, 1, 1]); // v33 sub nuw v32, -3
    w.record(2, &[1, 1, 2]); // v34 mul
    w.record(2, &[1, 25, 3, 1]); // v35 udiv exact v34, 7
    w.record(2, &[1, 25, 4]); // v36 sdiv v35, -3
    w.record(2, &[1, 27, 5]); // v37 urem v36, 7
    w.record(2, &[1, 25, 6]); // v38 srem v37, 1
    w.record(2, &[1, 26, 7, 3]); // v39 shl nuw nsw v38, 1
    w.record(2, &[1, 27, 8, 1]); // v40 lshr exact v39, 1
    w.record(2, &[1, 39, 9]); // v41 ashr v40, %a0
    w.record(2, &[1, 28, 10]); // v42 and v41, undef
    w.record(2, &[1, 31, 11]); // v43 or v42, 0
    w.record(2, &[1, 33, 12]); // v44 xor v43, -3
    w.record(2, &[42, 30, 0, 1]); // v45 fadd fast %1, 0.5
    w.record(2, &[1, 30, 1, 6]); // v46 fsub nnan ninf v45, 0.1
    w.record(2, &[1, 30, 2, 16]); // v47 fmul arcp v46, NaN
    w.record(2, &[1, 1, 4, 8]); // v48 fdiv nsz v47, v47
    w.record(2, &[45, 31, 6]); // v49 frem half %2, 1.0
    w.record(2, &[41, 31, 0, 224]); // v50 fadd contract afn reassoc double %7, 0.1
    w.record(2, &[1, 31, 1]); // v51 fsub double v50, -0.0
    w.record(3, &[8, 4, 0]); // v52 trunc v44 to i16
    w.record(3, &[1, 0, 1]); // v53 zext
    w.record(3, &[46, 5, 2]); // v54 sext %6 to i64
    w.record(3, &[7, 0, 3]); // v55 fptoui v48
    w.record(3, &[7, 4, 4]); // v56 fptosi v49 to i16
    w.record(3, &[2, 3, 5]); // v57 uitofp v55 to double
    w.record(3, &[4, 1, 6]); // v58 sitofp v54 to float
    w.record(3, &[1, 2, 7]); // v59 fptrunc to half
    w.record(3, &[1, 3, 8]); // v60 fpext to double
    w.record(3, &[3, 0, 11]); // v61 bitcast v58 to i32
    w.record(3, &[56, 0, 9]); // v62 ptrtoint %4
    w.record(3, &[1, 10, 10]); // v63 inttoptr
    w.record(28, &[3, 2, 32]); // v64 icmp eq v61, v62
    w.record(28, &[11, 43, 40]); // v65 icmp slt v54, i64 max
    w.record(28, &[14, 45, 34]); // v66 icmp ugt v52, -1
    w.record(28, &[19, 52, 14]); // v67 fcmp une v48, 0.5
    w.record(28, &[21, 52, 4, 1]); // v68 fcmp fast olt v47, 0.1
    w.record(28, &[19, 18, 7]); // v69 fcmp ord v50, v51
    w.record(28, &[21, 11, 15]); // v70 fcmp true v49, v59
    w.record(29, &[18, 61, 7]); // v71 select v64, v53, 7
    w.record(6, &[67, 59]); // v72 extractelement %3, 1
    w.record(7, &[68, 25, 61]); // v73 insertelement %3, v48, 0
    w.record(8, &[1, 47, 49]); // v74 shufflevector v73, v27, v25
    w.record(8, &[2, 2, 49]); // v75 shufflevector v73, v73, v26
    w.record(19, &[0, 0, 10, 67]); // v76 alloca i32, i32 7, align 4
    w.record(19, &[1, 0, 13, 64]); // v77 alloca float (preferred alignment)
    w.record(19, &[18, 0, 13, 69]); // v78 alloca %S, align 16
    w.record(20, &[3, 0, 0, 0]); // v79 load i32 (ABI alignment)
    w.record(20, &[3, 1, 3, 1]); // v80 load volatile float, align 4
    w.record(41, &[75, 0, 3, 0, 6, 0]); // v81 load atomic singlethread seq_cst
    w.record(44, &[6, 3, 3, 0]); // store v79, v76
    w.record(44, &[5, 34, 1, 1]); // store volatile v48, v77, align 1
    w.record(45, &[76, 1, 3, 0, 4, 1]); // store atomic v81, %4 release
    w.record(43, &[1, 18, 4, 70, 69, 69]); // v82 gep inbounds %S, v78, 0, 1, 1
    w.record(43, &[0, 0, 7, 4]); // v83 gep i32, v76, v79
    w.record(46, &[78, 5, 3, 1, 5, 0, 2, 1]); // v84 cmpxchg weak volatile
    w.record(26, &[1, 1]); // v85 extractvalue v84, 1
    w.record(27, &[55, 1, 1]); // v86 insertvalue undef, v85, 1
    w.record(38, &[81, 77, 9, 0, 6, 1]); // v87 atomicrmw umax %4, 7 seq_cst
    w.record(38, &[12, 1, 0, 1, 2, 0]); // v88 atomicrmw volatile xchg v76, v87
    w.record(36, &[3, 1]); // fence acquire
    w.record(36, &[6, 0]); // fence singlethread seq_cst
    w.record(34, &[0, 1 << 15, 16, 88, 41, 79, 39]); // v89 call @vf(v48, i32 7, double v50)
    w.record(34, &[0, 1 << 15 | 1, 16, 89, 75]); // v90 tail call @vf(0.5)
    w.record(11, &[1, 2, 84]); // br %5, then 1, 2
                               // Block 1 ("then 1"): a switch with a negative case and a repeated target.
    w.record(2, &[89, 78, 0]); // v91 add %a0, 1
    w.record(12, &[0, 1, 3, 10, 2, 11, 3, 13, 2]);
    // Block 2: a phi, then on.
    w.record(16, &[0, s(60), 0, s(1), 1]); // v92 phi [v32, 0], [v91, 1]
    w.record(11, &[3]);
    // Block 3 ("exit").
    w.record(16, &[0, s(1), 2, s(2), 1]); // v93 phi [v92, 2], [v91, 1]
    w.record(10, &[]);
    // Block 4: no predecessors.
    w.record(15, &[]);
    symbols(
        &mut w,
        &[(2, b"a0"), (32, b"sum"), (33, b"1x"), (45, b"with space")],
        &[(1, b"then 1"), (3, b"exit")],
    );
    w.end();
    w.end();
    agree(&w.finish());
}

/// Globals of every linkage, visibility, storage and address space; constants of every
/// shape (strings, packed and numbered structures, half arrays, constant expressions);
/// attribute groups with integer and string attributes, call-site groups, an attribute a
/// parameter's type cannot have (LLVM 14 drops it); unnamed globals and functions;
/// metadata strings, values, distinct and self-referencing nodes, names that need
/// escapes, custom kinds attached out of order, and an old scalar TBAA tag (upgraded).
#[test]
fn globals_constants_attributes_and_metadata() {
    agree(&globals_module(3));
    // A TBAA tag where none may be (on an add): LLVM 14 drops every tag of the module.
    agree(&globals_module(0));
}

/// The module of [`globals_constants_attributes_and_metadata`], with the old-style TBAA
/// tag on instruction `tbaa_on` (3, a load; 0, an add).
fn globals_module(tbaa_on: u64) -> Vec<u8> {
    let mut w = Writer::new();
    let types: &[(u64, &[u64])] = &[
        (7, &[32]),             // 0 i32
        (3, &[]),               // 1 float
        (7, &[8]),              // 2 i8
        (11, &[4, 2]),          // 3 [4 x i8]
        (8, &[0, 0]),           // 4 i32*
        (8, &[1, 0]),           // 5 float*
        (7, &[64]),             // 6 i64
        (8, &[0, 3]),           // 7 i32 addrspace(3)*
        (2, &[]),               // 8 void
        (7, &[16]),             // 9 i16
        (21, &[0, 8, 4, 9, 1]), // 10 void (i32*, i16, float)
        (20, &[0, 0, 1]),       // 11 %0 = { i32, float }, unnamed
        (18, &[1, 2, 0]),       // 12 <{ i8, i32 }>
        (11, &[2, 11]),         // 13 [2 x %0]
        (10, &[]),              // 14 half
        (11, &[3, 14]),         // 15 [3 x half]
        (7, &[1]),              // 16 i1
        (21, &[0, 0, 0]),       // 17 i32 (i32)
        (21, &[0, 8]),          // 18 void ()
        (8, &[17, 0]),          // 19 i32 (i32)*
    ];
    header(&mut w, types, &[]);
    // Attribute groups: [id, index (0 return, ~0 function, n parameter n-1), attrs…].
    w.enter(10);
    let mut g1 = vec![1, 0xFFFF_FFFF, 0, 18, 0, 14, 1, 25, 8, 4];
    g1.extend(b"foo".iter().map(|&c| c as u64));
    g1.push(0);
    g1.extend(b"b\"ar".iter().map(|&c| c as u64));
    g1.extend([0, 3]);
    g1.extend(b"flag".iter().map(|&c| c as u64));
    g1.push(0);
    w.record(3, &g1);
    w.record(3, &[2, 0, 0, 34]);
    w.record(3, &[3, 1, 0, 5, 0, 22]);
    w.record(3, &[4, 0xFFFF_FFFF, 0, 21, 0, 43]);
    w.record(3, &[5, 1, 0, 39, 1, 41, 16, 1, 1, 4, 0, 11]);
    w.record(3, &[6, 2, 0, 24]);
    w.record(3, &[7, 3, 0, 34]);
    w.record(3, &[8, 0xFFFF_FFFF, 0, 18]);
    w.record(3, &[9, 0xFFFF_FFFF, 0, 14, 0, 18]);
    w.record(3, &[10, 1, 0, 9]);
    w.end();
    w.enter(9);
    w.record(2, &[1, 2, 3]);
    w.record(2, &[4, 5, 6, 7]);
    w.record(2, &[8, 10]);
    w.record(2, &[9]);
    w.end();
    w.text(5, &[], b"sec\x01");
    // GLOBALVAR: [type, constant|explicit type|space<<2, init+1, linkage, align exponent,
    // section, visibility, thread local, unnamed_addr, externally initialised, dll, comdat]
    let g = |w: &mut Writer, ty, flags, init: u64, linkage, align, extra: [u64; 7]| {
        let mut ops = vec![ty, flags, init, linkage, align];
        ops.extend(extra);
        w.record(7, &ops);
    };
    let none = [0; 7];
    g(&mut w, 0, 2, 20, 3, 3, none); // v0 @g = internal global i32 5, align 4
    g(&mut w, 1, 3, 0, 0, 4, [1, 1, 4, 1, 0, 0, 0]); // v1 @"quoted name"
    g(&mut w, 3, 3, 29, 9, 1, [0, 0, 0, 1, 0, 0, 0]); // v2 @0 private
    g(&mut w, 0, 2 | 3 << 2, 21, 0, 0, none); // v3 @sg addrspace(3)
    g(&mut w, 11, 2, 31, 17, 3, [0, 0, 0, 0, 0, 2, 0]); // v4 @w weak_odr dllexport
    g(&mut w, 13, 3, 34, 19, 0, [0, 0, 0, 2, 0, 0, 0]); // v5 @arr linkonce_odr
    g(&mut w, 4, 2, 35, 0, 0, none); // v6 @ce
    g(&mut w, 12, 2, 36, 0, 0, none); // v7 @pk
    g(&mut w, 15, 2, 38, 0, 0, none); // v8 @h
    g(&mut w, 5, 2, 39, 0, 0, none); // v9 @bc
    g(&mut w, 0, 2, 27, 0, 0, none); // v10 @add
    g(&mut w, 0, 2, 23, 8, 3, none); // v11 @ac common
    g(&mut w, 0, 2, 0, 7, 0, none); // v12 @ew extern_weak
    g(&mut w, 0, 2, 24, 12, 0, none); // v13 @ai available_externally
    g(&mut w, 3, 3, 30, 3, 0, none); // v14 @str
    g(&mut w, 0, 2, 0, 0, 3, none); // v15 @ext
    function(&mut w, 17, false, 3, 1); // v16 @f
    function(&mut w, 10, true, 0, 2); // v17 @decl
    function(&mut w, 18, true, 0, 0); // v18 @1
    w.enter(11);
    w.record(1, &[0]);
    w.record(4, &[s(5)]); // v19
    w.record(3, &[]); // v20 undef
    w.record(4, &[s(1)]); // v21
    w.record(2, &[]); // v22 0
    w.record(4, &[s(3)]); // v23
    w.record(4, &[s(4)]); // v24
    w.record(11, &[9, 4, 0]); // v25 ptrtoint (i32* @g to i32)
    w.record(10, &[0, 25, 24]); // v26 add (v25, 4)
    w.record(4, &[s(2)]); // v27... (@add's initialiser is v26: init+1 = 27)
    w.record(1, &[3]);
    w.record(8, &[b'a' as u64, b'b' as u64, 0, 10]); // v28 c"ab\00\0A"
    w.record(9, &[b'x' as u64, b'"' as u64, b'\\' as u64]); // v29 c"x\22\\\00"
    w.record(1, &[11]);
    w.record(7, &[21, 31]); // v30 %0 { i32 1, float 2.0 }
    w.record(1, &[1]);
    w.record(6, &[0x4000_0000]); // v31 2.0
    w.record(6, &[0x3F00_0000]); // v32 0.5
    w.record(1, &[13]);
    w.record(2, &[]); // v33 [2 x %0] zeroinitializer
    w.record(1, &[4]);
    w.record(12, &[0, 4, 0, 0, 21]); // v34 getelementptr (i32, i32* @g, i32 1)
    w.record(1, &[12]);
    w.record(7, &[36, 27]); // v35 <{ i8 1, i32 2 }>
    w.record(1, &[2]);
    w.record(4, &[s(1)]); // v36 i8 1
    w.record(1, &[15]);
    w.record(22, &[0x3C00, 0, 0xBC00]); // v37 [3 x half]
    w.record(1, &[5]);
    w.record(11, &[11, 4, 0]); // v38 bitcast (i32* @g to float*)
    w.record(1, &[16]);
    w.record(4, &[s(1)]); // v39 true
    w.record(1, &[9]);
    w.record(4, &[s(7)]); // v40 i16 7
    w.end();
    // Metadata: ids in record order; node operands are id + 1 (0 is null).
    w.enter(15);
    w.text(1, &[], b"str \"q\"\n"); // m0
    w.record(2, &[4, 0]); // m1 i32* @g
    w.record(3, &[1, 2, 0]); // m2
    w.record(5, &[4, 3]); // m3 distinct !{!m3, !m2}
    w.record(2, &[1, 32]); // m4 float 0.5
    w.record(3, &[5]); // m5
    w.record(3, &[]); // m6 !{}
    w.text(1, &[], b"omnipotent char"); // m7
    w.record(3, &[8]); // m8
    w.text(1, &[], b"int"); // m9
    w.record(3, &[10, 9]); // m10 !{!"int", !m8}: an old scalar TBAA type
    w.record(2, &[19, 16]); // m11 i32 (i32)* @f
    w.record(3, &[12, 7]); // m12
    w.text(4, &[], b"llvm.ident");
    w.record(10, &[2]);
    w.text(4, &[], b"my named\x01");
    w.record(10, &[3, 6, 12]);
    w.text(4, &[], b"0starts");
    w.record(10, &[5]);
    w.end();
    w.enter(15);
    for (id, name) in [
        (0u64, &b"dbg"[..]),
        (1, b"tbaa"),
        (20, b"my.kind"),
        (21, b"zzz"),
        (22, b"llvm.loop"),
    ] {
        w.text(6, &[id], name);
    }
    w.end();
    symbols(
        &mut w,
        &[
            (0, b"g"),
            (1, b"quoted name"),
            (3, b"sg"),
            (4, b"w"),
            (5, b"arr"),
            (6, b"ce"),
            (7, b"pk"),
            (8, b"h"),
            (9, b"bc"),
            (10, b"add"),
            (11, b"ac"),
            (12, b"ew"),
            (13, b"ai"),
            (14, b"str"),
            (15, b"ext"),
            (16, b"f"),
            (17, b"decl"),
        ],
        &[],
    );
    // @f: v41 %x, constants v42 i32 1, v43 float 1.0.
    w.enter(12);
    w.record(1, &[2]);
    w.enter(11);
    w.record(1, &[0]);
    w.record(4, &[s(1)]);
    w.record(1, &[1]);
    w.record(6, &[0x3F80_0000]);
    w.end();
    w.record(2, &[3, 2, 0]); // v44 %y = add %x, 1
    w.record(34, &[3, 1 << 15, 10, 28, 45, 5, 2]); // call @decl(@g, i16 7, 1.0)
    w.record(34, &[4, 1 << 15, 18, 27]); // call @1()
    w.record(20, &[45, 0, 3, 0]); // v45 load i32, i32* @g
    w.record(11, &[1]); // br label %bb1
    w.record(10, &[2]); // ret %y
    w.enter(16);
    w.record(11, &[0, 21, 5, 20, 5]);
    w.record(11, &[tbaa_on, 21, 5, 1, 10, 20, 5]);
    w.record(11, &[4, 22, 3]);
    w.end();
    symbols(&mut w, &[(41, b"x"), (44, b"y")], &[(1, b"bb1")]);
    w.end();
    w.end();
    w.finish()
}

/// Aggregates LLVM reduces (all undef, all zero, nested) and those it does not (an i8
/// array with an undef element is not a string), vectors of i1 and double, i64 data,
/// null pointers beside globals, float denormals, a select of a comparison of a global's
/// address, and a packed structure of zeros.
#[test]
fn constants_as_llvm_makes_them() {
    let mut w = Writer::new();
    let types: &[(u64, &[u64])] = &[
        (7, &[32]),       // 0 i32
        (7, &[8]),        // 1 i8
        (3, &[]),         // 2 float
        (7, &[1]),        // 3 i1
        (4, &[]),         // 4 double
        (7, &[64]),       // 5 i64
        (8, &[0, 0]),     // 6 i32*
        (11, &[3, 1]),    // 7 [3 x i8]
        (11, &[2, 0]),    // 8 [2 x i32]
        (11, &[2, 8]),    // 9 [2 x [2 x i32]]
        (18, &[0, 0, 2]), // 10 { i32, float }
        (12, &[2, 3]),    // 11 <2 x i1>
        (12, &[2, 4]),    // 12 <2 x double>
        (11, &[2, 5]),    // 13 [2 x i64]
        (11, &[2, 6]),    // 14 [2 x i32*]
        (11, &[3, 2]),    // 15 [3 x float]
        (18, &[1, 0, 2]), // 16 <{ i32, float }>
    ];
    header(&mut w, types, &[]);
    for (ty, init) in [
        (7, 14),
        (8, 20),
        (10, 27),
        (11, 30),
        (12, 31),
        (13, 32),
        (9, 33),
        (14, 35),
        (0, 38),
        (15, 39),
        (16, 40),
    ] {
        w.record(7, &[ty, 2, init + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
    w.enter(11);
    w.record(1, &[1]);
    w.record(4, &[s(1)]); // v11
    w.record(3, &[]); // v12
    w.record(4, &[s(-2)]); // v13
    w.record(1, &[7]);
    w.record(7, &[11, 12, 13]); // v14 [i8 1, i8 undef, i8 -2]
    w.record(1, &[0]);
    w.record(3, &[]); // v15 undef
    w.record(4, &[s(0)]); // v16
    w.record(4, &[s(1)]); // v17
    w.record(4, &[s(2)]); // v18
    w.record(4, &[s(4)]); // v19
    w.record(1, &[8]);
    w.record(7, &[15, 15]); // v20 undef
    w.record(7, &[16, 16]); // v21 zeroinitializer
    w.record(22, &[1, 2]); // v22
    w.record(1, &[2]);
    w.record(6, &[0]); // v23 0.0
    w.record(6, &[1]); // v24 the smallest denormal
    w.record(6, &[0x5015_02F9]); // v25 1e10
    w.record(6, &[0x8000_0000]); // v26 -0.0
    w.record(1, &[10]);
    w.record(7, &[16, 23]); // v27 zeroinitializer
    w.record(1, &[3]);
    w.record(4, &[s(1)]); // v28 true
    w.record(4, &[s(0)]); // v29 false
    w.record(1, &[11]);
    w.record(7, &[28, 29]); // v30
    w.record(1, &[12]);
    w.record(22, &[1.0e-300f64.to_bits(), 0.1f64.to_bits()]); // v31
    w.record(1, &[13]);
    w.record(22, &[u64::MAX, 5]); // v32
    w.record(1, &[9]);
    w.record(7, &[21, 22]); // v33
    w.record(1, &[6]);
    w.record(2, &[]); // v34 null
    w.record(1, &[14]);
    w.record(7, &[34, 8]); // v35 [null, @k]
    w.record(1, &[0]);
    w.record(11, &[9, 6, 8]); // v36 ptrtoint (i32* @k to i32)
    w.record(1, &[3]);
    w.record(17, &[0, 36, 19, 36]); // v37 icmp ult (v36, 4)
    w.record(1, &[0]);
    w.record(13, &[37, 17, 18]); // v38 select (v37, 1, 2)
    w.record(1, &[15]);
    w.record(7, &[24, 25, 26]); // v39
    w.record(1, &[16]);
    w.record(7, &[16, 23]); // v40 <{ 0, 0.0 }>
    w.end();
    let names: Vec<(u64, Vec<u8>)> = "abcdefghknp"
        .bytes()
        .enumerate()
        .map(|(i, c)| (i as u64, vec![c]))
        .collect();
    let names: Vec<(u64, &[u8])> = names.iter().map(|(i, n)| (*i, &n[..])).collect();
    symbols(&mut w, &names, &[]);
    w.end();
    agree(&w.finish());
}

/// Two bodies; a calling convention on a definition and its call; section, alignment,
/// garbage collector, unnamed_addr, visibility and DLL storage of functions; an
/// unnamed argument beside a named one.
#[test]
fn functions_with_their_properties() {
    let mut w = Writer::new();
    let types: &[(u64, &[u64])] = &[
        (7, &[32]),          // 0 i32
        (2, &[]),            // 1 void
        (21, &[0, 0, 0, 0]), // 2 i32 (i32, i32)
        (21, &[0, 1]),       // 3 void ()
    ];
    header(&mut w, types, &[]);
    w.text(5, &[], b"s");
    w.text(11, &[], b"shadow-stack");
    w.record(8, &[2, 8, 0, 3, 0, 5, 1, 0, 1, 1, 0, 0, 0, 0, 0]); // v0 @fast
    w.record(8, &[3, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 2, 0, 0, 0]); // v1 @caller
    symbols(&mut w, &[(0, b"fast"), (1, b"caller")], &[]);
    w.enter(12);
    w.record(1, &[1]);
    w.record(2, &[2, 1, 0]); // v4 add %0, %b
    w.record(10, &[1]);
    symbols(&mut w, &[(3, b"b")], &[]);
    w.end();
    w.enter(12);
    w.record(1, &[1]);
    w.enter(11);
    w.record(1, &[0]);
    w.record(4, &[s(1)]); // v2
    w.end();
    w.record(34, &[0, 8 << 1 | 1 << 15, 2, 3, 1, 1]); // v3 call fastcc @fast(1, 1)
    w.record(10, &[]);
    w.end();
    w.end();
    agree(&w.finish());
}
