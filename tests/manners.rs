//! The command line as a Linux user and their scripts meet it: completions, the man page,
//! help texts, machine-readable output, pipes and mistakes (issue 14).

use std::collections::BTreeSet;
use std::process::{Command, Output};

fn shaderfs(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shaderfs"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the shell's completion function would be told, for the words typed so far (the
/// last one is the word being completed).
fn complete(shell: &str, words: &[&str]) -> Vec<String> {
    let index = (words.len() - 1).to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_shaderfs"))
        .env("COMPLETE", shell)
        .env("_CLAP_COMPLETE_INDEX", &index)
        .arg("--")
        .args(words)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "completing {words:?}: {}",
        stderr(&out)
    );
    let separator = match shell {
        "zsh" => ':',
        _ => '\t',
    };
    stdout(&out)
        .lines()
        // fish gets "candidate\thelp", zsh "candidate:help"
        .map(|l| l.split(separator).next().unwrap().to_owned())
        .collect()
}

/// The subcommands `shaderfs --help` lists.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn every_shell_completes_every_subcommand() {
    let help = stdout(&shaderfs(&["--help"]));
    let commands = subcommands(&help);
    for expected in [
        "mount",
        "umount",
        "ls",
        "check",
        "d3d9",
        "sdp",
        "completions",
    ] {
        assert!(
            commands.iter().any(|c| c == expected),
            "{expected} in {help}"
        );
    }
    for shell in ["bash", "zsh", "fish"] {
        let offered: BTreeSet<String> = complete(shell, &["shaderfs", ""]).into_iter().collect();
        for command in &commands {
            assert!(
                offered.contains(command),
                "{shell} offers {command}: {offered:?}"
            );
        }
        let d3d9: BTreeSet<String> = complete(shell, &["shaderfs", "d3d9", ""])
            .into_iter()
            .collect();
        for sub in ["disasm", "asm", "ctab"] {
            assert!(d3d9.contains(sub), "{shell}: d3d9 {sub} in {d3d9:?}");
        }
        let flags = complete(shell, &["shaderfs", "check", "--"]);
        assert!(flags.iter().any(|f| f == "--json"), "{shell}: {flags:?}");
    }
}

#[test]
fn mount_options_complete_after_the_comma_keeping_what_was_typed() {
    for shell in ["bash", "zsh", "fish"] {
        let offered = complete(shell, &["shaderfs", "mount", "a.sdp", "m", "-o", "ro,al"]);
        assert_eq!(offered, ["ro,allow_other", "ro,allow_root"], "{shell}");
        let offered = complete(shell, &["shaderfs", "mount", "a.sdp", "m", "-o", "non"]);
        assert_eq!(offered, ["nonempty"], "{shell}");
    }
}

#[test]
fn completion_scripts_register_with_each_shell() {
    for (shell, registers) in [
        ("bash", "complete "),
        ("zsh", "compdef"),
        ("fish", "complete "),
    ] {
        let out = shaderfs(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        assert!(script.contains(registers), "{shell}: {script}");
        assert!(script.contains("shaderfs"), "{shell}: {script}");
    }
    let out = shaderfs(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// The man page is written by hand; this keeps it honest against the definitions.
#[test]
fn the_man_page_names_every_subcommand_and_mount_option() {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/packaging/shaderfs.1"))
            .unwrap();
    // roff escapes '-' as '\-'
    let page = page.replace("\\-", "-");
    let help = stdout(&shaderfs(&["--help"]));
    for command in subcommands(&help) {
        if command == "help" {
            continue;
        }
        assert!(
            page.contains(&format!(".B shaderfs {command}"))
                || page.contains(&format!(".B {command}\n"))
                || page.contains(&format!("\"{command} ")),
            "the man page describes `shaderfs {command}`"
        );
        for sub in subcommands(&stdout(&shaderfs(&[&command, "--help"]))) {
            if sub != "help" {
                assert!(
                    page.contains(&format!("{command} {sub}")),
                    "the man page names `shaderfs {command} {sub}`"
                );
            }
        }
    }
    for option in shaderfs::mount::OPTIONS {
        // `uid=N`-style options are written `.BI uid= N`, flags `.B ro`.
        let entry = match option.ends_with('=') {
            true => option.to_string(),
            false => format!(".B {option}\n"),
        };
        assert!(
            page.contains(&entry),
            "the man page has an entry for -o {option}"
        );
    }
    for flag in shaderfs::mount::KERNEL_FLAGS {
        assert!(page.contains(flag), "the man page names -o {flag}");
    }
    for must in ["umount -z", "-o nonempty", "completions"] {
        assert!(page.contains(must), "the man page says {must}");
    }
}

/// `vs_1_1`: `dcl_position v0` / `mov oPos, v0`.
const VS: [u32; 8] = [
    0xFFFE0101, 0x0000001F, 0x80000000, 0x900F0000, 0x00000001, 0xC00F0000, 0x90E40000, 0x0000FFFF,
];

fn vs_bytes() -> Vec<u8> {
    VS.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A package of `n` copies of a small vertex shader, `S0000.vso`, `S0001.vso`, …
fn package(path: &std::path::Path, n: usize) {
    use shaderfs::archive::sdp::write::{self, NameField};
    let names: Vec<NameField> = (0..n)
        .map(|i| NameField::new(&format!("S{i:04}.vso")).unwrap())
        .collect();
    let code = vs_bytes();
    let bytes = write::serialise(100, names.iter().map(|n| (n, code.as_slice()))).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A FlatOut effect whose pixel block does not assemble (`q3` is no register).
const BROKEN_EFFECT: &str = "Texture Tex0;\n\nconst string inputStreamFormat = \"PosprojTex1\";\n\npixelshader pSdr =\n\tasm\n\t{\n\t\tps.1.3\n\t\ttex t0\n\t\tmul r0, t0, q3\n\t};\n\nTechnique T0\n{\n\tPass P0\n\t{\n\t\tTexture[0] = <Tex0>;\n\t\tVertexShader = null;\n\t\tPixelShader = <pSdr>;\n\t}\n}\n";

#[test]
fn a_closed_pipe_ends_the_command_quietly_with_status_0() {
    use std::io::{BufRead, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("big.sdp");
    // Far more listing than a pipe holds (64 KiB).
    package(&pkg, 3000);
    for args in [
        vec!["ls", "-l", "-R"],
        vec!["ls", "-R", "--json"],
        vec!["cat"],
    ] {
        let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        args.insert(1, pkg.to_str().unwrap().to_owned());
        if args[0] == "cat" {
            args.push("archive.json".into());
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_shaderfs"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // `head -1` has its line and goes.
        let out = child.wait_with_output().unwrap();
        assert!(!first.is_empty(), "{args:?}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

#[test]
fn a_mistyped_command_is_named_with_the_one_meant() {
    let out = shaderfs(&["lss", "x.sdp"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "shaderfs: unknown command 'lss', did you mean 'ls'?\n"
    );
    let out = shaderfs(&["chek", "x.sdp"]);
    assert!(
        stderr(&out).contains("did you mean 'check'?"),
        "{}",
        stderr(&out)
    );
    // The mount.fuse3 form still works: an existing source is mounted (here refused for
    // its missing mount point), not taken for a typo.
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("lss");
    package(&pkg, 1);
    let out = shaderfs(&[pkg.to_str().unwrap(), "/nonexistent/mountpoint"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/nonexistent/mountpoint"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("unknown command"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn every_argument_and_option_of_every_command_is_described() {
    let mut commands: Vec<Vec<String>> = vec![vec![]];
    let mut i = 0;
    while i < commands.len() {
        let path = commands[i].clone();
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let help = stdout(&shaderfs(&args));
        for sub in subcommands(&help) {
            if sub != "help" {
                commands.push([path.clone(), vec![sub]].concat());
            }
        }
        for section in ["Arguments:", "Options:"] {
            let entries = help
                .lines()
                .skip_while(|l| *l != section)
                .skip(1)
                .take_while(|l| l.starts_with("  "));
            for entry in entries {
                // `  -o <OPTIONS>  Comma-separated…`: a name, two spaces, words.
                let described = entry.trim_start().split_once("  ");
                assert!(
                    described.is_some_and(|(_, text)| !text.trim().is_empty()),
                    "shaderfs {} -h: `{}` is not described",
                    path.join(" "),
                    entry.trim()
                );
            }
        }
        i += 1;
    }
    assert!(commands.len() > 15, "{commands:?}");
    let top = stdout(&shaderfs(&["--help"]));
    for format in [".sdp", ".sha", "SGD2"] {
        assert!(top.contains(format), "the top-level help names {format}");
    }
    let mount = stdout(&shaderfs(&["mount", "--help"]));
    for word in ["sign", "nonempty", "max_memory", "noexec", "dirsync"] {
        assert!(mount.contains(word), "mount --help names -o {word}");
    }
}

#[test]
fn info_prints_one_json_line_per_archive_or_a_summary() {
    let tmp = tempfile::tempdir().unwrap();
    package(&tmp.path().join("a.sdp"), 2);
    package(&tmp.path().join("b.sdp"), 3);
    let out = shaderfs(&["info", "--json", tmp.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], "a.sdp");
    assert_eq!(lines[1]["shader_count"], 3);
    let out = shaderfs(&["info", tmp.path().join("b.sdp").to_str().unwrap()]);
    let text = stdout(&out);
    assert!(text.contains("  format: sdp\n"), "{text}");
    assert!(text.contains("  shader count: 3\n"), "{text}");
}

#[test]
fn check_reports_each_problem_once_with_its_place() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.sha");
    std::fs::write(&bad, BROKEN_EFFECT).unwrap();
    package(&tmp.path().join("good.sdp"), 2);
    let folder = tmp.path().to_str().unwrap();

    let out = shaderfs(&["check", "--json", folder]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let records: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // pixel.pso cannot be assembled for the same reason: still one problem.
    assert_eq!(records.len(), 1, "{}", stdout(&out));
    let r = &records[0];
    assert_eq!(r["archive"], bad.to_str().unwrap());
    assert_eq!(r["path"], "pixel.asm");
    assert_eq!(
        (r["line"].as_u64(), r["column"].as_u64()),
        (Some(10), Some(15))
    );
    assert!(r["message"]
        .as_str()
        .unwrap()
        .contains("'q3' is not a register"));
    assert!(
        stderr(&out).starts_with(&format!("{folder}: 1 problem (2 archives, ")),
        "{}",
        stderr(&out)
    );

    let out = shaderfs(&["check", folder]);
    assert_eq!(
        stdout(&out),
        format!(
            "{}:10:15: pixel shader pSdr: 'q3' is not a register (pixel.asm:4:15)\n",
            bad.display()
        )
    );
    // The same for the effect on its own, whatever it is called.
    let renamed = tmp.path().join("bad.txt");
    std::fs::copy(&bad, &renamed).unwrap();
    let out = shaderfs(&["sha", "check", "-q", renamed.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).starts_with(&format!("{}:10:15: ", renamed.display())));
    assert_eq!(stderr(&out), "", "-q: no summary");
}

/// An effect whose HLSL shaders are for vs_1_1, ps_1_1 and ps_2_0: every one is compiled
/// and checked, and the effect is fine (exit 0). An HLSL error in one is a problem at
/// the effect's line, as any other. (`check` exits 4 only for what it cannot check: a
/// macro named in a compile statement, an effect past the compile budget.)
#[test]
fn check_compiles_every_hlsl_shader_of_an_effect() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full.sha");
    let text = include_str!("../src/archive/sha/fx-verdicts/own/hlsl_full.sha");
    std::fs::write(&full, text).unwrap();
    let p = full.to_str().unwrap();
    let out = shaderfs(&["sha", "check", p]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let out = shaderfs(&["check", "--json", p]);
    assert_eq!(out.status.code(), Some(0));

    // ps_1_1 takes no reciprocal: that function is refused at its line.
    std::fs::write(
        &full,
        text.replace("return tex2D(sBase, uv);", "return 1 / tex2D(sBase, uv);"),
    )
    .unwrap();
    let out = shaderfs(&["check", "-q", p]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let said = stdout(&out);
    assert!(
        said.starts_with(&format!("{p}:78:")) && said.contains("ps_1_1"),
        "{said}"
    );

    // A broken ps_2_0 function beside them: a problem, exit 2.
    std::fs::write(
        &full,
        text.replace("return c * i.colour;", "return c * i.color;"),
    )
    .unwrap();
    let out = shaderfs(&["check", "-q", p]);
    assert_eq!(out.status.code(), Some(2));
    let said = stdout(&out);
    assert!(
        said.starts_with(&format!("{p}:73:14: pixel shader ps_main: ")) && said.contains("'color'"),
        "{said}"
    );
}

#[test]
fn quiet_and_verbose() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("p.sdp");
    package(&pkg, 2);
    let p = pkg.to_str().unwrap();
    let out = shaderfs(&["check", "-q", p]);
    assert!(out.status.success());
    assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("", ""));
    let out = shaderfs(&["check", "-v", p]);
    assert!(
        stderr(&out).contains(&format!("{p}: shaders/S0001.vso\n")),
        "{}",
        stderr(&out)
    );
    let to = tmp.path().join("out");
    let out = shaderfs(&["extract", "-v", p, "-C", to.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("asm/S0000.vso.asm\n"), "{err}");
    assert!(err.lines().last().unwrap().contains(" files, "), "{err}");
    let out = shaderfs(&["extract", "-q", p, "-C", to.to_str().unwrap()]);
    assert_eq!(stderr(&out), "");
}

/// Run `shaderfs ARGS` under a pseudo-terminal (util-linux `script`), as a user at a
/// terminal runs it; None where `script` is missing.
fn at_a_terminal(args: &str) -> Option<String> {
    let out = Command::new("script")
        .args([
            "-qec",
            &format!("{} {args}", env!("CARGO_BIN_EXE_shaderfs")),
            "/dev/null",
        ])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn progress_shows_at_a_terminal_and_ends_in_a_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("p.sdp");
    package(&pkg, 400);
    let Some(screen) = at_a_terminal(&format!("check {}", pkg.display())) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "script (util-linux) is missing"
        );
        return;
    };
    assert!(screen.contains("checking"), "a progress bar: {screen:?}");
    // 400 shaders, each as bytecode, asm, constant table and HLSL, and archive.json.
    assert!(screen.contains("/1601 files"), "{screen:?}");
    assert!(screen.contains(": ok (1,601 files, "), "{screen:?}");
    // Without a terminal, no bar: only the summary.
    let out = shaderfs(&["check", pkg.to_str().unwrap()]);
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

#[test]
fn d3d9_asm_writes_to_standard_output_with_dash() {
    let tmp = tempfile::tempdir().unwrap();
    let text = tmp.path().join("s.vso.asm");
    std::fs::write(&text, "vs_1_1\ndcl_position v0\nmov oPos, v0\n").unwrap();
    let out = shaderfs(&["d3d9", "asm", text.to_str().unwrap(), "-o", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, vs_bytes());
    let file = tmp.path().join("s.vso");
    let out = shaderfs(&[
        "d3d9",
        "asm",
        text.to_str().unwrap(),
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert_eq!(std::fs::read(&file).unwrap(), vs_bytes());
}

#[test]
fn sdp_pack_says_what_is_wrong_and_with_which_status() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let good = dir.join("A.vso");
    std::fs::write(&good, vs_bytes()).unwrap();
    let out_pkg = dir.join("out.sdp");
    let pack = |files: &[&std::path::Path]| {
        let mut args = vec![
            "sdp".to_owned(),
            "pack".into(),
            out_pkg.display().to_string(),
        ];
        args.extend(files.iter().map(|f| f.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        shaderfs(&args)
    };

    // The same name twice: a usage error naming both files.
    let other = dir.join("sub");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("A.vso"), vs_bytes()).unwrap();
    let out = pack(&[&good, &other.join("A.vso")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("A.vso is given twice"),
        "{}",
        stderr(&out)
    );
    assert!(!out_pkg.exists());

    // A name that cannot be a record: usage.
    let txt = dir.join("notes.txt");
    std::fs::write(&txt, "x").unwrap();
    let out = pack(&[&txt]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("end in .vso (vertex) or .pso (pixel)"));

    // A shader that does not assemble: exit 2, naming the file and the place, and not
    // calling anything a malformed archive.
    let broken = dir.join("B.vso.asm");
    std::fs::write(&broken, "vs_2_0\nmov oPos, q0\n").unwrap();
    let out = pack(&[&good, &broken]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}: 2:11: ", broken.display())),
        "{err}"
    );
    assert!(!err.contains("archive"), "{err}");

    let out = pack(&[&good]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = shaderfs(&["ls", out_pkg.to_str().unwrap(), "shaders"]);
    assert_eq!(stdout(&listed), "A.vso\n");
}

#[test]
fn gen_sgd2_says_what_it_needs_and_what_it_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db.awc");
    let out = shaderfs(&[
        "dev",
        "gen-sgd2",
        db.to_str().unwrap(),
        "--dxil",
        "/nonexistent",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("/nonexistent: No such file or directory"),
        "{err}"
    );
    assert!(err.contains("DXIL containers compiled by dxc"), "{err}");
    assert!(err.contains("pass --dxil DIR"), "{err}");
    assert!(!db.exists());
}
