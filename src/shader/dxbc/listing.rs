//! A program as text, the way dxc's listing (`dxc -dumpbin`) reads: a block of `;`
//! lines summing up the container (profile, signatures with dxc's "Used" column, hash,
//! pipeline runtime information, resource bindings), then the `DXIL` part's bitcode as
//! LLVM IR, equal line for line to what `llvm-dis-14` prints for it but for the
//! `; ModuleID` and `source_filename` lines ([`super::llvm`]).

use std::fmt::Write;

use super::container::{self, ContainerError, ProgramHeader};
use super::decode::{self, Decoded};
use super::llvm::{self, IrError};
use super::parts::{Direction, Element, Signature};
use super::psv::Psv;

/// Why a container has no listing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListingError {
    #[error("{0}")]
    Container(#[from] ContainerError),
    #[error("{0}")]
    NoProgram(String),
    /// The bitcode could not be read; `bitcode_at` is where it starts in the container.
    #[error("{error} (container offset {:#x})", .bitcode_at + .error.bit / 8)]
    Ir { bitcode_at: usize, error: IrError },
}

impl ListingError {
    /// Where in the container the trouble lies, where that is known.
    pub fn offset(&self) -> Option<usize> {
        match self {
            ListingError::Ir { bitcode_at, error } => Some(bitcode_at + error.bit / 8),
            _ => None,
        }
    }
}

/// The bitcode of the container's `DXIL` part, and where it starts in the container.
pub fn bitcode(bytes: &[u8]) -> Result<(usize, &[u8]), ListingError> {
    let c = container::parse(bytes)?;
    let part = c
        .part(b"DXIL")
        .ok_or_else(|| ListingError::NoProgram("the container has no DXIL part".into()))?;
    let data = &bytes[part.data.clone()];
    let header = ProgramHeader::parse(data).map_err(|e| {
        ListingError::NoProgram(format!("part DXIL at offset {:#x}: {e}", part.offset))
    })?;
    let start = part.data.start + header.bitcode.start;
    Ok((start, &data[header.bitcode]))
}

/// The listing of the container `bytes`; `name` is what the `; ModuleID` line says.
pub fn listing(bytes: &[u8], name: &str) -> Result<String, ListingError> {
    let (at, bc) = bitcode(bytes)?;
    let ir = llvm::disassemble(bc, name).map_err(|error| ListingError::Ir {
        bitcode_at: at,
        error,
    })?;
    let mut out = summary(bytes);
    out.push_str(&ir);
    Ok(out)
}

/// The leading comment block.
fn summary(bytes: &[u8]) -> String {
    let mut out = String::new();
    let Ok(p) = decode::decode_without_intrinsics(bytes) else {
        return out;
    };
    let mut line = |s: &str| {
        out.push(';');
        if !s.is_empty() {
            out.push(' ');
            out.push_str(s);
        }
        out.push('\n');
    };
    if let Some(h) = &p.program {
        line(&format!(
            "{} ({}), shader model {}, DXIL {}; {} bytes; container digest {}",
            h.profile, h.kind, h.shader_model, h.dxil_version, p.size, p.digest.status
        ));
    }
    let mut text = String::new();
    for part in &p.parts {
        match &part.decoded {
            Some(Decoded::Signature(s)) => signature(&mut text, s, &part.fourcc),
            Some(Decoded::Hash(h)) => {
                let _ = write!(text, ";\n; shader hash: {}\n", h.digest);
            }
            Some(Decoded::DebugName(d)) => {
                let _ = write!(text, ";\n; shader debug name: {}\n", d.name);
            }
            Some(Decoded::Features(f)) if !f.features.is_empty() => {
                let _ = write!(
                    text,
                    ";\n; Note: shader requires additional functionality:\n"
                );
                for name in &f.features {
                    let _ = writeln!(text, ";       {name}");
                }
            }
            _ => {}
        }
    }
    out.push_str(&text);
    if let Some(psv) = &p.facts.psv {
        runtime_info(&mut out, psv);
    }
    out.push_str(";\n");
    out
}

/// A component mask as dxc lays it out: each letter in its place.
fn positional(mask: &str) -> String {
    "xyzw"
        .chars()
        .map(|c| if mask.contains(c) { c } else { ' ' })
        .collect()
}

/// dxc's short names for system values.
fn sys_value(e: &Element) -> String {
    let short = match e.system_value.as_str() {
        "Undefined" => "NONE",
        "Position" => "POS",
        "ClipDistance" => "CLIPDST",
        "CullDistance" => "CULLDST",
        "RenderTargetArrayIndex" => "RTINDEX",
        "ViewPortArrayIndex" => "VPINDEX",
        "VertexID" => "VERTID",
        "PrimitiveID" => "PRIMID",
        "InstanceID" => "INSTID",
        "IsFrontFace" => "FFACE",
        "SampleIndex" => "SAMPLE",
        "FinalQuadEdgeTessfactor" => "QUADEDGE",
        "FinalQuadInsideTessfactor" => "QUADINT",
        "FinalTriEdgeTessfactor" => "TRIEDGE",
        "FinalTriInsideTessfactor" => "TRIINT",
        "FinalLineDetailTessfactor" => "LINEDET",
        "FinalLineDensityTessfactor" => "LINEDEN",
        "Barycentrics" => "BARYCEN",
        "ShadingRate" => "SHDINGRT",
        "CullPrimitive" => "CULLPRIM",
        "Target" => "TARGET",
        "Depth" => "DEPTH",
        "Coverage" => "COVERAGE",
        "DepthGE" => "DEPTHGE",
        "DepthLE" => "DEPTHLE",
        "StencilRef" => "STENCILREF",
        "InnerCoverage" => "INNERCOV",
        other => return other.to_ascii_uppercase(),
    };
    short.into()
}

fn format_name(component_type: &str) -> &str {
    match component_type {
        "UInt32" => "uint",
        "SInt32" => "int",
        "Float32" => "float",
        "UInt16" => "uint16",
        "SInt16" => "int16",
        "Float16" => "fp16",
        "UInt64" => "uint64",
        "SInt64" => "int64",
        "Float64" => "double",
        _ => "unknown",
    }
}

/// A signature as dxc lists it: name, index, mask, register, system value, format and
/// what the program uses (reads, for inputs; writes, for outputs).
fn signature(out: &mut String, s: &Signature, fourcc: &str) {
    let title = match (fourcc, s.direction) {
        ("ISG1", _) => "Input signature",
        ("OSG1", _) => "Output signature",
        (_, Direction::Output) => "Patch Constant signature (written)",
        _ => "Patch Constant signature (read)",
    };
    let _ = write!(
        out,
        ";\n; {title}:\n;\n; Name                 Index   Mask Register SysValue  Format   Used\n\
         ; -------------------- ----- ------ -------- -------- ------- ------\n"
    );
    if s.elements.is_empty() {
        out.push_str("; no parameters\n");
        return;
    }
    for e in &s.elements {
        let register = e.register.map_or("N/A".to_string(), |r| r.to_string());
        let used = if e.used == "-" {
            String::new()
        } else {
            e.used.clone()
        };
        let row = format!(
            "; {:<20}{:>6}   {}{:>9}{:>9}{:>8}   {}",
            e.semantic,
            e.semantic_index,
            positional(&e.mask),
            register,
            sys_value(e),
            format_name(&e.component_type),
            positional(&used),
        );
        out.push_str(row.trim_end());
        out.push('\n');
    }
}

fn runtime_info(out: &mut String, psv: &Psv) {
    out.push_str(";\n; Pipeline Runtime Information:\n;\n");
    if let Some(stage) = &psv.shader_stage {
        let _ = writeln!(out, "; stage: {stage}");
    }
    if let Some(fields) = psv.stage_info.as_object() {
        for (k, v) in fields {
            match v.as_str() {
                Some(text) => {
                    let _ = writeln!(out, "; {k}: {text}");
                }
                None => {
                    let _ = writeln!(out, "; {k}: {v}");
                }
            }
        }
    }
    if let Some([x, y, z]) = psv.num_threads.filter(|t| t.iter().any(|&n| n != 0)) {
        let _ = writeln!(out, "; numthreads: {x}, {y}, {z}");
    }
    if psv.min_wave_lane_count != 0 || psv.max_wave_lane_count.is_some() {
        let max = psv
            .max_wave_lane_count
            .map_or("any".to_string(), |m| m.to_string());
        let _ = writeln!(out, "; wave lanes: {} to {max}", psv.min_wave_lane_count);
    }
    if let Some(entry) = &psv.entry_function {
        let _ = writeln!(out, "; entry: {entry}");
    }
    out.push_str(";\n; Resource Bindings:\n;\n");
    if psv.resources.is_empty() {
        out.push_str("; none\n");
        return;
    }
    out.push_str("; Type                     Dim         HLSL Bind  Count\n");
    out.push_str("; ------------------------ ----------- ---------- -----\n");
    for r in &psv.resources {
        let class = r.class.map_or("?".to_string(), |c| c.to_string());
        let bind = if r.space == 0 {
            format!("{class}{}", r.lower_bound)
        } else {
            format!("{class}{},space{}", r.lower_bound, r.space)
        };
        let count = match r.upper_bound {
            None => "unbounded".to_string(),
            Some(u) => (u.saturating_sub(r.lower_bound) as u64 + 1).to_string(),
        };
        let row = format!(
            "; {:<24} {:<11} {:<10} {:>5}",
            r.res_type,
            r.kind.as_deref().unwrap_or("-"),
            bind,
            count
        );
        out.push_str(row.trim_end());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corpus_program_lists_as_dxc_lays_it_out() {
        let Some(dir) = crate::test_corpus::corpus("dxil") else {
            return;
        };
        let bytes = std::fs::read(dir.join("draw_vs.dxil")).unwrap();
        let text = listing(&bytes, "draw_vs.dxil").unwrap();
        let head: Vec<&str> = text.lines().take_while(|l| l.starts_with(';')).collect();
        assert!(
            head[0].starts_with("; vs_6_0 (vertex), shader model 6.0, DXIL 1.0;"),
            "{}",
            head[0]
        );
        for row in [
            "; Output signature:",
            "; Name                 Index   Mask Register SysValue  Format   Used",
            "; SV_Position              0   xyzw        0      POS   float   xyzw",
            "; TEXCOORD                 0   xy          2     NONE   float   xy",
            "; ModuleID = 'draw_vs.dxil'",
        ] {
            assert!(head.contains(&row), "{row:?} not in\n{}", head.join("\n"));
        }
        // Every leading line is a comment, and then the IR starts.
        assert!(text.contains("\nsource_filename = \"draw_vs.dxil\"\ntarget datalayout = "));
    }

    #[test]
    fn what_has_no_listing_says_why() {
        assert!(matches!(
            listing(b"DXBC", "x"),
            Err(ListingError::Container(_))
        ));
        let Some(dir) = crate::test_corpus::corpus("dxil") else {
            return;
        };
        let mut bytes = std::fs::read(dir.join("draw_vs.dxil")).unwrap();
        let (at, bc) = bitcode(&bytes).unwrap();
        let len = bc.len();
        // Words of the bitcode past its first records, made nonsense.
        for b in &mut bytes[at + len / 2..at + len / 2 + 16] {
            *b = 0xFF;
        }
        let e = listing(&bytes, "x").unwrap_err();
        let offset = e.offset().unwrap();
        assert!((at..at + len).contains(&offset), "{e}");
        assert!(e.to_string().contains("container offset"), "{e}");
    }
}
