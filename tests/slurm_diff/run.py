#!/usr/bin/env python3
"""Differential test of Corral's Slurm front end against a real Slurm 22.05 (docs/slurm.md).

Every batch script under cases/ is submitted, with the same command line, to a `corral dev`
cluster and to the Slurm peer of ../shared/peers/slurm/ (started here with accounting, on free
ports, in a temp dir). For each case the harness compares, after normalising the values that
must differ (job ids, times, host and cluster names, the case's directory, pids and ports):

  submit   sbatch's exit code, stdout and stderr
  squeue   `squeue -o` of the held job (every case is submitted with -H, then released)
  pending  `scontrol show job` of the held job, field by field
  final    `scontrol show job` once it ended, field by field (ExitCode=, StdOut=, Command=, ...)
  sacct    `sacct -P` rows of the job and its steps
  files    the names of the files the job left in its directory, and their text; files named
           env.* are environments (`env | sort`), compared variable by variable

A difference is "explained" when a line of explained.txt matches it (CASE-GLOB ARTIFACT
KEY-GLOB  reason); the rest fail the run. Prints a table (case, identical, explained,
failing) and exits 1 on an unexplained difference, 77 when the peer cannot be found.

usage: run.py --bin DIR [--cases DIR] [--only GLOB] [--keep] [-v]
  DIR holds `corral` and its Slurm links (build/src/main).
"""
import argparse
import fnmatch
import json
import os
import random
import re
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
FIRST_ID = 100000  # both sides' first job id (Corral's set in its store before the run)
SQUEUE_FORMAT = "%i|%j|%T|%r|%D|%C|%m|%l|%b|%E|%P|%a|%u|%Q|%o"
SACCT_FORMAT = ("JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode,NNodes,ReqMem,"
                "Timelimit,AllocTRES,User")
ENV_SKIP = {"_", "SHLVL", "OLDPWD"}  # the shell's own
# Values that must differ from run to run (pids, ports, run times): compared for presence.
VOLATILE_ENV = {"SLURM_TASK_PID", "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT",
                "SLURM_SRUN_COMM_HOST", "SLURM_LAUNCH_NODE_IPADDR", "SLURM_WORKING_CLUSTER"}
VOLATILE_FIELDS = {"RunTime", "Priority", "LastSchedEval", "AccrueTime"}


def volatile_field(key):
    return key.split(":")[-1] in VOLATILE_FIELDS


def free_port_block(n):
    """A base port p with p..p+n-1 free on 127.0.0.1."""
    for _ in range(200):
        base = random.randint(20000, 45000)
        ok = True
        for p in range(base, base + n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base
    raise RuntimeError("no free port block")


class Case:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)[:-3]
        self.text = open(path).read()
        self.args, self.post, self.env, self.pre, self.shell = [], [], {}, None, None
        for line in self.text.splitlines():
            m = re.match(r"#\s*diff:\s*(\w+)\s*=?\s*(.*)$", line)
            if not m:
                continue
            key, value = m.group(1), m.group(2)
            if key == "args":
                self.args = shlex.split(value)
            elif key == "env":
                k, _, v = value.partition("=")
                self.env[k] = v
            elif key == "post":  # the script's arguments
                self.post = shlex.split(value)
            elif key == "pre":  # a command run in the case's directory first
                self.pre = value
            elif key == "command":  # a command line run instead of sbatch (salloc, srun)
                self.shell = value


class Side:
    """One cluster: its client environment, and what each case left."""

    def __init__(self, name, env, root):
        self.name, self.env, self.root = name, env, root
        self.hosts, self.cluster, self.path_prefix = [], "", ""
        self.results = {}

    def run(self, argv, cwd=None, extra_env=None, timeout=60, input_text=None):
        env = dict(self.env)
        env.update(extra_env or {})
        try:
            p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                               timeout=timeout, input=input_text)
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return 124, "", "timeout"


def start_slurm(tmp, peer_dir, log):
    d = os.path.join(tmp, "slurm")
    base = free_port_block(12)
    # Job ids far from any other number in the output, so that they normalise safely.
    env = dict(os.environ, SLURM_ANCHOR_DIR=d, SLURM_ANCHOR_CTLD_PORT=str(base),
               SLURM_ANCHOR_ACCOUNTING="1", SLURM_ANCHOR_EXTRA_CONF="FirstJobId=%d" % FIRST_ID)
    p = subprocess.run([os.path.join(peer_dir, "start.sh")], env=env, capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        log(p.stdout + p.stderr)
        raise RuntimeError("the Slurm peer did not start (start.sh exit %d)" % p.returncode)
    cenv = dict(os.environ, SLURM_CONF=os.path.join(d, "etc", "slurm.conf"))
    for k in list(cenv):
        if k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SQUEUE_", "SACCT_", "CORRAL_")) \
                and k != "SLURM_CONF":
            del cenv[k]
    side = Side("slurm", cenv, d)
    side.stop = lambda: subprocess.run([os.path.join(peer_dir, "stop.sh")],
                                       env=env, capture_output=True, timeout=120)
    _, out, _ = side.run(["sinfo", "-h", "-N", "-o", "%N"])
    side.hosts = out.split()
    side.cluster = "anchor"
    return side


def start_corral(tmp, bindir, log):
    d = os.path.join(tmp, "corral")
    home = os.path.join(d, "home")
    os.makedirs(home)
    conf = os.path.join(d, "scheduling.toml")
    with open(conf, "w") as f:
        f.write('[[partition]]\nname = "debug"\ndefault = true\n')
    port = free_port_block(1)
    env = dict(os.environ, HOME=home, PATH=bindir + ":" + os.environ.get("PATH", ""))
    for k in list(env):
        if k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "SQUEUE_", "SACCT_", "CORRAL_")):
            del env[k]
    state = os.path.join(d, "state")

    def launch():
        logf = open(os.path.join(d, "dev.log"), "w")
        proc = subprocess.Popen([os.path.join(bindir, "corral"), "dev", "--nodes", "1",
                                 "--gpus-per-node", "8", "--cpus-per-node", "64",
                                 "--mem-per-node", "64000", "--port", str(port), "--state-dir",
                                 state, "--config", conf],
                                env=env, stdout=logf, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if "Press Ctrl-C" in open(os.path.join(d, "dev.log")).read():
                return proc
            if proc.poll() is not None:
                raise RuntimeError("corral dev exited: " + open(os.path.join(d, "dev.log")).read())
            time.sleep(0.1)
        proc.terminate()
        raise RuntimeError("corral dev did not start in 60 s")
    # Started once to make its store, stopped, its job counter moved to FIRST_ID, restarted.
    proc = launch()
    proc.terminate()
    proc.wait(30)
    db = sqlite3.connect(os.path.join(state, "corral.db"))
    db.execute("INSERT INTO meta (key, value) VALUES ('next_job_id', ?) ON CONFLICT (key) "
               "DO UPDATE SET value = excluded.value", (str(FIRST_ID),))
    db.commit()
    db.close()
    proc = launch()
    side = Side("corral", env, d)
    side.path_prefix = bindir + ":"

    def stop():
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    side.stop = stop
    _, out, _ = side.run(["sinfo", "-h", "-N", "-o", "%N"])
    side.hosts = out.split()
    # The dev cluster's name (SLURM_CLUSTER_NAME, the iss of its tokens), as `corral dev`
    # records it.
    with open(os.path.join(home, ".corral", "dev.json")) as f:
        side.cluster = json.load(f).get("cluster") or "corral"
    return side


# ----------------------------------------------------------------------------- running cases

def submit(side, case, workroot):
    d = os.path.join(workroot, side.name, case.name)
    os.makedirs(d)
    shutil.copy(case.path, os.path.join(d, "job.sh"))
    r = {"dir": d, "ids": []}
    if case.pre:
        side.run(["bash", "-c", case.pre], cwd=d)
    if case.shell:
        rc, out, err = side.run(["bash", "-c", case.shell], cwd=d, extra_env=case.env, timeout=90)
        r["submit"] = (rc, out, err)
        if not case.shell.startswith("sbatch"):
            return r
    else:
        argv = ["sbatch", "-H"] + case.args + ["job.sh"] + case.post
        rc, out, err = side.run(argv, cwd=d, extra_env=case.env)
        r["submit"] = (rc, out, err)
    m = re.search(r"(\d+)", out) if rc == 0 else None
    if m:
        r["ids"].append(m.group(1))
    return r


def capture_pending(side, r):
    if not r["ids"]:
        return
    jid = r["ids"][0]
    r["squeue"] = side.run(["squeue", "-h", "-j", jid, "-o", SQUEUE_FORMAT])[1]
    r["pending"] = side.run(["scontrol", "show", "job", jid])[1]
    side.run(["scontrol", "release", jid])


# Pending reasons that pass by themselves; any other (BadConstraints, PartitionNodeLimit,
# DependencyNeverSatisfied, ...) means the job never runs, and the harness stops waiting for it.
TRANSIENT_REASONS = {"None", "Priority", "Resources", "Dependency", "BeginTime",
                     "JobArrayTaskLimit", "Prolog", "NodeDown"}


def settled(side):
    """No job runs, and every pending one waits for something that never comes."""
    rc, out, _ = side.run(["squeue", "-h", "-o", "%T|%r"])
    if rc != 0:
        return False
    for line in out.split():
        state, _, reason = line.partition("|")
        if state != "PENDING" or reason in TRANSIENT_REASONS:
            return False
    return True


def capture_final(side, r):
    if not r["ids"]:
        return
    jid = r["ids"][0]
    r["final"] = side.run(["scontrol", "show", "job", jid])[1]
    r["sacct"] = side.run(["sacct", "-P", "-j", jid, "--format=" + SACCT_FORMAT])[1]


def read_files(r):
    files = {}
    for root, _, names in os.walk(r["dir"]):
        for n in names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, r["dir"])
            if rel == "job.sh":
                continue
            try:
                files[rel] = open(p, errors="replace").read()
            except OSError as e:
                files[rel] = "<unreadable: %s>" % e
    r["files"] = files


# ----------------------------------------------------------------------------- normalising

class Normaliser:
    def __init__(self, side, r, ids):
        self.side, self.r = side, r
        # every job id of this case on this side, in order: <J0>, <J1>, ...
        self.ids = {}
        for i, jid in enumerate(sorted(set(ids), key=int)):
            self.ids[jid] = "<J%d>" % i
        # an id anywhere, zero-padded too (%12j), but not inside a longer number
        self.id_re = re.compile(r"(?<!\d)0*(%s)(?!\d)" % "|".join(
            sorted(self.ids, key=len, reverse=True)))

    def __call__(self, text):
        if text is None:
            return None
        t = text.replace(self.r["dir"], "<DIR>")
        if self.side.path_prefix:
            t = t.replace(self.side.path_prefix, "")
        t = t.replace(self.side.root, "<ROOT>")
        t = re.sub(r"(?m)^HOME=.*$", "HOME=<HOME>", t)
        for h in self.side.hosts + [socket.gethostname().split(".")[0]]:
            t = re.sub(r"\b%s\b" % re.escape(h), "<HOST>", t)
        # The cluster's name as a word of its own, not inside a path ("dev" in /dev/null).
        t = re.sub(r"(?<![\w/.-])%s(?![\w/.-])" % re.escape(self.side.cluster), "<CLUSTER>", t)
        t = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", "<TIME>", t)
        t = re.sub(r"\b\d+:\d\d:\d\d\b", "<DUR>", t) if False else t
        if self.ids:
            t = self.id_re.sub(lambda m: self.ids[m.group(1)], t)
        return t


def job_ids_of(side, r):
    """The case's job ids: the submitted one, array tasks, and jobs its script submitted."""
    ids = set(r["ids"])
    texts = [r.get("final", ""), r.get("pending", ""), r.get("sacct", "")]
    texts += list(r.get("files", {}).values())
    texts.append(r["submit"][1] if r.get("submit") else "")
    for t in texts:
        for m in re.finditer(r"(?<!\d)(100\d{3})(?!\d)", t or ""):
            ids.add(m.group(1))  # every id is FIRST_ID (100000) to 100999
        for m in re.finditer(r"(?:JobId=|ArrayJobId=|Submitted batch job |SLURM_JOB_ID=|"
                             r"SLURM_JOBID=|SLURM_ARRAY_JOB_ID=|job allocation |^JOBID=)(\d+)",
                             t or "", re.M):
            ids.add(m.group(1))
        for m in re.finditer(r"^(\d+)(?:_\d+)?(?:\.\w+)?\|", t or "", re.M):
            ids.add(m.group(1))
    return {i for i in ids if FIRST_ID <= int(i) < FIRST_ID + 1000}


def fields(text):
    """`scontrol show job` text -> {key: value}; the records of an array's tasks are keyed
    by task ("task3:StdOut"), the first record's fields by name alone."""
    out = {}
    for block in re.split(r"\n\s*\n", (text or "").strip()):
        pairs = re.findall(r"(\S+?)=(.*?)(?=\s+\S+?=|\s*$)", " ".join(block.split()))
        task = dict(pairs).get("ArrayTaskId")
        prefix = "task%s:" % task if task is not None else ""
        for k, v in pairs:
            key, n = prefix + k, 2
            while key in out:
                key = "%s%s#%d" % (prefix, k, n)
                n += 1
            out[key] = v
    return out


def env_of(text):
    out = {}
    for line in (text or "").splitlines():
        k, eq, v = line.partition("=")
        if eq and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", k) and k not in ENV_SKIP:
            out[k] = v
    return out


# ----------------------------------------------------------------------------- comparing

def load_explained(path):
    rules = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 3)
        if len(parts) < 4:
            raise SystemExit("explained.txt: expected CASE ARTIFACT KEY reason: " + line)
        rules.append(parts)
    return rules


def matches(value, globs):
    """`globs`: comma-separated fnmatch patterns."""
    return any(fnmatch.fnmatchcase(value, g) for g in globs.split(","))


def explained(rules, case, artifact, key):
    for c, a, k, why in rules:
        if matches(case, c) and matches(artifact, a) and matches(key, k):
            return why
    return None


# When the peer's backfill scheduler, not its main scheduler, starts a job (it does when its
# main pass is slow, on a loaded machine), Slurm records Scheduler=Backfill and the year that
# backfill plans an unlimited job with (365-00:00:00) as its time limit. Corral has one
# scheduler. Such a job's peer side is read as the main scheduler's (docs/slurm.md).
BACKFILL_YEAR = "365-00:00:00"


def peer_backfilled(rs, ns):
    return fields(ns(rs.get("final"))).get("Scheduler") == "Backfill"


def compare_case(case, rs, rc, ns, nc):
    """Yields (artifact, key, slurm value, corral value) for every compared item."""
    backfilled = peer_backfilled(rs, ns)

    def unyear(value, ours):
        return "UNLIMITED" if backfilled and value == BACKFILL_YEAR and ours == "UNLIMITED" \
            else value
    s_sub, c_sub = rs["submit"], rc["submit"]
    yield "submit", "rc", str(s_sub[0]), str(c_sub[0])
    yield "submit", "stdout", ns(s_sub[1]).strip(), nc(c_sub[1]).strip()
    yield "submit", "stderr", ns(s_sub[2]).strip(), nc(c_sub[2]).strip()
    for art in ("squeue",):
        if art in rs or art in rc:
            a = ns(rs.get(art, "")).strip().split("|")
            b = nc(rc.get(art, "")).strip().split("|")
            names = SQUEUE_FORMAT.split("|")
            for i, name in enumerate(names):
                va, vb = a[i] if i < len(a) else "<none>", b[i] if i < len(b) else "<none>"
                yield art, name, unyear(va, vb) if name == "%l" else va, vb
    for art in ("pending", "final"):
        if art in rs or art in rc:
            fa, fb = fields(ns(rs.get(art))), fields(nc(rc.get(art)))
            for f in (fa, fb):
                for k in [k for k in f if volatile_field(k)]:
                    f[k] = "<set>"
            if backfilled:
                if fa.get("Scheduler") == "Backfill":
                    fa["Scheduler"] = "Main"
                for k in [k for k in fa if k.split(":")[-1] == "TimeLimit"]:
                    fa[k] = unyear(fa[k], fb.get(k))
            for k in sorted(set(fa) | set(fb)):
                yield art, k, fa.get(k, "<none>"), fb.get(k, "<none>")
    if "sacct" in rs or "sacct" in rc:
        la = [l for l in ns(rs.get("sacct", "")).splitlines()]
        lb = [l for l in nc(rc.get("sacct", "")).splitlines()]
        head = la[0].split("|") if la else []
        rows_a = {row.split("|")[0]: row.split("|") for row in la[1:]}
        rows_b = {row.split("|")[0]: row.split("|") for row in lb[1:]}
        for rid in sorted(set(rows_a) | set(rows_b)):
            ra, rb = rows_a.get(rid), rows_b.get(rid)
            if ra is None or rb is None:
                yield "sacct", rid, "present" if ra else "<none>", "present" if rb else "<none>"
                continue
            for i, h in enumerate(head):
                va, vb = ra[i] if i < len(ra) else "", rb[i] if i < len(rb) else ""
                yield "sacct", rid + ":" + h, unyear(va, vb) if h == "Timelimit" else va, vb
    fa = {ns(k): v for k, v in rs.get("files", {}).items()}
    fb = {nc(k): v for k, v in rc.get("files", {}).items()}
    for name in sorted(set(fa) | set(fb)):
        if name not in fa or name not in fb:
            yield "files", name, "present" if name in fa else "<none>", \
                "present" if name in fb else "<none>"
            continue
        if os.path.basename(name).startswith("env."):
            ea, eb = env_of(ns(fa[name])), env_of(nc(fb[name]))
            for e in (ea, eb):
                for k in VOLATILE_ENV & set(e):
                    e[k] = "<set>"
            for k in sorted(set(ea) | set(eb)):
                yield "env:" + name, k, ea.get(k, "<none>"), eb.get(k, "<none>")
        else:
            yield "files", name, ns(fa[name]), nc(fb[name])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--cases", default=os.path.join(HERE, "cases"))
    ap.add_argument("--explained", default=os.path.join(HERE, "explained.txt"))
    ap.add_argument("--peer", default=None)
    ap.add_argument("--only", default="*")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    o = ap.parse_args()
    started = time.time()
    log = lambda s: print(s, file=sys.stderr, flush=True)
    # The peer's scripts: --peer, $CORRAL_SLURM_PEER, else shared/peers/slurm beside the
    # repository or beside one of its parent directories (CI: ../shared).
    peer = o.peer or os.environ.get("CORRAL_SLURM_PEER", "")
    if not peer:
        d = os.path.normpath(os.path.join(HERE, "..", ".."))
        while True:
            cand = os.path.join(os.path.dirname(d), "shared", "peers", "slurm")
            if os.path.exists(os.path.join(cand, "start.sh")) or os.path.dirname(d) == d:
                peer = cand
                break
            d = os.path.dirname(d)
    if not os.path.exists(os.path.join(peer, "start.sh")):
        log("slurm_diff: no Slurm peer at %s; skipped" % peer)
        return 77
    rules = load_explained(o.explained)
    cases = [Case(os.path.join(o.cases, f)) for f in sorted(os.listdir(o.cases))
             if f.endswith(".sh") and fnmatch.fnmatchcase(f[:-3], o.only)]
    bindir = os.path.abspath(o.bin)
    tmp = tempfile.mkdtemp(prefix="slurm-diff-")
    os.chmod(tmp, 0o755)
    sides = []
    try:
        with ThreadPoolExecutor(2) as ex:
            fs = ex.submit(start_slurm, tmp, peer, log)
            fc = ex.submit(start_corral, tmp, bindir, log)
            for f in (fs, fc):
                try:
                    sides.append(f.result())
                except Exception as e:  # noqa: BLE001 - the other side is stopped below
                    log("slurm_diff: %s" % e)
        if len(sides) != 2:
            return 1
        slurm, corral = sides
        log("slurm_diff: both clusters up in %.1f s; %d cases" % (time.time() - started,
                                                                   len(cases)))
        work = os.path.join(tmp, "work")
        pool = ThreadPoolExecutor(8)
        for side in sides:
            futs = {c.name: pool.submit(submit, side, c, work) for c in cases}
            for c in cases:
                side.results[c.name] = futs[c.name].result()
        for side in sides:
            list(pool.map(lambda c: capture_pending(side, side.results[c.name]), cases))
        deadline = time.time() + 150
        while time.time() < deadline and not all(settled(s) for s in sides):
            time.sleep(0.5)
        for side in sides:
            if not settled(side):
                log("slurm_diff: %s: jobs still running after 150 s:\n%s" % (
                    side.name, side.run(["squeue", "-o", "%i %j %T %r"])[1]))
        time.sleep(1)  # output files flushed, accounting written
        for side in sides:
            list(pool.map(lambda c: capture_final(side, side.results[c.name]), cases))
            for c in cases:
                read_files(side.results[c.name])
        pool.shutdown()
        # compare
        total = [0, 0, 0]
        failures, explained_lines = [], []
        rows = []
        for c in cases:
            rs, rc = slurm.results[c.name], corral.results[c.name]
            ns = Normaliser(slurm, rs, job_ids_of(slurm, rs))
            nc = Normaliser(corral, rc, job_ids_of(corral, rc))
            counts = [0, 0, 0]
            for art, key, a, b in compare_case(c, rs, rc, ns, nc):
                if a == b:
                    counts[0] += 1
                    continue
                why = explained(rules, c.name, art, key)
                if why:
                    counts[1] += 1
                    explained_lines.append("%s %s %s: %s" % (c.name, art, key, why))
                else:
                    counts[2] += 1
                    failures.append("%s %s %s\n    slurm:  %r\n    corral: %r" % (
                        c.name, art, key, a, b))
            rows.append((c.name, counts))
            total = [x + y for x, y in zip(total, counts)]
        print("%-36s %9s %9s %8s" % ("case", "identical", "explained", "failing"))
        for name, (i, e, f) in rows:
            print("%-36s %9d %9d %8d" % (name, i, e, f))
        print("%-36s %9d %9d %8d" % ("TOTAL (%d cases)" % len(cases), *total))
        clean = sum(1 for _, c in rows if c[1] == 0 and c[2] == 0)
        print("cases: %d, all identical: %d, with explained differences only: %d, failing: %d" % (
            len(rows), clean, sum(1 for _, c in rows if c[1] > 0 and c[2] == 0),
            sum(1 for _, c in rows if c[2] > 0)))
        if o.verbose:
            print("\nexplained differences:")
            for line in explained_lines:
                print("  " + line)
        if failures:
            print("\nunexplained differences:")
            for line in failures:
                print("  " + line)
        print("run time: %.1f s" % (time.time() - started))
        return 1 if failures else 0
    finally:
        for side in sides:
            try:
                side.stop()
            except Exception as e:  # noqa: BLE001 - report, keep stopping the other
                log("slurm_diff: stopping %s: %s" % (side.name, e))
        if not o.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            log("slurm_diff: kept " + tmp)


if __name__ == "__main__":
    sys.exit(main())
