#!/usr/bin/env python3
"""The shaderfs benchmark: shaderfs side by side with the extracted folder and squashfuse.

Run through bench/run (which installs what it needs and builds release). Writes
bench/results.md: every figure is the median of several runs, every ratio is taken
against a peer measured in the same run, and the targets of issue 7 are checked and
reported, not asserted.
"""

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Where `cargo build --release` in bench/run put the binary (CARGO_TARGET_DIR, relative to
# the checkout, as bench/run builds from there).
BIN = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "shaderfs"
WORK = Path(os.environ.get("BENCH_DIR", "/tmp/shaderfs-bench"))
CORPUS = ROOT.parent / "shared" / "corpus"
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
CAN_DROP = os.geteuid() == 0


def sh(cmd, env=None, check=True):
    full_env = dict(os.environ)
    full_env.update(env or {})
    out = subprocess.run(cmd, shell=True, env=full_env, capture_output=True, text=True)
    if check and out.returncode != 0:
        sys.exit(f"bench: `{cmd}` failed ({out.returncode}): {out.stderr.strip()}")
    return out


def timed(cmd, env=None):
    start = time.perf_counter()
    sh(cmd, env)
    return time.perf_counter() - start


def drop_caches():
    if CAN_DROP:
        sh("sync; echo 3 > /proc/sys/vm/drop_caches")


def median(xs):
    return statistics.median(xs)


def mounted(path):
    return any(f" {path} " in line for line in open("/proc/self/mountinfo"))


def unmount(path):
    if mounted(path):
        out = sh(f"{BIN} umount {path}", check=False)
        if out.returncode != 0:
            sh(f"umount {path} || fusermount3 -u {path}", check=False)


def mount(source, mnt, opts="ro", tune=""):
    unmount(mnt)
    mnt.mkdir(parents=True, exist_ok=True)
    sh(f"{BIN} mount {source} {mnt} -o {opts}", env={"SHADERFS_TUNE": tune})


def daemon_pid(mnt):
    """The pid of the daemon serving `mnt`, from its pid file."""
    for pid_file in Path("/run/shaderfs").glob("*.pid"):
        if str(mnt).replace("/", "%2F") in pid_file.name:
            return int(pid_file.read_text().strip())
    return None


def daemon_status(mnt):
    """The fields of /proc/PID/status of the daemon serving `mnt` (None without one)."""
    pid = daemon_pid(mnt)
    if pid is None:
        return None
    status = Path(f"/proc/{pid}/status").read_text()
    return dict(line.split(":", 1) for line in status.splitlines() if ":" in line)


def daemon_memory(mnt):
    """RssAnon and RssFile (KiB) of the daemon serving `mnt`."""
    fields = daemon_status(mnt)
    if fields is None:
        return None
    kib = lambda k: int(fields[k].split()[0])
    return kib("RssAnon"), kib("RssFile")


def daemon_peak_kib(mnt):
    """VmHWM (KiB): the most memory the daemon serving `mnt` has held."""
    fields = daemon_status(mnt)
    return None if fields is None else int(fields["VmHWM"].split()[0])


def peak_of_command_kib(cmd):
    """Run `cmd` (a list) under GNU time and return its peak resident memory (KiB). (The
    harness's own rusage of a child would count the pages it shares with this big Python
    process until it execs.)"""
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True)
    return int(out.stderr.strip().splitlines()[-1])


READ_ALL = "find {d} -type f -print0 | xargs -0 -n 64 cat > /dev/null"
READ_ALL_PARALLEL = "find {d} -type f -print0 | xargs -0 -n 64 -P 4 cat > /dev/null"


class Results:
    def __init__(self):
        self.rows = []
        self.notes = []

    def add(self, what, ours, peer_name, peer, target=None, unit="ms", places=1):
        ratio = ours / peer if peer else float("nan")
        met = None
        if target is not None:
            met = ratio <= target if target > 0 else ours <= -target
        self.rows.append((what, ours, peer_name, peer, ratio, target, met, unit, places))
        status = "" if met is None else (" ok" if met else " MISSED")
        print(f"{what}: {ours:.{places}f} {unit} vs {peer_name} {peer:.{places}f} {unit} = {ratio:.2f}x{status}")

    def unmeasured(self, what, ours, peer_name, reason, target=None, unit="ms", places=1):
        """A row whose peer could not be measured in this run: `reason` in its place, no
        ratio, the target not checked."""
        self.rows.append((what, ours, peer_name, reason, None, target, None, unit, places))
        print(f"{what}: {ours:.{places}f} {unit} vs {peer_name}: not measured ({reason})")

    def note(self, text):
        print(text)
        self.notes.append(text)


def prepare():
    WORK.mkdir(parents=True, exist_ok=True)
    for m in WORK.glob("mnt-*"):
        unmount(m)
    gta = WORK / "gta.awc"
    if not gta.exists():
        dxil = CORPUS / "dxil"
        if not dxil.is_dir():
            sys.exit(f"bench: {dxil} is missing: the SGD2 database is built from its DXIL programs")
        sh(f"{BIN} dev gen-sgd2 {gta} --full --dxil {dxil}")
    sdp = sdp_packages()
    for name, src in (("gta", gta), ("sdp", sdp)):
        out = WORK / f"{name}-extracted"
        img = WORK / f"{name}.squashfs"
        # The peers hold what this build's views show: extracted again after a rebuild.
        if out.exists() and out.stat().st_mtime < BIN.stat().st_mtime:
            sh(f"rm -rf {out} {img}")
        if not out.exists():
            sh(f"{BIN} extract {src} -C {out}")
        if not img.exists():
            sh(f"mksquashfs {out} {img} -quiet -noappend -comp gzip")
    return gta, sdp


def sdp_packages():
    """The Oblivion-sized set of packages (`shaderfs dev gen-sdp`: 19 packages, 6,000
    shaders) around the corpus's compiled shaders, or the example package's where the
    corpus is missing; generated once into WORK."""
    WORK.mkdir(parents=True, exist_ok=True)
    sdp = WORK / "Shaders"
    if not sdp.exists():
        d3d9 = CORPUS / "d3d9" / "compiled"
        source = d3d9 if d3d9.is_dir() else ROOT / "examples"
        if source == ROOT / "examples":
            sh(f"{BIN} extract {ROOT}/examples/shaderpackage-example.sdp shaders -C {WORK}/example-shaders")
            source = WORK / "example-shaders"
        sh(f"{BIN} dev gen-sdp {sdp} --d3d9 {source}")
    return sdp


def squash_mount(img, mnt):
    unmount(mnt)
    mnt.mkdir(parents=True, exist_ok=True)
    sh(f"squashfuse {img} {mnt}")


def first_answer(res, gta):
    """a. `shaderfs mount` + the first listing, warm and with the kernel's caches dropped.

    Mounting validates the whole framing (a malformed archive is refused at mount), which
    reads every record of the file: a cold mount cannot beat one read of the archive from
    disk, so that read is measured too, as the floor of the cold figure."""
    mnt = WORK / "mnt-gta"
    mnt.mkdir(parents=True, exist_ok=True)
    ext = WORK / "gta-extracted"
    first = f"{BIN} mount {gta} {mnt} -o ro && ls {mnt}/programs/pixel | wc -l"
    cold, cold_peer, floor = [], [], []
    for _ in range(RUNS):
        unmount(mnt)
        drop_caches()
        cold.append(timed(first))
        drop_caches()
        cold_peer.append(timed(f"ls {ext}/programs/pixel | wc -l"))
        drop_caches()
        floor.append(timed(f"cat {gta} > /dev/null"))
    unmount(mnt)
    warm = []
    for _ in range(RUNS):
        unmount(mnt)
        warm.append(timed(first))
    unmount(mnt)
    warm_peer = median([timed(f"ls {ext}/programs/pixel | wc -l") for _ in range(RUNS)])
    res.add("a. mount + `ls programs/pixel | wc -l` (full-size SGD2, warm)",
            median(warm) * 1000, "`ls` of the extracted folder", warm_peer * 1000, -100)
    res.add("a. mount + `ls programs/pixel | wc -l` (full-size SGD2, cold)",
            median(cold) * 1000, "`ls` of the extracted folder", median(cold_peer) * 1000, -100)
    res.add("a. mount + `ls programs/pixel | wc -l` (full-size SGD2, cold)",
            median(cold) * 1000, "`cat` of the archive from disk (the floor)", median(floor) * 1000)
    res.note(f"a. mount to first answer, archive and binary in the page cache: {median(warm) * 1000:.0f} ms "
             f"(target under 100 ms: {'met' if median(warm) < 0.1 else 'MISSED'}); with the kernel's "
             f"caches dropped {median(cold) * 1000:.0f} ms, of which reading the 62 MB archive from disk "
             f"alone takes {median(floor) * 1000:.0f} ms")
    return median(warm)


def extract_or_mount(res, gta):
    """What a user choosing between the two pays before the first `grep`: extracting the
    database to a folder (`shaderfs extract`, every view rendered and written) against
    mounting it, and the disk the folder takes against the archive."""
    out = WORK / "extract-run"
    mnt = WORK / "mnt-gta"
    times = []
    for _ in range(3):
        shutil.rmtree(out, ignore_errors=True)
        times.append(timed(f"{BIN} extract {gta} -C {out} && sync -f {out}"))
    folder = int(sh(f"du -sk {out}").stdout.split()[0]) * 1024
    shutil.rmtree(out, ignore_errors=True)
    mounts = []
    for _ in range(RUNS):
        unmount(mnt)
        mounts.append(timed(f"{BIN} mount {gta} {mnt} -o ro"))
    unmount(mnt)
    res.add("extracting the full database to a folder, or mounting it", median(mounts) * 1000,
            "`shaderfs extract` + sync", median(times) * 1000)
    res.note(f"disk: the extracted folder takes {folder / 2**20:.0f} MiB, the archive "
             f"{gta.stat().st_size / 2**20:.0f} MiB; a mount takes no disk")


def whole_tree(res, name, source):
    """Cold and warm reads of every file, through shaderfs, extracted, squashfuse."""
    mnt, sq = WORK / f"mnt-{name}", WORK / f"mnt-{name}-sq"
    ext, img = WORK / f"{name}-extracted", WORK / f"{name}.squashfs"
    cold = {"shaderfs": [], "extracted": [], "squashfuse": []}
    warm = {"shaderfs": [], "extracted": [], "squashfuse": []}
    for _ in range(max(3, RUNS // 2)):
        mount(source, mnt)
        squash_mount(img, sq)
        for key, d in (("shaderfs", mnt), ("extracted", ext), ("squashfuse", sq)):
            drop_caches()
            cold[key].append(timed(READ_ALL.format(d=d)))
    for key, d in (("shaderfs", mnt), ("extracted", ext), ("squashfuse", sq)):
        sh(READ_ALL.format(d=d))
        for _ in range(RUNS):
            warm[key].append(timed(READ_ALL.format(d=d)))
    # Right after the last read, and once the daemon has been idle for a second (its
    # read-ahead threads give the heap's free memory back then).
    mem = daemon_memory(mnt)
    time.sleep(1.5)
    mem = (mem, daemon_memory(mnt))
    # The same warm read through a writable mount (the default kind), and through a
    # read-only mount made to take the same OPEN and RELEASE requests (`no_open_off`):
    # what the protocol costs a connection that can write, whatever the daemon does.
    rw = WORK / f"mnt-{name}-rw"
    warm_rw, warm_opens = (warm_through(source, rw, opts, tune)
                           for opts, tune in (("rw", ""), ("ro", "no_open_off")))
    c = {k: median(v) * 1000 for k, v in cold.items()}
    w = {k: median(v) * 1000 for k, v in warm.items()}
    cold_target = 1.3 if name == "gta" else 1.1
    res.add(f"b. read every file of the {name} tree, cold", c["shaderfs"], "extracted", c["extracted"], cold_target)
    res.add(f"b. read every file of the {name} tree, cold", c["shaderfs"], "squashfuse", c["squashfuse"])
    res.add(f"b. read every file of the {name} tree, warm", w["shaderfs"], "extracted", w["extracted"], 1.3)
    res.add(f"b. read every file of the {name} tree, warm", w["shaderfs"], "squashfuse", w["squashfuse"], 1.0)
    res.add(f"b. read every file of the {name} tree, warm, writable mount", warm_rw, "extracted", w["extracted"], 1.3)
    res.add(f"b. read every file of the {name} tree, warm, writable mount", warm_rw, "a read-only mount", w["shaderfs"], 1.1)
    res.add(f"b. read every file of the {name} tree, warm, writable mount", warm_rw,
            "a read-only mount taking opens (`no_open_off`)", warm_opens)
    unmount(sq)
    return mem


def warm_through(source, mnt, opts, tune=""):
    """Median ms of a warm read of every file through a mount of `source`."""
    mount(source, mnt, opts=opts, tune=tune)
    sh(READ_ALL.format(d=mnt))
    took = median([timed(READ_ALL.format(d=mnt)) for _ in range(RUNS)]) * 1000
    unmount(mnt)
    return took


def grep_views(res, name, source, pattern, glob):
    ext = WORK / f"{name}-extracted"
    cmd = "grep -rl --include='{g}' '{p}' {d} | wc -l"
    sh(cmd.format(g=glob, p=pattern, d=ext))
    peer = median([timed(cmd.format(g=glob, p=pattern, d=ext)) for _ in range(RUNS)])
    hits_peer = sh(cmd.format(g=glob, p=pattern, d=ext)).stdout.strip()
    took = {}
    for opts, tune in (("ro", ""), ("rw", ""), ("ro", "no_open_off")):
        mnt = WORK / f"mnt-{name}-grep-{opts}"
        mount(source, mnt, opts=opts, tune=tune)
        sh(cmd.format(g=glob, p=pattern, d=mnt))
        took[opts, tune] = median([timed(cmd.format(g=glob, p=pattern, d=mnt)) for _ in range(RUNS)]) * 1000
        hits_ours = sh(cmd.format(g=glob, p=pattern, d=mnt)).stdout.strip()
        unmount(mnt)
        if hits_ours != hits_peer:
            res.note(f"c. WARNING: grep found {hits_ours} files in the mount, {hits_peer} extracted")
    what = f"c. `grep -rl {pattern}` over {glob} of {name} (warm{{}}, {hits_peer} hits)"
    res.add(what.format(""), took["ro", ""], "extracted", peer * 1000, 1.5)
    res.add(what.format(", writable mount"), took["rw", ""], "extracted", peer * 1000, 1.2)
    res.add(what.format(", writable mount"), took["rw", ""],
            "a read-only mount taking opens (`no_open_off`)", took["ro", "no_open_off"])


def cpu_seconds(pid):
    """User and system CPU time (s) a process has used, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def open_close(folder, names):
    """Microseconds to open and close each of `names` in `folder`, one after another."""
    paths = [os.path.join(folder, n) for n in names]
    start = time.perf_counter()
    for path in paths:
        os.close(os.open(path, os.O_RDONLY))
    return (time.perf_counter() - start) / len(paths) * 1e6


def protocol_floor(res, gta):
    """What an open costs through each kind of mount: the floor under every warm
    whole-tree and grep figure of a writable mount."""
    ext = WORK / "gta-extracted" / "programs" / "pixel"
    names = sorted(n for n in os.listdir(ext) if n.endswith(".json"))
    peer = median([open_close(ext, names) for _ in range(RUNS)])
    kinds = (("ro", "", "read-only mount"),
             ("ro", "no_open_off", "read-only mount taking opens (`no_open_off`)"),
             ("rw", "", "writable mount"),
             ("rw", "uring_normal", "writable mount, io_uring threads at the normal class (`uring_normal`)"),
             ("rw", "no_uring", "writable mount over /dev/fuse (`no_uring`)"))
    for opts, tune, label in kinds:
        mnt = WORK / "mnt-floor"
        mount(gta, mnt, opts=opts, tune=tune)
        folder = mnt / "programs" / "pixel"
        open_close(folder, names)
        pid = daemon_pid(mnt)
        before = cpu_seconds(pid)
        ours = median([open_close(folder, names) for _ in range(RUNS)])
        after = cpu_seconds(pid)
        one_cpu = None
        if opts == "rw" and tune == "no_uring":
            # The same requests over /dev/fuse when nothing crosses between CPUs: what
            # waking the other CPU costs of them.
            one_cpu = on_one_cpu(pid, lambda: median([open_close(folder, names)
                                                      for _ in range(RUNS)]))
        unmount(mnt)
        res.add(f"i. open + close of a file, {label} ({len(names)} JSON views, warm)", ours,
                "the extracted folder", peer, unit="us")
        if opts == "rw" or tune:
            opened = len(names) * RUNS
            user, system = ((a - b) * 1e6 / opened for a, b in zip(after, before))
            res.note(f"i. {label}: the daemon spent {user:.1f} us of user and {system:.1f} us of "
                     f"kernel CPU per open and close (an OPEN and a RELEASE request)")
        if one_cpu is not None:
            res.add(f"i. open + close of a file, writable mount over /dev/fuse, the reader and "
                    f"the daemon on one CPU ({len(names)} JSON views, warm)", one_cpu,
                    "the extracted folder", peer, unit="us")
    across, within = pipe_round_trip()
    res.note(f"i. a pipe round trip between two processes: {across:.1f} us between the two CPUs, "
             f"{within:.1f} us on one (what waking a process on the other CPU costs here)")


def on_one_cpu(pid, measure):
    """`measure()` with this process and every thread of daemon `pid` on CPU 0; None where
    there is one CPU or affinity cannot be set."""
    cpus = os.sched_getaffinity(0)
    if len(cpus) < 2 or 0 not in cpus:
        return None
    threads = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    try:
        for t in threads:
            os.sched_setaffinity(t, {0})
        os.sched_setaffinity(0, {0})
        return measure()
    except OSError:
        return None
    finally:
        os.sched_setaffinity(0, cpus)
        for t in threads:
            try:
                os.sched_setaffinity(t, cpus)
            except OSError:
                pass


def pipe_round_trip(rounds=20000):
    """Microseconds for one byte to go to a child process and back, with the child on the
    other CPU and on the same one (median of RUNS each)."""
    def once(child_cpu):
        a, b = os.pipe(), os.pipe()
        pid = os.fork()
        if pid == 0:
            os.sched_setaffinity(0, {child_cpu})
            for _ in range(rounds):
                os.write(b[1], os.read(a[0], 1))
            os._exit(0)
        cpus = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {0})
        time.sleep(0.05)
        start = time.perf_counter()
        for _ in range(rounds):
            os.write(a[1], b"x")
            os.read(b[0], 1)
        took = time.perf_counter() - start
        os.sched_setaffinity(0, cpus)
        os.waitpid(pid, 0)
        for fd in (*a, *b):
            os.close(fd)
        return took / rounds * 1e6
    other = 1 if len(os.sched_getaffinity(0)) > 1 else 0
    return (median([once(other) for _ in range(RUNS)]),
            median([once(0) for _ in range(RUNS)]))


def growth(res, gta):
    """Mount to first answer and the daemon's RssAnon at the game's size and ten times it."""
    big = WORK / "gta10.awc"
    if not big.exists():
        sh(f"{BIN} dev gen-sgd2 {big} --full --scale 10 --dxil {CORPUS / 'dxil'}")
    mnt = WORK / "mnt-growth"
    mnt.mkdir(parents=True, exist_ok=True)
    first = "{bin} mount {db} {mnt} -o ro && ls {mnt}/programs/pixel | wc -l"
    figures = {}
    for label, db in (("1x", gta), ("10x", big)):
        times = []
        for _ in range(RUNS):
            unmount(mnt)
            times.append(timed(first.format(bin=BIN, db=db, mnt=mnt)))
        anon, _ = daemon_memory(mnt) or (0, 0)
        unmount(mnt)
        figures[label] = (median(times) * 1000, anon / 1024)
    (t1, m1), (t10, m10) = figures["1x"], figures["10x"]
    res.add("h. mount + `ls programs/pixel | wc -l`, 10x the game's database", t10, "the same at 1x", t1)
    # The floor: listing a folder of the same names on this disk (empty files).
    names = WORK / "names10"
    if not names.exists():
        mount(big, mnt)
        listed = os.listdir(mnt / "programs" / "pixel")
        unmount(mnt)
        names.mkdir()
        for name in listed:
            if name != "by-name":
                (names / name).touch()
        (names / "by-name").mkdir()
    listing = f"ls {names} | wc -l"
    sh(listing)
    floor = median([timed(listing) for _ in range(RUNS)])
    res.add("h. mount + `ls programs/pixel | wc -l`, 10x the game's database", t10,
            "`ls` of a folder of the same names on disk", floor * 1000)
    res.add("h. daemon RssAnon after that, 10x", m10, "the same at 1x", m1, unit="MiB")
    res.note(f"h. growth: mount to first answer {t1:.0f} ms -> {t10:.0f} ms at 10x (target under 250 ms: "
             f"{'met' if t10 < 250 else 'MISSED'}); RssAnon {m1:.1f} -> {m10:.1f} MiB (target under 48 MiB: "
             f"{'met' if m10 < 48 else 'MISSED'})")
    unmount(mnt)


def write_back(res, sdp, gta):
    pkg = WORK / "write" / "shaderpackage001.sdp"
    pkg.parent.mkdir(exist_ok=True)
    shutil.copy(sdp / "shaderpackage001.sdp", pkg)
    mnt = WORK / "mnt-write"
    mount(pkg, mnt, opts="rw")
    target = sorted((mnt / "shaders").iterdir())[0]
    same_kind = [p for p in sorted((mnt / "shaders").iterdir()) if p.suffix == target.suffix]
    new = WORK / "write" / "new.shader"
    ours, peer = [], []
    for i in range(RUNS):
        shutil.copy(same_kind[1 + i % (len(same_kind) - 1)], new)
        ours.append(timed(f"cp {new} {target}"))
        peer.append(timed(f"cp {pkg} {pkg}.copy && sync {pkg}.copy"))
    # A script's edit that finds nothing to change in most files: sed -i over every asm
    # view, matching nothing (each file is written to a temporary and renamed back).
    copy = WORK / "write" / "asm-copy"
    sh(f"rm -rf {copy} && cp -r {mnt}/asm {copy}")
    views = len(list(copy.iterdir()))
    before = pkg.stat()
    nothing = "sed -i 's/no such text/x/' {d}/*.asm"
    ours_sed = median([timed(nothing.format(d=f"{mnt}/asm")) for _ in range(RUNS)])
    peer_sed = median([timed(nothing.format(d=copy)) for _ in range(RUNS)])
    if (pkg.stat().st_ino, pkg.stat().st_mtime_ns) != (before.st_ino, before.st_mtime_ns):
        res.note("d. WARNING: sed -i matching nothing rewrote the package")
    unmount(mnt)
    res.add(f"d. replace one shader in a {pkg.stat().st_size // 1024} KiB .sdp (close = durable)",
            median(ours) * 1000, "one copy of the package + sync", median(peer) * 1000, 1.5)
    res.add(f"d. `sed -i` matching nothing over the package's {views} asm views (writable mount)",
            ours_sed * 1000, "the same over a copy of them on disk", peer_sed * 1000)

    db = WORK / "write" / "gta.awc"
    shutil.copy(gta, db)
    mnt = WORK / "mnt-write-gta"
    mount(db, mnt, opts="rw")
    program = mnt / "programs" / "pixel" / "17.dxil"
    other = mnt / "programs" / "pixel" / "18.dxil"
    shutil.copy(other, new)
    attempt = sh(f"cp {new} {program}", check=False)
    if attempt.returncode != 0:
        res.note("d. SGD2 program replacement: not available in this build "
                 f"({attempt.stderr.strip()}); see issue 6")
    else:
        ours, peer = [], []
        for i in range(RUNS):
            shutil.copy(mnt / "programs" / "pixel" / f"{18 + i % 2}.dxil", new)
            ours.append(timed(f"cp {new} {program}"))
            peer.append(timed(f"cp {db} {db}.copy && sync {db}.copy"))
        res.add("d. replace one program in the full-size SGD2 (close = durable)",
                median(ours) * 1000, "one copy of the database + sync", median(peer) * 1000, 1.5)
    unmount(mnt)


def techniques(res, gta, sdp):
    """Each technique turned off alone (SHADERFS_TUNE), against the default, same run."""
    mnt = WORK / "mnt-tune"
    pix = f"{mnt}/programs/pixel"

    def measure(cmd, tune, warmup=True, remount_each=False, opts="ro", pause=0.0, source=gta):
        times = []
        mount(source, mnt, opts=opts, tune=tune)
        if warmup:
            sh(cmd.format(m=mnt, p=pix))
        for _ in range(RUNS):
            if remount_each:
                mount(source, mnt, opts=opts, tune=tune)
            if pause:
                time.sleep(pause)
            times.append(timed(cmd.format(m=mnt, p=pix)))
        unmount(mnt)
        return median(times) * 1000

    json_parallel = "find {p} -name '*.json' -print0 | xargs -0 -n 64 -P 4 cat > /dev/null"
    cases = [
        # (what, command, knobs that turn it off, warm-up, remount each run, options, pause)
        ("FOPEN_KEEP_CACHE and no-open (warm read of every program)",
         READ_ALL.format(d="{p}"), "no_keep_cache,no_open_off", True, False, "ro", 0),
        ("long attribute/entry timeouts (`ls -l programs/pixel`, 1.2 s after the last)",
         "ls -l {p} > /dev/null", "short_ttl", True, False, "ro", 1.2),
        ("readdirplus (`ls -l programs/pixel` after mount)",
         "ls -l {p} > /dev/null", "no_readdirplus", False, True, "ro", 0),
        # Read-ahead also renders on another thread: off in both arms, to see the threads.
        ("several fuser threads (4 readers of every program JSON after mount, no read-ahead)",
         json_parallel, "ahead=0|threads=1", False, True, "ro", 0),
        ("FUSE over io_uring (warm `grep -r` over the program JSON, writable mount)",
         "grep -rl --include='*.json' Wave32 {m} > /dev/null", "no_uring", True, False, "rw", 0),
        ("io_uring threads waiting at the idle class (the same grep)",
         "grep -rl --include='*.json' Wave32 {m} > /dev/null", "uring_normal", True, False, "rw", 0),
        ("FUSE over io_uring (first read of every program after mount, read-only)",
         READ_ALL.format(d="{p}"), "no_uring", False, True, "ro", 0),
        ("rendered views in the cache (second `grep` over one package's asm/, writable mount)",
         "grep -l -r 'dcl_position' {m}/asm > /dev/null", "cache=0", True, False, "rw", 0),
        ("views rendered ahead of the reader (first read of every program after mount)",
         READ_ALL.format(d="{p}"), "ahead=0", False, True, "ro", 0),
        ("large reads (read of every program after mount)",
         READ_ALL.format(d="{p}"), "readahead=4096", False, True, "ro", 0),
    ]
    package = sdp / "shaderpackage001.sdp"
    for what, cmd, tune, warmup, remount, opts, pause in cases:
        source = package if "{m}/asm" in cmd else gta
        # "BASE|KNOB": BASE in both arms, KNOB turned off in the second.
        base, _, knob = tune.rpartition("|")
        off_tune = ",".join(t for t in (base, knob) if t)
        on = measure(cmd, base, warmup, remount, opts, pause, source)
        off = measure(cmd, off_tune, warmup, remount, opts, pause, source)
        res.add(f"technique: {what}", on, f"without ({knob})", off)

    # Framing only at mount: mounting against decoding every view.
    t_mount = []
    mnt.mkdir(parents=True, exist_ok=True)
    for _ in range(RUNS):
        unmount(mnt)
        t_mount.append(timed(f"{BIN} mount {gta} {mnt} -o ro"))
    unmount(mnt)
    t_check = median([timed(f"{BIN} check {gta}") for _ in range(2)])
    res.add("technique: framing-only index (mount)", median(t_mount) * 1000,
            "decoding every view (`shaderfs check`)", t_check * 1000)


def sha_check(res, blocks=4000):
    """j. `shaderfs check` of a FlatOut effect of many asm blocks against a mount's whole-tree
    read of the same file (mount, `cat` every file, umount): check renders every view once
    too, so it should take about as long. The effect is the corpus's demo_helloworld.sha
    (one block of each copy is refused by the game) repeated: every refused block is a
    problem and its bytecode view cannot be read, which check must tell apart without
    testing each view against each problem (issue 24: quadratic, 33 s at 4,000 blocks)."""
    source = CORPUS / "sha" / "demo_helloworld.sha"
    if not source.is_file():
        res.note(f"j. {source} is missing: no `check` row for a large effect")
        return
    effect = WORK / f"blocks{blocks}.sha"
    sh(f"{BIN} dev gen-sha {effect} --blocks {blocks} --from {source}")
    mnt = WORK / "mnt-sha"
    mnt.mkdir(parents=True, exist_ok=True)
    unmount(mnt)
    # check exits 2: the effect has problems, which is what is measured.
    check = f"{BIN} check {effect} > /dev/null 2>&1 || [ $? -eq 2 ]"
    # The refused blocks' bytecode views fail to read (EIO), as check reports them.
    read = (f"{BIN} mount {effect} {mnt} -o ro && "
            f"{{ find {mnt} -type f -exec cat {{}} + > /dev/null 2>&1; {BIN} umount {mnt}; }}")
    sh(check)
    checks, reads = [], []
    for _ in range(RUNS):
        checks.append(timed(check))
        reads.append(timed(read))
    res.add(f"j. `shaderfs check` of a {blocks:,}-block .sha (half refused)", median(checks) * 1000,
            "mount + read every file + umount", median(reads) * 1000, 2.0)


def hostile(res, gta, sdp):
    """Mutated archives (bytes flipped, cut short, counts made huge): the daemon's peak
    memory reading the whole tree of each that still mounts, and `shaderfs check`'s on
    each that is refused, against the same for the archive unmutated."""
    import random
    rng = random.Random(12)
    out = WORK / "hostile"
    out.mkdir(exist_ok=True)
    mnt = WORK / "mnt-hostile"
    package = sorted(sdp.glob("*.sdp"))[0]
    for name, source, count in (("SGD2 database", gta, 6), (".sdp package", package, 24)):
        clean = source.read_bytes()

        def peak(path):
            """(peak KiB, how): the daemon's after a whole-tree read, or check's."""
            unmount(mnt)
            mnt.mkdir(parents=True, exist_ok=True)
            if sh(f"{BIN} mount {path} {mnt} -o ro", check=False).returncode == 0:
                sh(READ_ALL.format(d=mnt) + " 2>/dev/null", check=False)
                kib = daemon_peak_kib(mnt)
                unmount(mnt)
                return kib, "mounted"
            return peak_of_command_kib([str(BIN), "check", str(path)]), "refused"

        base, _ = peak(source)
        peaks, mounted_count = [], 0
        for i in range(count):
            data = bytearray(clean)
            kind = i % 3
            if kind == 0:
                for _ in range(16):
                    data[rng.randrange(len(data))] = rng.randrange(256)
            elif kind == 1:
                del data[rng.randrange(len(data)):]
            else:
                for _ in range(4):
                    at = rng.randrange(max(1, len(data) - 4)) & ~3
                    data[at:at + 4] = (0x7FFFFFFF).to_bytes(4, "little")
            path = out / f"{i}{source.suffix}"
            path.write_bytes(bytes(data))
            kib, how = peak(path)
            if kib:
                peaks.append(kib)
                mounted_count += how == "mounted"
        if peaks and base:
            res.add(f"g. hostile {name}s: peak memory, worst of {len(peaks)} mutated "
                    f"({mounted_count} mounted and read whole, the rest refused)",
                    max(peaks) / 1024, f"the {name} unmutated", base / 1024, unit="MiB")
    shutil.rmtree(out, ignore_errors=True)


MSD3D = ROOT.parent / "shared" / "tools" / "msd3d"
HLSL_PROFILES = ("ps_2_0", "ps_3_0", "vs_2_0", "vs_3_0")
HELDOUT = ROOT / "src" / "shader" / "hlsl" / "testdata" / "heldout"
# Compiles timed per source and profile, ours (after one not counted) and Microsoft's.
HLSL_OURS_RUNS = int(os.environ.get("BENCH_HLSL_RUNS", "20"))
HLSL_MS_RUNS = int(os.environ.get("BENCH_HLSL_MS_RUNS", "50"))
# Every Nth source and profile only, for Microsoft's times (1: all of them).
HLSL_EVERY = int(os.environ.get("BENCH_HLSL_EVERY", "1"))


class Pair:
    """One source and profile Microsoft compiled: its golden, and what is measured of it."""

    def __init__(self, src, profile, golden, flags=0):
        self.src, self.profile, self.golden, self.flags = src, profile, golden, flags
        # Our microseconds per compile, a figure a pass: as the process runs ("free"), and
        # with it held to one CPU ("one CPU").
        self.ours_us = {"free": [], "one CPU": []}
        self.slots = None         # (ours, Microsoft's), where ours compiles it
        self.ms_us = None         # Microsoft's microseconds per compile
        self.ms_setup_us = None   # what its first compile in a process took beyond that
        self.ms_failed = None     # why msd3d gave no figure

    @property
    def name(self):
        return f"{Path(self.src).stem}.{self.profile}"

    def ours(self, arm="free"):
        return median(self.ours_us[arm])


def corpus_pairs(folder):
    """Every golden of the vkd3d corpus, as the corpus test (src/shader/hlsl/corpus.rs)
    takes them: `NAME.sectionK.PROFILE.bin` for an SM2/3 profile, with the source
    `NAME.sectionK.hlsl` beside it, entry `main`, and the flags index.json says Microsoft
    compiled it with."""
    flags = {}
    index = folder / "index.json"
    if index.is_file():
        for f in json.loads(index.read_text()).get("files", []):
            for section in f.get("sections", []):
                for golden in section.get("goldens", []):
                    if golden.get("bin") and golden.get("flags"):
                        flags[golden["bin"]] = int(golden["flags"], 16)
    pairs = []
    for golden in sorted(folder.glob("*.bin")):
        source, _, profile = golden.stem.rpartition(".")
        src = folder / f"{source}.hlsl"
        if profile in HLSL_PROFILES and src.is_file():
            pairs.append(Pair(src, profile, golden, flags.get(golden.name, 0)))
    return pairs


def heldout_pairs():
    """The held-out set: profiles.txt, `SOURCE PROFILE…` a line, entry main, flags 0."""
    pairs = []
    for line in (HELDOUT / "profiles.txt").read_text().splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        for profile in words[1:]:
            pairs.append(Pair(HELDOUT / f"{words[0]}.hlsl", profile,
                              HELDOUT / f"{words[0]}.{profile}.bin"))
    return pairs


def time_ours(pairs, list_file, arm):
    """One pass of `shaderfs dev hlsl-time --list` over `pairs`: one process for all of
    them, each timed in process; adds a figure to each pair ours compiles, and its slots
    and the golden's (both counted by our disassembler, as the corpus test counts them).
    Arm "one CPU" runs it under `taskset` on the first CPU this process may use."""
    list_file.write_text("".join(f"{p.src}\t{p.profile}\tmain\t{p.flags:#x}\t{p.golden}\n"
                                 for p in pairs))
    pin = f"taskset -c {min(os.sched_getaffinity(0))} " if arm == "one CPU" else ""
    cmd = f"{pin}{BIN} dev hlsl-time --list {list_file} -n {HLSL_OURS_RUNS}"
    out = sh(cmd).stdout.splitlines()
    if len(out) != len(pairs):
        sys.exit(f"bench: dev hlsl-time printed {len(out)} lines for {len(pairs)} compiles")
    for p, line in zip(pairs, out):
        src, profile, _, micros, ours, ms = line.split("\t")
        assert (src, profile) == (str(p.src), p.profile), line
        if micros != "refused":
            p.ours_us[arm].append(float(micros))
            if ours != "-" and ms != "-":
                p.slots = (int(ours), int(ms))


def msd3d(p, runs, timeout=120):
    """Microsoft's mean microseconds per compile over `runs` compiles in one msd3d
    process (d3dcompiler_43, flags 0), or (None, why)."""
    cmd = [str(MSD3D), "time", p.src.name, p.profile, "main", "d3dcompiler_43.dll", str(runs)]
    # Standard error not read: msd3d hands it to a filter that Wine's server, left running
    # after the call, keeps open, and reading it would wait seconds each time for its end
    # (for the server to exit). Only a failure is run again to read its messages.
    try:
        out = subprocess.run(cmd, cwd=p.src.parent, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=timeout)
        if out.returncode != 0:
            again = subprocess.run(cmd, cwd=p.src.parent, capture_output=True, text=True,
                                   timeout=timeout)
            why = (again.stderr.strip().splitlines() or ["no message"])[-1]
            return None, f"exit {out.returncode}: {why}"
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    try:
        return float(out.stdout.split()[-1]), None
    except (ValueError, IndexError):
        return None, f"printed {out.stdout.strip()!r}"


def time_microsofts(pairs):
    """Microsoft's in-process time per compile for each pair: `msd3d time` prints the mean
    over its N compiles, the first of which also pays D3DCompiler_43's set-up in the new
    process (several times a small shader's compile); so each pair is run twice, with 1
    and with 1 + HLSL_MS_RUNS compiles, and the difference of the totals is the time of
    HLSL_MS_RUNS compiles after the first, as ours is timed after one not counted."""
    for p in pairs:
        one, why = msd3d(p, 1)
        more, why_more = msd3d(p, 1 + HLSL_MS_RUNS) if one is not None else (None, why)
        if more is None:
            p.ms_failed = why_more
            continue
        p.ms_us = ((1 + HLSL_MS_RUNS) * more - one) / HLSL_MS_RUNS
        p.ms_setup_us = one - p.ms_us


def msd3d_unavailable():
    """Why msd3d cannot time Microsoft's compiler here, or None. Its first use installs
    Wine and the DLLs, which takes minutes."""
    if not MSD3D.is_file():
        return f"{MSD3D} is missing"
    probe = HELDOUT / "mpc_grayscale_sepia.hlsl"
    out, why = msd3d(Pair(probe, "ps_2_0", None), 1, timeout=1800)
    return None if out is not None else f"`msd3d time` failed ({why})"


def hlsl_compiler(res):
    """k. The HLSL compiler (issue 26) against Microsoft's d3dcompiler_43: the time per
    compile, in process for both (no process start-up), summed over every source and
    profile of the vkd3d corpus both compile (and of the held-out set); and the
    instruction slots of ours against Microsoft's goldens over both."""
    started = time.perf_counter()
    folder = CORPUS / "hlsl" / "vkd3d"
    if not folder.is_dir():
        res.note(f"{HLSL_MARK}{folder} is missing: no rows for the HLSL compiler")
        return
    WORK.mkdir(parents=True, exist_ok=True)
    sets = (("vkd3d corpus", corpus_pairs(folder)), ("held-out set", heldout_pairs()))
    # Targets of issue 26, for the corpus: time at most 0.1x, slots at most 1.05x.
    targets = {"vkd3d corpus": (0.1, 1.05), "held-out set": (None, None)}
    passes = 3
    for _ in range(passes):
        for arm in ("free", "one CPU"):
            for label, pairs in sets:
                time_ours(pairs, WORK / "hlsl-time.list", arm)
    ours_took = time.perf_counter() - started

    for label, pairs in sets:
        counted = [p for p in pairs if p.slots]
        ours, ms = (sum(p.slots[i] for p in counted) for i in (0, 1))
        res.add(f"{HLSL_MARK}HLSL instruction slots, {label} ({len(counted)} of the {len(pairs)} "
                f"shaders Microsoft compiles: those ours compiles)", ours,
                "d3dcompiler_43's goldens", ms, targets[label][1], unit="slots", places=0)
        above = sorted((p for p in counted if p.slots[0] > p.slots[1]),
                       key=lambda p: p.slots[1] - p.slots[0])
        res.note(f"{HLSL_MARK}slots, {label}: ours uses more than Microsoft's in {len(above)} shaders, "
                 f"fewer in {sum(p.slots[0] < p.slots[1] for p in counted)}; most above: "
                 + ", ".join(f"{p.name} {p.slots[0]} against {p.slots[1]}" for p in above[:5]))

    why = msd3d_unavailable()
    setups = []  # ms: what Microsoft's first compile in a process took beyond the others
    peer_name = "d3dcompiler_43 in process (`msd3d time`, under Wine)"
    for label, pairs in sets:
        # Microsoft's time at flags 0 (all `msd3d time` can pass): pairs whose golden was
        # made with other flags are left out of both sides, as are those ours refuses.
        timed = [p for p in pairs if p.ours_us["free"] and p.flags == 0]
        sampled = timed[::HLSL_EVERY]
        what = (f"{HLSL_MARK}HLSL compile time, {label}: sum over {{n}} sources and profiles "
                f"of the time per compile, in process{{how}}")
        arms = (("free", ""), ("one CPU", ", ours held to one CPU (`taskset`)"))
        total = lambda ps, arm: sum(p.ours(arm) for p in ps) / 1000
        if why:
            for arm, how in arms:
                res.unmeasured(what.format(n=len(timed), how=how), total(timed, arm), peer_name,
                               why, targets[label][0])
            continue
        time_microsofts(sampled)
        both = [p for p in sampled if p.ms_us is not None]
        ms_total = sum(p.ms_us for p in both) / 1000
        for arm, how in arms:
            res.add(what.format(n=len(both), how=how), total(both, arm), peer_name, ms_total,
                    targets[label][0])
        failed = [p for p in sampled if p.ms_us is None]
        setups.extend(p.ms_setup_us / 1000 for p in both)
        sample = ("all" if HLSL_EVERY == 1 else
                  f"every {HLSL_EVERY}th in name order (BENCH_HLSL_EVERY)")
        res.note(f"{HLSL_MARK}compile time, {label}: {sample} of the {len(timed)} sources and "
                 f"profiles ours compiles whose golden is at flags 0 (of {len(pairs)})"
                 + (f"; msd3d gave no figure for {len(failed)} ({failed[0].name}: "
                    f"{failed[0].ms_failed})" if failed else "")
                 + f". Per compile, the median: ours {median([p.ours() for p in both]):.0f} us "
                 f"({median([p.ours('one CPU') for p in both]):.0f} us on one CPU), Microsoft's "
                 f"{median([p.ms_us for p in both]):.0f} us; ours's longest: "
                 + ", ".join(f"{p.name} {p.ours():.0f} us" for p in
                             sorted(both, key=lambda p: p.ours(), reverse=True)[:3]))
    res.note(f"{HLSL_MARK}how the HLSL compile times are taken: ours, `shaderfs dev hlsl-time "
             f"--list` (one process for the whole list, every compile on one thread with the "
             f"compiler's 64 MiB stack, as D3DCompile runs on its caller's), the mean of "
             f"{HLSL_OURS_RUNS} compiles after one not counted, the median of {passes} passes; Microsoft's, two `msd3d "
             f"time` runs for each (1 and {1 + HLSL_MS_RUNS} compiles), the difference of their "
             f"totals over {HLSL_MS_RUNS}: the first compile in a process also pays the DLL's "
             f"set-up, which this leaves out, as ours leaves out its first"
             + (f" (the set-up here: median {median(setups):.1f} ms, from {min(setups):.1f} to "
                f"{max(setups):.1f})" if setups else "")
             + f". One pair's figure of Microsoft's varies by that set-up's variation over "
             f"{HLSL_MS_RUNS}; the sum over hundreds much less")
    res.note(f"{HLSL_MARK}the HLSL section took {time.perf_counter() - started:.0f} s (ours "
             f"{ours_took:.0f} s of it)" + (f"; Microsoft's compiler not measured: {why}" if why else ""))


def sm1_packages():
    """Packages of Shader Model 1 shaders, as Oblivion's older packages hold
    (`shaderfs dev gen-sdp` around the corpus's SM1 bytecode from Microsoft's legacy
    compilers, hlsl/legacy/: vs_1_1 and ps_1_1-1_4); None without the corpus."""
    legacy = CORPUS / "hlsl" / "legacy"
    if not legacy.is_dir():
        return None
    sdp = WORK / "Shaders-sm1"
    if not sdp.exists():
        shaders = WORK / "sm1-shaders"
        shaders.mkdir(parents=True, exist_ok=True)
        for f in sorted(legacy.glob("*.bin")):
            if any(f".{p}." in f.name for p in ("vs_1_1", "ps_1_1", "ps_1_2", "ps_1_3", "ps_1_4")):
                shutil.copy(f, shaders / f.name)
        sh(f"{BIN} dev gen-sdp {sdp} --d3d9 {shaders}")
    return sdp


def decompiler(res, sdp):
    """l. The D3D9 decompiler (issue 28) against the disassembler over every shader of each
    package, in process for both (`shaderfs dev decompile-time`: the library calls the
    `asm/` view and a decompiled view make, no process start-up), target 2x, for packages of
    SM2/3 shaders and of SM1 shaders; and a mount of a package with its first listing,
    which renders no view and so decompiles nothing."""
    figures = decompile_rows(res, sdp, "around the corpus's compiled shaders (vs_1_1, SM2 "
                             "and SM3)")
    sm1 = sm1_packages()
    if sm1 is None:
        res.note(f"{DECOMPILE_MARK}SM1 packages not measured: no corpus (hlsl/legacy/)")
    else:
        decompile_rows(res, sm1, "around the corpus's SM1 shaders from Microsoft's legacy "
                       "compilers (vs_1_1, ps_1_1-1_4)")
    decompile_mount(res, sdp, figures)


def decompile_rows(res, sdp, made):
    """The rows of one set of packages: decompiling against disassembling, in process.
    Returns each package's ([disassembly us], [decompile us]) of each pass."""
    packages = sorted(sdp.glob("*.sdp"))
    passes = 3
    figures = {}  # package: ([disassembly us], [decompile us]) of each pass
    shaders = refused = 0
    for _ in range(passes):
        out = sh(f"{BIN} dev decompile-time {' '.join(map(str, packages))} -n {DECOMPILE_RUNS}")
        lines = out.stdout.splitlines()
        if len(lines) != len(packages):
            sys.exit(f"bench: dev decompile-time printed {len(lines)} lines for {len(packages)} packages")
        shaders = refused = 0
        for line in lines:
            path, count, refusals, listing, decompiling = line.split("\t")
            shaders += int(count)
            refused += int(refusals)
            lists, decompiles = figures.setdefault(path, ([], []))
            lists.append(float(listing))
            decompiles.append(float(decompiling))
    listing = sum(median(l) for l, _ in figures.values()) / 1000
    decompiling = sum(median(d) for _, d in figures.values()) / 1000
    res.add(f"{DECOMPILE_MARK}decompiling every shader of the {len(packages)} packages "
            f"{sdp.name}/ ({shaders:,} shaders), in process", decompiling,
            "disassembling the same shaders (`asm/` view)", listing, 2.0)
    ratios = sorted(median(d) / median(l) for l, d in figures.values())
    res.note(f"{DECOMPILE_MARK}decompiler against disassembler: per package {ratios[0]:.2f}x to "
             f"{ratios[-1]:.2f}x (median {median(ratios):.2f}x); per shader "
             f"{decompiling * 1000 / shaders:.0f} us against {listing * 1000 / shaders:.0f} us; "
             f"{refused} of the {shaders:,} shaders refused by the decompiler (their time "
             f"counted); each package the mean of {DECOMPILE_RUNS} passes, the median of "
             f"{passes} runs; the packages are `dev gen-sdp`'s, {made} (the corpus holds no "
             f".sdp)")
    return figures


def decompile_mount(res, sdp, figures):
    """A mount of a package with its first listing renders no view: it decompiles nothing.
    `figures`: the decompile rows' times of `sdp`'s packages."""
    packages = sorted(sdp.glob("*.sdp"))
    if not CAN_DROP:
        res.note(f"{DECOMPILE_MARK}mount of a package not measured: not root")
        return
    package = packages[0]
    mnt = WORK / "mnt-decompile"
    mount_ = f"{BIN} mount {package} {mnt} -o ro"
    listed, read = [], []
    for _ in range(RUNS):
        for cmd, times in ((f"ls {mnt} {mnt}/asm | wc -l", listed),
                           (f"cat {mnt}/asm/* | wc -c", read)):
            unmount(mnt)
            mnt.mkdir(parents=True, exist_ok=True)
            times.append(timed(f"{mount_} && {cmd}"))
    unmount(mnt)
    alone = median(figures[str(package)][1]) / 1000
    res.note(f"{DECOMPILE_MARK}mounting a package renders no view, so it decompiles nothing: "
             f"mount + `ls` of {package.name} and of its asm/ takes {median(listed) * 1000:.1f} "
             f"ms, mount + reading every asm/ view (each shader disassembled as it is read) "
             f"{median(read) * 1000:.1f} ms (warm, medians of {RUNS}); decompiling its shaders "
             f"alone takes {alone:.1f} ms in process")


DECOMPILE_MARK = "l. "
# Passes `dev decompile-time` times for each package (after one not counted).
DECOMPILE_RUNS = int(os.environ.get("BENCH_DECOMPILE_RUNS", "5"))


def built_from():
    """The commit measured, and whether the tree had changes then (this table itself,
    left from the run before, is no change to what was measured)."""
    commit = sh(f"git -C {ROOT} rev-parse --short HEAD", check=False).stdout.strip() or "unknown"
    status = sh(f"git -C {ROOT} status --porcelain", check=False).stdout.splitlines()
    return commit, [line for line in status if not line.endswith("bench/results.md")]


def write_report(res, started, built):
    commit, dirty = built
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem_kib = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal"))
    lines = [
        "# shaderfs benchmark results",
        "",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}",
        f"- commit: {commit}{' (with uncommitted changes)' if dirty else ''}",
        f"- machine: {cpu}, {os.cpu_count()} cores, {mem_kib // 1024} MiB, Linux {platform.release()}",
        f"- runs: median of {RUNS} (cold runs: {max(3, RUNS // 2)}); kernel caches dropped before cold runs: {'yes' if CAN_DROP else 'no (not root)'}",
        "- data: generated by `shaderfs dev gen-sgd2 --full` (12,405 programs, 388 effects) and "
        "`shaderfs dev gen-sdp` (19 packages, 6,000 shaders), and `shaderfs dev gen-sha --blocks 4000` "
        "(the corpus's demo_helloworld.sha repeated)",
        "",
        "| measurement | shaderfs | peer | peer value | ratio | target | met |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += table_rows(res)
    lines += ["", "## Notes", ""] + [f"- {n}" for n in res.notes]
    lines += ["", "Regenerate with `bench/run` (the HLSL compiler's rows alone: `bench/run hlsl`).", ""]
    RESULTS.write_text("\n".join(lines))
    print(f"wrote {RESULTS}")


RESULTS = ROOT / "bench" / "results.md"
# The HLSL compiler's rows and notes begin with this, so that `bench/run hlsl` can replace
# them in a table written by a full run and leave the other rows as they were.
HLSL_MARK = "k. "


def table_rows(res):
    out = []
    for what, ours, peer_name, peer, ratio, target, met, unit, places in res.rows:
        tgt = "" if target is None else (f"≤ {target}×" if target > 0 else f"< {-target} {unit}")
        ok = "" if met is None else ("yes" if met else "**no**")
        if ratio is None:
            peer_cell, ratio_cell = f"not measured: {peer}", ""
        else:
            peer_cell, ratio_cell = f"{peer:.{places}f} {unit}", f"{ratio:.2f}×"
        out.append(f"| {what} | {ours:.{places}f} {unit} | {peer_name} | {peer_cell} | {ratio_cell} | {tgt} | {ok} |")
    return out


def merge_section_report(res, started, built, section):
    """`bench/run SECTION`: that section's rows and notes of this run in place of those in
    results.md, every other row and note kept as the run that wrote them left them, and a
    line in the header saying which run and commit the section's rows come from."""
    mark, what, _ = SECTIONS[section]
    commit, dirty = built
    when = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))
    header = (f"- {mark}rows ({what}): from `bench/run {section}` on {when}, commit "
              f"{commit}{' (with uncommitted changes)' if dirty else ''}; the other rows are from "
              f"the full run above")
    old = RESULTS.read_text().splitlines() if RESULTS.exists() else []
    if not any(line.startswith("| measurement |") for line in old):
        old = ["# shaderfs benchmark results", "",
               "| measurement | shaderfs | peer | peer value | ratio | target | met |",
               "|---|---|---|---|---|---|---|", "", "## Notes", ""]
    kept = [line for line in old if not line.startswith((f"| {mark}", f"- {mark}"))]
    # The header: after its last `- ` line before the table.
    table_at = next(i for i, line in enumerate(kept) if line.startswith("| measurement |"))
    at = max((i for i in range(table_at) if kept[i].startswith("- ")), default=0)
    kept.insert(at + 1, header)
    last_row = max(i for i, line in enumerate(kept) if line.startswith("|"))
    kept[last_row + 1:last_row + 1] = table_rows(res)
    notes_at = next((i for i, line in enumerate(kept) if line == "## Notes"), None)
    if notes_at is None:
        kept += ["", "## Notes", ""]
        notes_at = len(kept) - 2
    last_note = max((i for i in range(notes_at, len(kept)) if kept[i].startswith("- ")),
                    default=notes_at + 1)
    kept[last_note + 1:last_note + 1] = [f"- {n}" for n in res.notes]
    RESULTS.write_text("\n".join(kept).rstrip("\n") + "\n")
    print(f"merged the rows of {what} into {RESULTS}")


# The sections `bench/run SECTION` runs alone: the mark their rows and notes begin with,
# what they measure, and how.
SECTIONS = {
    "hlsl": (HLSL_MARK, "the HLSL compiler", hlsl_compiler),
    "decompile": (DECOMPILE_MARK, "the D3D9 decompiler",
                  lambda res: decompiler(res, sdp_packages())),
}


URING = Path("/sys/module/fuse/parameters/enable_uring")


def uring_for_the_run(res):
    """FUSE over io_uring is the kernel's to allow (`enable_uring`, off by default): root
    turns it on for the run, and `main` puts back what it was."""
    if not URING.exists():
        res.note("FUSE over io_uring: this kernel has none; every figure is over /dev/fuse")
        return None
    was = URING.read_text().strip()
    try:
        URING.write_text("Y")
    except OSError:
        pass
    now = URING.read_text().strip()
    res.note(f"FUSE over io_uring: {'on' if now == 'Y' else 'off'} for this run (the fuse module's "
             f"`enable_uring` was {was}); rows marked `no_uring` are over /dev/fuse")
    return was


def main():
    started = time.time()
    if not BIN.exists():
        sys.exit(f"bench: {BIN} is missing; run bench/run")
    res = Results()
    built = built_from()
    sections = sys.argv[1:]
    if len(sections) == 1 and sections[0] in SECTIONS:
        SECTIONS[sections[0]][2](res)
        merge_section_report(res, started, built, sections[0])
        return
    if sections:
        sys.exit(f"bench: unknown section {' '.join(sections)} "
                 f"({', '.join(f'`{s}`' for s in SECTIONS)}, or none for all)")
    was = uring_for_the_run(res)
    try:
        run_all(res)
    finally:
        if was is not None:
            try:
                URING.write_text(was)
            except OSError:
                pass
    write_report(res, started, built)


def run_all(res):
    gta, sdp = prepare()
    first_answer(res, gta)
    extract_or_mount(res, gta)
    at_once, idle = whole_tree(res, "gta", gta)
    if at_once and idle:
        (anon, file), (idle_anon, _) = at_once, idle
        res.note(f"e. daemon memory after reading the whole SGD2 tree: RssAnon {anon / 1024:.1f} MiB "
                 f"right after, {idle_anon / 1024:.1f} MiB a second and a half later (target under "
                 f"64 MiB: {'met' if idle_anon < 64 * 1024 else 'MISSED'}), RssFile {file / 1024:.1f} MiB")
    whole_tree(res, "sdp", sdp)
    grep_views(res, "sdp", sdp, "wvp", "*.json")
    grep_views(res, "gta", gta, "Wave32", "*.json")
    protocol_floor(res, gta)
    write_back(res, sdp, gta)
    growth(res, gta)
    hostile(res, gta, sdp)
    sha_check(res)
    hlsl_compiler(res)
    decompiler(res, sdp)
    techniques(res, gta, sdp)
    for m in WORK.glob("mnt-*"):
        unmount(m)


if __name__ == "__main__":
    main()
