//! Writing an SGD2 database back (`sgd2.md` §10): every record re-serialised from the
//! index, with at most one program's container replaced. The record's name, tag byte,
//! 152-byte table and binding table stay as they are, programs keep their order (effects
//! address them by index), and effects are copied as stored, so everything but the
//! replaced container and its length word comes out byte-identical.

use super::read::{Index, MAGIC, STAGES};
use crate::shader::dxbc::container::{self, ProgramHeader};
use crate::shader::dxbc::digest::{self, Signature};
use crate::vfs::Rewrite;

/// A container to put in place of program `index` of `group`.
pub struct Replacement<'a> {
    pub group: usize,
    pub index: usize,
    pub container: &'a [u8],
}

/// The database `bytes` (indexed as `index`) with `replace` applied, as a [`Rewrite`]:
/// every field is a range of the stored bytes except the replaced container and its
/// length word, so the commit copies the rest inside the kernel.
pub fn serialise(bytes: &[u8], index: &Index, replace: Option<&Replacement<'_>>) -> Rewrite {
    let mut out = Rewrite::new();
    out.push(MAGIC);
    let mut at = MAGIC.len();
    for (g, group) in index.groups.iter().enumerate() {
        // The group's count word, then its records.
        out.keep(at..group.offset + 4);
        at = group.offset + 4;
        for (i, p) in group.programs.iter().enumerate() {
            match replace {
                Some(r) if r.group == g && r.index == i => {
                    // Name length, name, NUL, tag: as stored; then the new length and
                    // container.
                    out.keep(at..p.container().start - 4);
                    out.push(&(r.container.len() as u32).to_le_bytes());
                    out.push(r.container);
                    out.keep(p.container().end..p.bindings().end);
                }
                _ => out.keep(at..p.bindings().end),
            }
            at = p.bindings().end;
        }
    }
    out.keep(at..bytes.len());
    out
}

/// The largest container a save may hold: the game's largest programs are tens of
/// kilobytes; this leaves room for any compute shader DXC writes.
pub const MAX_CONTAINER_LEN: usize = 16 << 20;

/// Check a container written over a program of `group` (`dxbc.md` §2, §4, §9): the
/// envelope DXC would accept, a `DXIL` part whose program is of the group's stage, and a
/// digest that verifies. With `sign`, a wrong digest is replaced by the retail one (and
/// a `HASH` part that is not the bitcode's MD5 by the MD5). Returns the container to
/// store.
pub fn check_container(data: &[u8], group: usize, sign: bool) -> Result<Vec<u8>, String> {
    // Checked before anything is parsed or copied: a runaway write is refused at its size.
    if data.len() > MAX_CONTAINER_LEN {
        return Err(format!(
            "{} bytes: a program of more than {} MiB is no shader the game loads",
            data.len(),
            MAX_CONTAINER_LEN >> 20
        ));
    }
    let c = container::parse(data).map_err(|e| e.to_string())?;
    if c.size as usize != data.len() {
        return Err(format!(
            "{} bytes after the container's end (its size field at offset 0x18 says {})",
            data.len() - c.size as usize,
            c.size
        ));
    }
    let part = c
        .part(b"DXIL")
        .ok_or("no DXIL part: an SGD2 program is a DXIL program")?;
    let header = ProgramHeader::parse(&data[part.data.clone()])
        .map_err(|e| format!("the DXIL part at offset {:#x}: {e}", part.offset))?;
    if let Some(stage) = STAGES.get(group) {
        let kind = container::kind_name(header.version.kind);
        if kind != *stage {
            return Err(format!(
                "a {kind} program ({}) cannot replace a {stage} program",
                header.version.profile()
            ));
        }
    }
    let computed = digest::container_digest(data, data.len());
    let mut stored = [0u8; 16];
    stored.copy_from_slice(&data[digest::DIGEST_RANGE]);
    let status = digest::check(&stored, &computed);
    if status == Signature::Retail {
        return Ok(data.to_vec());
    }
    if sign {
        // As DXC would write it: the HASH part (the bitcode's MD5, `dxbc.md` §7.2) where
        // the bitcode changed, then the container digest over everything (§9).
        let mut signed = data.to_vec();
        if let Some(hash) = c.part(b"HASH") {
            let bitcode =
                part.data.start + header.bitcode.start..part.data.start + header.bitcode.end;
            let flags = &data[hash.data.clone()];
            if hash.data.len() >= 20 && flags[..4] == [0; 4] {
                let md5 = digest::md5(&data[bitcode]);
                signed[hash.data.start + 4..hash.data.start + 20].copy_from_slice(&md5);
            }
        }
        digest::sign(&mut signed, data.len());
        return Ok(signed);
    }
    Err(format!(
        "the container digest (bytes 4-19) is {} ({}), the container's is {}; D3D12 refuses a \
         container whose digest does not verify. Sign it (dxc signs when its validator runs), \
         or mount with -o sign to have the digest written on save",
        crate::shader::dxbc::hex(&stored),
        status.as_str(),
        crate::shader::dxbc::hex(&computed)
    ))
}
