//! The numbers of the bitcode format and the names LLVM's textual IR gives them: block
//! ids, record codes (named in errors), opcodes, predicates, orderings, attribute kinds
//! and fixed metadata kinds. From LLVM's `include/llvm/Bitcode/LLVMBitCodes.h` (codes are
//! only ever appended, so LLVM 14's list reads 3.7 bitcode) and, for what the printed
//! text depends on, LLVM 14's `Attributes.td` and `FixedMetadataKinds.def`.

pub const BLOCKINFO: u32 = 0;
pub const MODULE: u32 = 8;
pub const PARAMATTR: u32 = 9;
pub const PARAMATTR_GROUP: u32 = 10;
pub const CONSTANTS: u32 = 11;
pub const FUNCTION: u32 = 12;
pub const IDENTIFICATION: u32 = 13;
pub const VALUE_SYMTAB: u32 = 14;
pub const METADATA: u32 = 15;
pub const METADATA_ATTACHMENT: u32 = 16;
pub const TYPES: u32 = 17;
pub const USELIST: u32 = 18;
pub const OPERAND_BUNDLE_TAGS: u32 = 21;
pub const METADATA_KIND: u32 = 22;
pub const STRTAB: u32 = 23;
pub const SYNC_SCOPE_NAMES: u32 = 26;

/// A block's name as `llvm-bcanalyzer` prints it.
pub fn block_name(id: u32) -> String {
    let name = match id {
        BLOCKINFO => "BLOCKINFO_BLOCK",
        MODULE => "MODULE_BLOCK",
        PARAMATTR => "PARAMATTR_BLOCK",
        PARAMATTR_GROUP => "PARAMATTR_GROUP_BLOCK",
        CONSTANTS => "CONSTANTS_BLOCK",
        FUNCTION => "FUNCTION_BLOCK",
        IDENTIFICATION => "IDENTIFICATION_BLOCK",
        VALUE_SYMTAB => "VALUE_SYMTAB_BLOCK",
        METADATA => "METADATA_BLOCK",
        METADATA_ATTACHMENT => "METADATA_ATTACHMENT_BLOCK",
        TYPES => "TYPE_BLOCK",
        USELIST => "USELIST_BLOCK",
        OPERAND_BUNDLE_TAGS => "OPERAND_BUNDLE_TAGS_BLOCK",
        METADATA_KIND => "METADATA_KIND_BLOCK",
        STRTAB => "STRTAB_BLOCK",
        SYNC_SCOPE_NAMES => "SYNC_SCOPE_NAMES_BLOCK",
        u32::MAX => return "the top level".into(),
        _ => return format!("block {id}"),
    };
    name.into()
}

/// A record's name within its block, as `llvm-bcanalyzer` prints it, with its code.
pub fn record_name(block: u32, code: u32) -> String {
    let table: &[&str] = match block {
        MODULE => &[
            "",
            "VERSION",
            "TRIPLE",
            "DATALAYOUT",
            "ASM",
            "SECTIONNAME",
            "DEPLIB",
            "GLOBALVAR",
            "FUNCTION",
            "ALIAS_OLD",
            "",
            "GCNAME",
            "COMDAT",
            "VSTOFFSET",
            "ALIAS",
            "METADATA_VALUES_UNUSED",
            "SOURCE_FILENAME",
            "HASH",
            "IFUNC",
        ],
        PARAMATTR => &["", "ENTRY_OLD", "ENTRY"],
        PARAMATTR_GROUP => &["", "", "", "ENTRY"],
        TYPES => &[
            "",
            "NUMENTRY",
            "VOID",
            "FLOAT",
            "DOUBLE",
            "LABEL",
            "OPAQUE",
            "INTEGER",
            "POINTER",
            "FUNCTION_OLD",
            "HALF",
            "ARRAY",
            "VECTOR",
            "X86_FP80",
            "FP128",
            "PPC_FP128",
            "METADATA",
            "X86_MMX",
            "STRUCT_ANON",
            "STRUCT_NAME",
            "STRUCT_NAMED",
            "FUNCTION",
            "TOKEN",
            "BFLOAT",
            "X86_AMX",
            "OPAQUE_POINTER",
        ],
        CONSTANTS => &[
            "",
            "SETTYPE",
            "NULL",
            "UNDEF",
            "INTEGER",
            "WIDE_INTEGER",
            "FLOAT",
            "AGGREGATE",
            "STRING",
            "CSTRING",
            "CE_BINOP",
            "CE_CAST",
            "CE_GEP",
            "CE_SELECT",
            "CE_EXTRACTELT",
            "CE_INSERTELT",
            "CE_SHUFFLEVEC",
            "CE_CMP",
            "INLINEASM_OLD",
            "CE_SHUFVEC_EX",
            "CE_INBOUNDS_GEP",
            "BLOCKADDRESS",
            "DATA",
            "INLINEASM_OLD2",
            "CE_GEP_WITH_INRANGE_INDEX",
            "CE_UNOP",
            "POISON",
            "DSO_LOCAL_EQUIVALENT",
            "INLINEASM_OLD3",
            "NO_CFI_VALUE",
            "INLINEASM",
        ],
        FUNCTION => &[
            "",
            "DECLAREBLOCKS",
            "INST_BINOP",
            "INST_CAST",
            "INST_GEP_OLD",
            "INST_SELECT",
            "INST_EXTRACTELT",
            "INST_INSERTELT",
            "INST_SHUFFLEVEC",
            "INST_CMP",
            "INST_RET",
            "INST_BR",
            "INST_SWITCH",
            "INST_INVOKE",
            "",
            "INST_UNREACHABLE",
            "INST_PHI",
            "",
            "",
            "INST_ALLOCA",
            "INST_LOAD",
            "",
            "",
            "INST_VAARG",
            "INST_STORE_OLD",
            "",
            "INST_EXTRACTVAL",
            "INST_INSERTVAL",
            "INST_CMP2",
            "INST_VSELECT",
            "INST_INBOUNDS_GEP_OLD",
            "INST_INDIRECTBR",
            "",
            "DEBUG_LOC_AGAIN",
            "INST_CALL",
            "DEBUG_LOC",
            "INST_FENCE",
            "INST_CMPXCHG_OLD",
            "INST_ATOMICRMW_OLD",
            "INST_RESUME",
            "INST_LANDINGPAD_OLD",
            "INST_LOADATOMIC",
            "INST_STOREATOMIC_OLD",
            "INST_GEP",
            "INST_STORE",
            "INST_STOREATOMIC",
            "INST_CMPXCHG",
            "INST_LANDINGPAD",
            "INST_CLEANUPRET",
            "INST_CATCHRET",
            "INST_CATCHPAD",
            "INST_CLEANUPPAD",
            "INST_CATCHSWITCH",
            "",
            "",
            "OPERAND_BUNDLE",
            "INST_UNOP",
            "INST_CALLBR",
            "INST_FREEZE",
            "INST_ATOMICRMW",
        ],
        VALUE_SYMTAB => &["", "ENTRY", "BBENTRY", "FNENTRY", "", "COMBINED_ENTRY"],
        METADATA | METADATA_KIND | METADATA_ATTACHMENT => &[
            "",
            "STRING_OLD",
            "VALUE",
            "NODE",
            "NAME",
            "DISTINCT_NODE",
            "KIND",
            "LOCATION",
            "OLD_NODE",
            "OLD_FN_NODE",
            "NAMED_NODE",
            "ATTACHMENT",
            "GENERIC_DEBUG",
            "SUBRANGE",
            "ENUMERATOR",
            "BASIC_TYPE",
            "FILE",
            "DERIVED_TYPE",
            "COMPOSITE_TYPE",
            "SUBROUTINE_TYPE",
            "COMPILE_UNIT",
            "SUBPROGRAM",
            "LEXICAL_BLOCK",
            "LEXICAL_BLOCK_FILE",
            "NAMESPACE",
            "TEMPLATE_TYPE",
            "TEMPLATE_VALUE",
            "GLOBAL_VAR",
            "LOCAL_VAR",
            "EXPRESSION",
            "OBJC_PROPERTY",
            "IMPORTED_ENTITY",
            "MODULE",
            "MACRO",
            "MACRO_FILE",
            "STRINGS",
            "GLOBAL_DECL_ATTACHMENT",
            "GLOBAL_VAR_EXPR",
            "INDEX_OFFSET",
            "INDEX",
            "LABEL",
            "STRING_TYPE",
            "",
            "",
            "COMMON_BLOCK",
            "GENERIC_SUBRANGE",
            "ARG_LIST",
        ],
        USELIST => &["", "DEFAULT", "BB"],
        _ => &[],
    };
    match table.get(code as usize) {
        Some(name) if !name.is_empty() => format!("{name} (code {code})"),
        _ => format!("record code {code}"),
    }
}

/// `BinaryOpcodes`, with the floating-point opcode where the type is floating point.
pub fn binary_opcode(code: u64, float: bool) -> Option<&'static str> {
    Some(match (code, float) {
        (0, false) => "add",
        (0, true) => "fadd",
        (1, false) => "sub",
        (1, true) => "fsub",
        (2, false) => "mul",
        (2, true) => "fmul",
        (3, false) => "udiv",
        (4, false) => "sdiv",
        (4, true) => "fdiv",
        (5, false) => "urem",
        (6, false) => "srem",
        (6, true) => "frem",
        (7, false) => "shl",
        (8, false) => "lshr",
        (9, false) => "ashr",
        (10, false) => "and",
        (11, false) => "or",
        (12, false) => "xor",
        _ => return None,
    })
}

/// `CastOpcodes`.
pub const CASTS: [&str; 13] = [
    "trunc",
    "zext",
    "sext",
    "fptoui",
    "fptosi",
    "uitofp",
    "sitofp",
    "fptrunc",
    "fpext",
    "ptrtoint",
    "inttoptr",
    "bitcast",
    "addrspacecast",
];

/// `CmpInst::Predicate`: floating point 0–15, integer 32–41.
pub fn predicate(p: u64) -> Option<&'static str> {
    const FLOAT: [&str; 16] = [
        "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "uno", "ueq", "ugt", "uge",
        "ult", "ule", "une", "true",
    ];
    const INT: [&str; 10] = [
        "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle",
    ];
    match p {
        0..=15 => Some(FLOAT[p as usize]),
        32..=41 => Some(INT[p as usize - 32]),
        _ => None,
    }
}

/// `AtomicOrderingCodes` (0, not atomic, has no name).
pub fn ordering(code: u64) -> Option<&'static str> {
    Some(match code {
        1 => "unordered",
        2 => "monotonic",
        3 => "acquire",
        4 => "release",
        5 => "acq_rel",
        6 => "seq_cst",
        _ => return None,
    })
}

/// `RMWOperations`.
pub const RMW: [&str; 13] = [
    "xchg", "add", "sub", "and", "nand", "or", "xor", "max", "min", "umax", "umin", "fadd", "fsub",
];

/// What an attribute carries besides its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrClass {
    Enum,
    /// Printed with the parameter's pointee type (LLVM 14 gives `byval` and its kind a
    /// type where old bitcode has none).
    Type,
    Int,
}

/// An attribute kind: its bitcode code (`AttributeKindCodes`), its place in LLVM 14's
/// `Attribute::AttrKind` (attributes sort by it) and its name.
pub struct AttrKind {
    pub code: u64,
    pub order: u32,
    pub name: &'static str,
    pub class: AttrClass,
}

const fn kind(code: u64, order: u32, name: &'static str, class: AttrClass) -> AttrKind {
    AttrKind {
        code,
        order,
        name,
        class,
    }
}

use AttrClass::{Enum as E, Int as I, Type as T};

/// Every attribute kind LLVM 14 reads, ordered by bitcode code.
pub const ATTR_KINDS: &[AttrKind] = &[
    kind(1, 73, "align", I),
    kind(2, 1, "alwaysinline", E),
    kind(3, 68, "byval", T),
    kind(4, 12, "inlinehint", E),
    kind(5, 9, "inreg", E),
    kind(6, 14, "minsize", E),
    kind(7, 16, "naked", E),
    kind(8, 17, "nest", E),
    kind(9, 18, "noalias", E),
    kind(10, 19, "nobuiltin", E),
    kind(11, 21, "nocapture", E),
    kind(12, 23, "noduplicate", E),
    kind(13, 25, "noimplicitfloat", E),
    kind(14, 26, "noinline", E),
    kind(15, 36, "nonlazybind", E),
    kind(16, 30, "noredzone", E),
    kind(17, 31, "noreturn", E),
    kind(18, 35, "nounwind", E),
    kind(19, 40, "optsize", E),
    kind(20, 42, "readnone", E),
    kind(21, 43, "readonly", E),
    kind(22, 44, "returned", E),
    kind(23, 45, "returns_twice", E),
    kind(24, 46, "signext", E),
    kind(25, 77, "alignstack", I),
    kind(26, 56, "ssp", E),
    kind(27, 57, "sspreq", E),
    kind(28, 58, "sspstrong", E),
    kind(29, 72, "sret", T),
    kind(30, 48, "sanitize_address", E),
    kind(31, 52, "sanitize_thread", E),
    kind(32, 51, "sanitize_memory", E),
    kind(33, 63, "uwtable", E),
    kind(34, 66, "zeroext", E),
    kind(35, 3, "builtin", E),
    kind(36, 4, "cold", E),
    kind(37, 41, "optnone", E),
    kind(38, 70, "inalloca", T),
    kind(39, 37, "nonnull", E),
    kind(40, 13, "jumptable", E),
    kind(41, 75, "dereferenceable", I),
    kind(42, 76, "dereferenceable_or_null", I),
    kind(43, 5, "convergent", E),
    kind(44, 47, "safestack", E),
    kind(45, 2, "argmemonly", E),
    kind(46, 62, "swiftself", E),
    kind(47, 61, "swifterror", E),
    kind(48, 29, "norecurse", E),
    kind(49, 10, "inaccessiblememonly", E),
    kind(50, 11, "inaccessiblemem_or_argmemonly", E),
    kind(51, 74, "allocsize", I),
    kind(52, 65, "writeonly", E),
    kind(53, 54, "speculatable", E),
    kind(54, 59, "strictfp", E),
    kind(55, 49, "sanitize_hwaddress", E),
    kind(56, 22, "nocf_check", E),
    kind(57, 39, "optforfuzzing", E),
    kind(58, 53, "shadowcallstack", E),
    kind(59, 55, "speculative_load_hardening", E),
    kind(60, 8, "immarg", E),
    kind(61, 64, "willreturn", E),
    kind(62, 24, "nofree", E),
    kind(63, 33, "nosync", E),
    kind(64, 50, "sanitize_memtag", E),
    kind(65, 71, "preallocated", T),
    kind(66, 27, "nomerge", E),
    kind(67, 38, "null_pointer_is_valid", E),
    kind(68, 34, "noundef", E),
    kind(69, 67, "byref", T),
    kind(70, 15, "mustprogress", E),
    kind(71, 20, "nocallback", E),
    kind(72, 7, "hot", E),
    kind(73, 28, "noprofile", E),
    kind(74, 78, "vscale_range", I),
    kind(75, 60, "swiftasync", E),
    kind(76, 32, "nosanitize_coverage", E),
    kind(77, 69, "elementtype", T),
    kind(78, 6, "disable_sanitizer_instrumentation", E),
];

pub fn attr_kind(code: u64) -> Option<&'static AttrKind> {
    ATTR_KINDS.iter().find(|k| k.code == code)
}

/// The attribute kind named `name`.
pub fn attr_named(name: &str) -> &'static AttrKind {
    ATTR_KINDS
        .iter()
        .find(|k| k.name == name)
        .expect("a kind of the table")
}

/// LLVM 14's fixed metadata kinds, by id; a module's other kinds follow them in the order
/// its kind records name them.
pub const FIXED_MD_KINDS: [&str; 31] = [
    "dbg",
    "tbaa",
    "prof",
    "fpmath",
    "range",
    "tbaa.struct",
    "invariant.load",
    "alias.scope",
    "noalias",
    "nontemporal",
    "llvm.mem.parallel_loop_access",
    "nonnull",
    "dereferenceable",
    "dereferenceable_or_null",
    "make.implicit",
    "unpredictable",
    "invariant.group",
    "align",
    "llvm.loop",
    "type",
    "section_prefix",
    "absolute_symbol",
    "associated",
    "callees",
    "irr_loop",
    "llvm.access.group",
    "callback",
    "llvm.preserve.access.index",
    "vcall_visibility",
    "noundef",
    "annotation",
];

/// `GlobalValue::LinkageTypes` as LLVM 14 decodes the bitcode's linkage, with its name
/// in the IR (external has none).
pub fn linkage(code: u64) -> &'static str {
    match code {
        2 => "appending",
        3 => "internal",
        7 => "extern_weak",
        8 => "common",
        9 | 13 | 14 => "private",
        12 => "available_externally",
        1 | 16 => "weak",
        10 | 17 => "weak_odr",
        4 | 18 => "linkonce",
        11 | 19 => "linkonce_odr",
        _ => "",
    }
}

/// Calling conventions with a name in the IR; others print as `cc N`.
pub fn calling_convention(cc: u64) -> String {
    match cc {
        8 => "fastcc".into(),
        9 => "coldcc".into(),
        64 => "x86_stdcallcc".into(),
        65 => "x86_fastcallcc".into(),
        66 => "arm_apcscc".into(),
        67 => "arm_aapcscc".into(),
        68 => "arm_aapcs_vfpcc".into(),
        70 => "x86_thiscallcc".into(),
        71 => "ptx_kernel".into(),
        72 => "ptx_device".into(),
        75 => "spir_func".into(),
        76 => "spir_kernel".into(),
        78 => "x86_64_sysvcc".into(),
        79 => "win64cc".into(),
        _ => format!("cc {cc}"),
    }
}
