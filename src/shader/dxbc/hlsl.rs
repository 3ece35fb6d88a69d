//! Test support: facts an HLSL source of the corpus states, read from its text, so that
//! tests compare what the decoder finds in a container with what its source says and
//! not with the decoder itself. Which source and entry point a container was compiled
//! from follows the corpus's naming (`shared/corpus/dxil/README.md`) and the `dxc`
//! command lines in each source's leading comment.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// An HLSL source: its leading comment and its code without comments.
pub struct Source {
    pub path: PathBuf,
    pub comment: String,
    pub code: String,
}

/// What a container was compiled as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// `pixel`, `vertex`, … `library`, as `container::kind_name` says them.
    pub stage: &'static str,
    pub entry: String,
    /// The shader models the command lines allow for this file (one where they agree).
    pub models: BTreeSet<(u8, u8)>,
}

/// A `register(...)` declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Register {
    pub name: String,
    pub class: char,
    pub index: u32,
    pub space: u32,
    /// `None` for a single resource, `Some(None)` for `[]`, `Some(Some(n))` for `[n]`.
    pub array: Option<Option<u32>>,
}

const STAGE_WORDS: [(&str, &str); 8] = [
    ("ps", "pixel"),
    ("vs", "vertex"),
    ("gs", "geometry"),
    ("hs", "hull"),
    ("ds", "domain"),
    ("cs", "compute"),
    ("as", "amplification"),
    ("ms", "mesh"),
];

fn stage_of_word(word: &str) -> Option<&'static str> {
    if word == "lib" {
        return Some("library");
    }
    STAGE_WORDS.iter().find(|s| s.0 == word).map(|s| s.1)
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

impl Source {
    pub fn read(path: &Path) -> Source {
        let text = std::fs::read_to_string(path).unwrap();
        let comment = text
            .lines()
            .take_while(|l| l.trim_start().starts_with("//"))
            .map(|l| l.trim_start().trim_start_matches('/'))
            .collect::<Vec<_>>()
            .join("\n");
        Source {
            path: path.to_path_buf(),
            comment,
            code: strip_comments(&text),
        }
    }

    /// The `(profile, entry)` pairs of the comment's `dxc` command lines: each `-T`
    /// with the `-E` that follows it before the next `-T` (or `main`).
    fn command_lines(&self) -> Vec<(String, Option<String>)> {
        let words: Vec<&str> = self
            .comment
            .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')' || c == ';')
            .filter(|w| !w.is_empty())
            .collect();
        let mut out: Vec<(String, Option<String>)> = Vec::new();
        for (i, w) in words.iter().enumerate() {
            match (*w, words.get(i + 1)) {
                ("-T" | "/T", Some(p)) if p.contains('_') => out.push((p.to_string(), None)),
                ("-E" | "/E", Some(e)) => {
                    if let Some(last) = out.last_mut() {
                        last.1.get_or_insert_with(|| e.to_string());
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// Where `entry` is defined at the top level: the offset of its name.
    fn definition(&self, entry: &str) -> Option<usize> {
        let code = self.code.as_bytes();
        let mut depth = 0i32;
        for (i, &b) in code.iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            if depth == 0
                && self.code[i..].starts_with(entry)
                && (i == 0 || !is_ident(code[i - 1]))
                && self.code[i + entry.len()..].trim_start().starts_with('(')
                && i > 0
                && code[..i]
                    .iter()
                    .rev()
                    .find(|c| !c.is_ascii_whitespace())
                    .is_some_and(|&c| is_ident(c))
            {
                return Some(i);
            }
        }
        None
    }

    /// The attributes in `[...]` just before the entry's definition.
    pub fn attributes(&self, entry: &str) -> Vec<String> {
        let Some(at) = self.definition(entry) else {
            return Vec::new();
        };
        let before = &self.code[..at];
        let start = before.rfind(['}', ';']).map_or(0, |i| i + 1);
        let mut out = Vec::new();
        let mut rest = &before[start..];
        while let Some(open) = rest.find('[') {
            let Some(close) = rest[open..].find(']') else {
                break;
            };
            out.push(rest[open + 1..open + close].trim().to_string());
            rest = &rest[open + close + 1..];
        }
        out
    }

    /// The entry's header (return type to the body's `{`) and its body.
    pub fn entry(&self, entry: &str) -> Option<(&str, &str)> {
        let at = self.definition(entry)?;
        let line_start = self.code[..at].rfind(['}', ';', ']']).map_or(0, |i| i + 1);
        let open = at + self.code[at..].find('{')?;
        let mut depth = 0;
        for (i, b) in self.code[open..].bytes().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some((
                            &self.code[line_start..open],
                            &self.code[open..open + i + 1],
                        ));
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The body of `struct name { … }`.
    pub fn struct_body(&self, name: &str) -> Option<&str> {
        let mut from = 0;
        while let Some(i) = self.code[from..].find("struct") {
            let at = from + i + "struct".len();
            let rest = self.code[at..].trim_start();
            if rest.starts_with(name)
                && !rest[name.len()..].starts_with(|c: char| is_ident(c as u8))
            {
                let open = at + self.code[at..].find('{')?;
                let close = open + self.code[open..].find('}')?;
                return Some(&self.code[open..close]);
            }
            from = at;
        }
        None
    }

    /// Whether the entry writes `semantic` (case-insensitive): after its parameter list,
    /// in the struct it returns, or in an `out` parameter (or the struct it has).
    pub fn entry_outputs(&self, entry: &str, semantic: &str) -> bool {
        let Some((header, _)) = self.entry(entry) else {
            return false;
        };
        let has = |text: &str| {
            text.to_ascii_uppercase()
                .contains(&semantic.to_ascii_uppercase())
        };
        let name_at = header.find(entry).unwrap_or(0);
        let ret = header[..name_at].split_whitespace().last().unwrap_or("");
        let close = header.rfind(')').unwrap_or(header.len());
        if has(&header[close..]) || self.struct_body(ret).is_some_and(has) {
            return true;
        }
        let params = &header[name_at..close];
        params.split(',').any(|p| {
            let words: Vec<&str> = p.split_whitespace().collect();
            words
                .first()
                .is_some_and(|w| w.trim_start_matches('(').ends_with("out"))
                && (has(p) || words.iter().any(|w| self.struct_body(w).is_some_and(has)))
        })
    }

    /// Every semantic the source names after a `:` (upper case, index digits removed).
    pub fn semantics(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for part in self.code.split(':').skip(1) {
            let word: String = part
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c as u8))
                .collect();
            if word.is_empty() || word == "register" || word == "packoffset" {
                continue;
            }
            out.insert(
                word.trim_end_matches(|c: char| c.is_ascii_digit())
                    .to_ascii_uppercase(),
            );
        }
        out
    }

    /// Every `name[array] : register(cN, spaceM)` declaration.
    pub fn registers(&self) -> Vec<Register> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(i) = self.code[from..].find("register(") {
            let at = from + i;
            from = at + 9;
            let inner = &self.code[from..from + self.code[from..].find(')').unwrap_or(0)];
            let mut args = inner.split(',').map(str::trim);
            let reg = args.next().unwrap_or("");
            let Some(class) = reg.chars().next() else {
                continue;
            };
            let Ok(index) = reg[1..].parse() else {
                continue;
            };
            let space = args
                .next()
                .and_then(|s| s.strip_prefix("space"))
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let decl = self.code[..at].trim_end().trim_end_matches(':').trim_end();
            let (decl, array) = match decl.strip_suffix(']') {
                Some(d) => {
                    let open = d.rfind('[').unwrap_or(0);
                    (&d[..open], Some(d[open + 1..].trim().parse().ok()))
                }
                None => (decl, None),
            };
            let name: String = decl
                .chars()
                .rev()
                .take_while(|&c| is_ident(c as u8))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            out.push(Register {
                name,
                class: class.to_ascii_lowercase(),
                index,
                space,
                array,
            });
        }
        out
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The source a corpus container was compiled from, and the rest of its name: for
/// `draw_colour.dxil` `draw.hlsl` and `colour`, for `tessellation.hs.dxil`
/// `tessellation.hlsl` and `hs`, for `precise.cs.dxil` `precise_cs.hlsl` and `cs`. `None` for a
/// container without a source beside it.
pub fn source_of(dxil: &Path) -> Option<(PathBuf, Vec<String>)> {
    let dir = dxil.parent()?;
    let name = dxil.file_name()?.to_str()?.strip_suffix(".dxil")?;
    let parts: Vec<&str> = name.split('.').collect();
    let base = parts[0];
    let rest: Vec<String> = parts[1..].iter().map(|s| s.to_string()).collect();
    for word in &parts[1..] {
        let joined = dir.join(format!("{base}_{word}.hlsl"));
        if joined.is_file() {
            return Some((joined, rest));
        }
    }
    if dir.join(format!("{base}.hlsl")).is_file() {
        return Some((dir.join(format!("{base}.hlsl")), rest));
    }
    let mut stems: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.strip_suffix(".hlsl").map(str::to_string)
        })
        .collect();
    stems.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let stem = stems
        .into_iter()
        .find(|s| base.starts_with(&format!("{s}_")))?;
    let mut words = vec![base[stem.len() + 1..].to_string()];
    words.extend(rest);
    Some((dir.join(format!("{stem}.hlsl")), words))
}

/// What `source` compiled to `dxil` was: stage, entry point and shader models.
pub fn compiled(source: &Source, words: &[String]) -> Compiled {
    let lines = source.command_lines();
    let named_stage = words.iter().find_map(|w| stage_of_word(w));
    let profile_stage = |p: &str| stage_of_word(p.split('_').next().unwrap_or(""));
    // The command line for this file: the stage its name says, else the one whose
    // `-E` pattern takes the rest of the name, else all of them if they agree.
    let pattern = words.first().filter(|w| stage_of_word(w).is_none());
    let chosen: Vec<&(String, Option<String>)> = match named_stage {
        Some(stage) => lines
            .iter()
            .filter(|l| profile_stage(&l.0) == Some(stage))
            .collect(),
        None => {
            let by_pattern: Vec<_> = lines
                .iter()
                .filter(|l| l.1.as_deref().is_some_and(|e| e.contains("<name>")))
                .collect();
            if pattern.is_some() && !by_pattern.is_empty() {
                by_pattern
            } else {
                lines.iter().collect()
            }
        }
    };
    let stage = named_stage
        .or_else(|| chosen.first().and_then(|l| profile_stage(&l.0)))
        .unwrap_or("unknown");
    let mut entry = chosen
        .iter()
        .find_map(|l| l.1.clone())
        .unwrap_or_else(|| "main".to_string());
    if let Some(p) = pattern {
        entry = entry.replace("<name>", p);
    }
    if stage == "library" {
        // `-exports <name>`: the file names the export.
        entry = words.first().cloned().unwrap_or(entry);
    }
    let mut models: BTreeSet<(u8, u8)> = chosen
        .iter()
        .filter_map(|l| {
            let mut it = l.0.split('_').skip(1);
            Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
        })
        .collect();
    if words.iter().any(|w| w == "66") {
        models = BTreeSet::from([(6, 6)]);
    }
    Compiled {
        stage,
        entry,
        models,
    }
}

/// The stage the entry's attributes (and, for vertex and pixel, its outputs) state.
pub fn stage_by_attributes(source: &Source, entry: &str) -> Option<&'static str> {
    let attrs = source.attributes(entry);
    let has = |name: &str| attrs.iter().any(|a| a.starts_with(name));
    Some(if has("shader(") {
        "library"
    } else if has("outputtopology") && has("numthreads") {
        "mesh"
    } else if has("numthreads") {
        return None; // compute or amplification: the attributes alone do not say
    } else if has("outputcontrolpoints") {
        "hull"
    } else if has("domain") {
        "domain"
    } else if has("maxvertexcount") {
        "geometry"
    } else if source.entry_outputs(entry, "SV_Target") {
        "pixel"
    } else {
        return None;
    })
}

/// `[numthreads(x, y, z)]` of the entry.
pub fn num_threads(source: &Source, entry: &str) -> Option<[u32; 3]> {
    let attr = source
        .attributes(entry)
        .into_iter()
        .find(|a| a.starts_with("numthreads"))?;
    let inner = attr.split_once('(')?.1.trim_end_matches(')');
    let v: Vec<u32> = inner
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    v.try_into().ok()
}
