#!/usr/bin/env python3
"""Regenerate tests/data/mscclpp/: MSCCL++ execution plans written by MSCCL++'s own DSL programs.

Runs the DSL test programs, executor-test algorithms, default algorithms and examples of an MSCCL++
checkout with python3, with only MSCCL++'s pure-Python DSL (python/mscclpp/language, plus
python/mscclpp/default_algos and python/mscclpp/__main__.py) on the path, under an empty
`mscclpp/__init__.py` so that the compiled `_mscclpp` module is never imported. Writes each plan the
program prints, a README.md naming the MSCCL++ commit, every file's source and exact command, and a
summary of each plan (collective, ranks, protocol, op types, limits of docs/mscclpp.md §7).

Deterministic: PYTHONHASHSEED=0 (the DSL keeps channel ids and channel types in sets), a fixed
environment, files and tables in a fixed order, no timestamps.

MSCCL++'s own JSON files (test/execution-files, test/executor-tests/execution-plans) are not copied
into the corpus; the README says which of them a generated plan reproduces byte for byte.
--copy-shipped DIR copies them to a directory of your choice for local use.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "mscclpp")

# Op names execution_plan.cc accepts (getOpType, lines 25-89 at 1f5f065).
PARSER_OPS = {
    "nop", "barrier", "put", "pws", "pwsf", "get", "copy", "signal", "wait", "flush", "re", "res", "rre",
    "rres", "ppkt", "rppkt", "respkt", "cpkt", "upkt", "repkt", "recpkt", "recspkt", "glres", "gstore",
    "gstorepkt", "rlxsignal", "rlxwait", "pipeline", "sem_acquire", "sem_release",
}
# Limits of execution_common.hpp (docs/mscclpp.md section 7).
MAX_OPERATION = 64
MAX_CHANNEL = 16
MAX_CHANNEL_PER_OPERATION = 8
MAX_BUFFS_PER_OPERATION = 2 + 8
MAX_DEVICE_SYNCERS = 16
MAX_DEVICE_SEMAPHORES = 16

# Entries of the corpus directory this script writes (and so may delete).
OWNED = {"README.md", "executor-tests", "dsl-tests", "default_algos", "examples"}

DSL_TESTS = "python/mscclpp/language/tests"
EXEC_ALGOS = "test/executor-tests/algos"
SHIPPED_DIRS = ["test/execution-files", "test/executor-tests/execution-plans"]

# The executor-test algorithms, with the plan names their shipped JSON files carry.
EXEC_TESTS = [
    ("reduce", "reduce", []),
    ("reduce_nvls", "allreduce_nvls", ["--num_gpus", "2"]),
    ("reduce_nvls_pipeline", "allreduce_nvls_pipeline", ["--num_gpus", "2"]),
    ("reduce_pack", "reduce_pack", []),
    ("reduce_pack_tbg", "reduce_pack_tbg", []),
    ("reduce_tbg", "reduce_tbg", []),
    ("transfer_pack", "transfer_pack", []),
    ("transfer_pack_tbg", "transfer_pack_tbg", []),
]

UNIT_TESTS = [
    "barrier_test", "copy_packet_test", "copy_test", "flush/flush_fuse_test", "flush/flush_test",
    "get/get_fuse_test", "get/get_test", "pipeline_test", "put/put_fuse_test", "put/put_test",
    "put/put_with_signal_and_flush_test", "put/put_with_signal_fuse_test", "put/put_with_signal_test",
    "put_packet_test", "read_put_packet_test", "read_reduce/read_reduce_fuse_test",
    "read_reduce/read_reduce_test", "read_reduce_send_test", "reduce/reduce_fuse_test", "reduce/reduce_test",
    "reduce_copy_packet_test", "reduce_copy_send_packet_test", "reduce_packet/reduce_packets_fuse_test",
    "reduce_packet/reduce_packets_test", "reduce_send_packet_test", "reduce_send_test", "semaphore",
    "signal_wait/relaxed_signal_wait_fuse_test", "signal_wait/relaxed_signal_wait_test",
    "signal_wait/signal_wait_fuse_test", "signal_wait/signal_wait_test", "switch_broadcast_test",
    "switch_reduce_test", "tbg/tbg_copy_test", "tbg/tbg_reduce_fuse_test", "tbg/tbg_reduce_send_test",
    "tbg/tbg_reduce_test", "unpack_packet_test",
]

# single_node programs: (path under tests/single_node, rank counts to write, rank counts measured only).
# None = the program fixes its rank count (it has no --num_gpus).
SINGLE_NODE = [
    ("allgather", None, []),
    ("allgather_nvls_zero_copy", [2, 4], []),
    ("allgather_nvls_zero_copy_pkt", [2, 4], []),
    ("allgather_pkt", [2, 4], []),
    ("allgather_pkt_rppkt", [2, 4], []),
    ("allgather_ring", [2, 4], []),
    ("allgather_tbg", None, []),
    ("allreduce", [2, 4], []),
    ("allreduce_naivy", [2, 4], []),
    ("allreduce_nvls_zero_copy", [2, 4], []),
    ("allreduce_pipeline", None, []),
    ("allreduce_pkt", [2, 4], []),
    ("alltoall/alltoall", [2, 4], []),
    ("alltoall/alltoall_pipeline", [2, 4], []),
    ("alltoall/alltoall_pkt", [2, 4], []),
    ("alltoall/alltoall_ring", [2], [4]),
    ("alltoall/alltoall_ring_oop", [2], [4]),
    ("alltoall/alltoall_ring_peers", [2], [4]),
]

# multi_node programs (two nodes of two GPUs each): path, arguments besides --name.
MULTI_NODE = [
    ("allgather", ["--gpus_per_node", "2"]),
    ("allgather_pkt", ["--gpus_per_node", "2"]),
    ("allgather_tbg", ["--num_gpus", "4", "--gpus_per_node", "2", "--tbg_size", "2"]),
    ("reducescatter", ["--gpus_per_node", "2"]),
    ("reducescatter_pkt", ["--gpus_per_node", "2"]),
    ("send_recv", ["--nnodes", "2", "--gpus_per_node", "2"]),
]

# python/mscclpp/default_algos programs with a command line of their own.
DEFAULT_ALGOS = [
    ("allreduce_multi_nodes", ["--num_gpus", "4", "--gpus_per_node", "2", "--tbg", "1"]),
    ("allgather_multi_nodes", ["--num_gpus", "4", "--gpus_per_node", "2"]),
]

# examples/torch-integration programs: (file, setup function arguments to write, to measure only).
EXAMPLES = [
    ("dsl_with_nccl_api", "builder", [[0, 8]], []),
    ("customized_comm_with_dsl", "plain", [[0, 4, 4]], [[0, 8, 8]]),
]

# Runs an example's own setup_plan() with stand-ins for torch, netifaces, mscclpp.ext, mscclpp.utils and
# mscclpp.compile. The stand-in compile writes the plan as python/mscclpp/_core/compiler.py does
# (post_process_operations(), then to_json() compact), without the cache, blake3 or the C++ ExecutionPlan.
EXAMPLE_RUNNER = r'''
import importlib.util, sys, types
class Anything(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = Anything(self.__name__ + "." + name)
        setattr(self, name, value)
        return value
    def __call__(self, *args, **kwargs):
        return Anything("result")
for name in ["torch", "torch.distributed", "netifaces", "mscclpp.ext", "mscclpp.utils"]:
    sys.modules[name] = Anything(name)
import mscclpp, mscclpp.language
from mscclpp.language.utils import AlgoSpec
mscclpp.language.AlgoSpec = AlgoSpec
mscclpp.ext = sys.modules["mscclpp.ext"]
mscclpp.utils = sys.modules["mscclpp.utils"]
mscclpp.__class__ = Anything
plans = []
def compile(algo, algo_spec, rank, **kwargs):
    prog = algo(algo_spec, **kwargs)
    prog.post_process_operations()
    plans.append(prog.to_json(indent=None, separators=(",", ":"), ensure_ascii=False))
    return Anything("algorithm")
mscclpp.compile = compile
path, style = sys.argv[1], sys.argv[2]
args = [int(a) for a in sys.argv[3:]]
spec = importlib.util.spec_from_file_location("example", path)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
if style == "builder":
    example.setup_plan(Anything("builder"), *args)
else:
    example.setup_plan(*args)
assert len(plans) == 1, "expected one compiled plan"
print(plans[0])
'''


def die(msg):
    print("gen_mscclpp_corpus: " + msg, file=sys.stderr)
    sys.exit(1)


def git(*args, cwd=None, gitdir=None):
    cmd = ["git"]
    if gitdir:
        cmd += ["--git-dir", gitdir]
    cmd += list(args)
    r = subprocess.run(cmd, cwd=cwd, capture_output=True)
    if r.returncode != 0:
        die("git %s failed: %s" % (" ".join(args), r.stderr.decode(errors="replace").strip()))
    return r.stdout


class Job:
    def __init__(self, out, source, argv, runner=None, keep=True, note=""):
        self.out = out          # path under the corpus directory (None when measured only)
        self.source = source    # path in the MSCCL++ tree
        self.argv = argv        # arguments after the program
        self.runner = runner    # None: `python3 SOURCE ARGV`; "example": the example runner; "module": -m
        self.keep = keep
        self.note = note
        self.text = None
        self.error = None
        self.files = None       # for the module runner: name -> text

    def command(self):
        if self.runner == "example":
            return " ".join(["python3", "gen_example_runner.py", "$MSCCLPP/" + self.source] + self.argv)
        if self.runner == "module":
            return "MSCCLPP_CACHE_DIR=$CACHE python3 -m mscclpp --install"
        return " ".join(["python3", "$MSCCLPP/" + self.source] + self.argv)


def build_jobs():
    jobs = []
    for stem, name, extra in EXEC_TESTS:
        jobs.append(Job("executor-tests/%s.json" % stem, "%s/%s.py" % (EXEC_ALGOS, stem), ["--name", name] + extra))
    for rel in UNIT_TESTS:
        jobs.append(Job("dsl-tests/unit_tests/%s.json" % rel, "%s/unit_tests/%s.py" % (DSL_TESTS, rel), []))
    for rel, keep, measure in SINGLE_NODE:
        src = "%s/single_node/%s.py" % (DSL_TESTS, rel)
        stem = os.path.basename(rel)
        if keep is None:
            jobs.append(Job("dsl-tests/single_node/%s.json" % rel, src, ["--name", stem]))
            continue
        for n in keep:
            jobs.append(Job("dsl-tests/single_node/%s_n%d.json" % (rel, n), src,
                            ["--name", stem, "--num_gpus", str(n)]))
        for n in measure:
            jobs.append(Job(None, src, ["--name", stem, "--num_gpus", str(n)], keep=False))
    for rel, extra in MULTI_NODE:
        jobs.append(Job("dsl-tests/multi_node/%s.json" % rel, "%s/multi_node/%s.py" % (DSL_TESTS, rel),
                        ["--name", rel] + extra))
    for stem, extra in DEFAULT_ALGOS:
        jobs.append(Job("default_algos/%s.json" % stem, "python/mscclpp/default_algos/%s.py" % stem,
                        ["--name", stem] + extra))
    jobs.append(Job(None, "python/mscclpp/__main__.py", [], runner="module", keep=False))
    for stem, style, keep, measure in EXAMPLES:
        src = "examples/torch-integration/%s.py" % stem
        for args in keep:
            jobs.append(Job("examples/%s_n%d.json" % (stem, args[1]), src, [style] + [str(a) for a in args],
                            runner="example"))
        for args in measure:
            jobs.append(Job(None, src, [style] + [str(a) for a in args], runner="example", keep=False))
    return jobs


def last_line(text):
    lines = [l for l in text.decode(errors="replace").splitlines() if l.strip()]
    return lines[-1].strip() if lines else "(no output)"


def run_job(job, tree, pkg, work, python):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": pkg,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LC_ALL": "C.UTF-8",
        "HOME": work,
    }
    if job.runner == "module":
        cache = os.path.join(work, "cache")
        shutil.rmtree(cache, ignore_errors=True)
        env["MSCCLPP_CACHE_DIR"] = cache
        cmd = [python, "-m", "mscclpp", "--install"]
    elif job.runner == "example":
        runner = os.path.join(work, "gen_example_runner.py")
        cmd = [python, runner, os.path.join(tree, job.source)] + job.argv
    else:
        cmd = [python, os.path.join(tree, job.source)] + job.argv
    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, timeout=600)
    if r.returncode != 0:
        job.error = "exit %d: %s" % (r.returncode, last_line(r.stderr))
        return
    if job.runner == "module":
        d = os.path.join(cache, "default")
        job.files = {}
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                job.files[f] = fh.read()
        if not job.files:
            job.error = "wrote no plan: %s" % last_line(r.stdout + r.stderr)
        return
    text = r.stdout.decode("utf-8")
    try:
        json.loads(text)
    except ValueError as e:
        job.error = "output is not one JSON document (%s)" % e
        return
    job.text = text


def walk_ops(ops):
    for op in ops:
        yield op
        if op.get("name") == "pipeline":
            for inner in op.get("ops", []):
                yield inner


def summarize(plan):
    """Facts about one plan, and the limits of docs/mscclpp.md section 7 it breaks."""
    gpus = plan["gpus"]
    s = {
        "collective": plan.get("collective"),
        "ranks": len(gpus),
        "protocol": plan.get("protocol"),
        "inplace": plan.get("inplace"),
        "reuse": plan.get("reuse_resources", False),
        "double": plan.get("use_double_scratch_buffer", False),
        "ops": {},
        "max_tbs": 0,
        "max_ops": 0,
        "channel_types": set(),
        "problems": [],
    }
    probs = set()
    for r, g in enumerate(gpus):
        if g.get("id") != r:
            probs.add("gpus[%d].id is %r" % (r, g.get("id")))
        for key in ("input_chunks", "output_chunks"):
            if g.get(key) == 0:
                probs.add("%s is 0: the parser's size check divides by it (execution_plan.cc:301-304)" % key)
        for ch in g.get("channels", []):
            s["channel_types"].add(ch.get("channel_type"))
        tbs = g.get("threadblocks", [])
        s["max_tbs"] = max(s["max_tbs"], len(tbs))
        for t, tb in enumerate(tbs):
            if tb.get("id") != t:
                probs.add("threadblock ids not 0..n-1 in order")
            per_type = {}
            for ch in tb.get("channels", []):
                per_type[ch["channel_type"]] = per_type.get(ch["channel_type"], 0) + len(ch.get("channel_ids", []))
            for ref in tb.get("remote_buffer_refs", []):
                k = "remote buffers via " + ref["access_channel_type"]
                per_type[k] = per_type.get(k, 0) + len(ref.get("remote_buffer_ids", []))
            for k, v in per_type.items():
                if v > MAX_CHANNEL:
                    probs.add("%s per threadblock %d > MAX_CHANNEL %d" % (k, v, MAX_CHANNEL))
            flat = list(walk_ops(tb.get("ops", [])))
            s["max_ops"] = max(s["max_ops"], len(flat))
            if len(flat) > MAX_OPERATION:
                probs.add("ops per threadblock %d > MAX_OPERATION %d" % (len(flat), MAX_OPERATION))
            for op in flat:
                name = op.get("name")
                s["ops"][name] = s["ops"].get(name, 0) + 1
                if name not in PARSER_OPS:
                    probs.add("op %r is not accepted by the parser" % name)
                if len(op.get("channel_ids", [])) > MAX_CHANNEL_PER_OPERATION:
                    probs.add("channel_ids per op > %d" % MAX_CHANNEL_PER_OPERATION)
                for key in ("src_buff", "dst_buff"):
                    if len(op.get(key, [])) > MAX_BUFFS_PER_OPERATION:
                        probs.add("%s entries per op > %d" % (key, MAX_BUFFS_PER_OPERATION))
                if op.get("barrier_id", 0) >= MAX_DEVICE_SYNCERS:
                    probs.add("barrier_id >= %d" % MAX_DEVICE_SYNCERS)
                if len(op.get("semaphore_ids", [])) > MAX_DEVICE_SEMAPHORES:
                    probs.add("semaphore_ids per op > %d" % MAX_DEVICE_SEMAPHORES)
                if name == "flush" and "dst_buff" not in op:
                    probs.add("flush without dst_buff flushes nothing (docs/mscclpp.md section 8)")
    if plan.get("num_threads_per_block", 1024) > 1024:
        probs.add("num_threads_per_block > 1024")
    s["problems"] = sorted(probs)
    return s


def fmt_ops(ops):
    return ", ".join("%s %d" % (k, ops[k]) for k in sorted(ops))


def main():
    ap = argparse.ArgumentParser(
        description="Regenerate tests/data/mscclpp/ from an MSCCL++ checkout: execution plans written by "
        "MSCCL++'s own DSL programs, with a README naming the commit, each file's source and command.",
        epilog="MSCCLPP is a work tree of github.com/microsoft/mscclpp or a bare git directory (a fetched "
        "mirror); COMMIT is the commit to use (a work tree must have it checked out; from a bare directory "
        "it is exported). Needs python3 with the package sortedcontainers. Example: "
        "scripts/gen_mscclpp_corpus.py /work/.mirror/microsoft+mscclpp/repo 1f5f065")
    ap.add_argument("mscclpp", metavar="MSCCLPP", help="MSCCL++ work tree or bare git directory")
    ap.add_argument("commit", metavar="COMMIT", help="MSCCL++ commit (full or abbreviated hash, or tag)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="corpus directory to rewrite (default: %(default)s)")
    ap.add_argument("--python", default=sys.executable, help="python3 to run the DSL with (default: %(default)s)")
    ap.add_argument("--copy-shipped", metavar="DIR",
                    help="also copy MSCCL++'s own plan JSON files (%s) into DIR; never into the corpus"
                    % ", ".join(SHIPPED_DIRS))
    a = ap.parse_args()

    r = subprocess.run([a.python, "-c", "import sortedcontainers, sys; print(sortedcontainers.__version__); "
                        "print('%d.%d.%d' % sys.version_info[:3])"], capture_output=True)
    if r.returncode != 0:
        die("%s cannot import sortedcontainers (the DSL needs it): pip install sortedcontainers, "
            "or apt-get install python3-sortedcontainers" % a.python)
    sc_version, py_version = r.stdout.decode().split()

    src = os.path.abspath(a.mscclpp)
    if not os.path.isdir(src):
        die("%s is not a directory" % src)
    bare = git("rev-parse", "--is-bare-repository", cwd=src).decode().strip() == "true"
    gitdir = src if bare else None
    commit = git("rev-parse", "--verify", a.commit + "^{commit}", cwd=src).decode().strip()
    commit_date = git("log", "-1", "--format=%cs", commit, cwd=src).decode().strip()
    commit_subject = git("log", "-1", "--format=%s", commit, cwd=src).decode().strip()
    if not bare:
        head = git("rev-parse", "HEAD", cwd=src).decode().strip()
        if head != commit:
            die("%s has %s checked out, not %s" % (src, head[:12], commit[:12]))
        if git("status", "--porcelain", "--untracked-files=no", cwd=src).strip():
            die("%s has uncommitted changes" % src)

    out = os.path.abspath(a.out)
    if os.path.isdir(out):
        for name in os.listdir(out):
            if name not in OWNED:
                die("%s holds %s, which this script did not write; remove it first" % (out, name))
    if a.copy_shipped:
        dest = os.path.abspath(a.copy_shipped)
        if dest == out or dest.startswith(out + os.sep):
            die("--copy-shipped must not point into the corpus directory")
    with tempfile.TemporaryDirectory(prefix="gen_mscclpp_") as work:
        if bare:
            tree = os.path.join(work, "tree")
            os.mkdir(tree)
            archive = git("archive", "--format=tar", commit, "python", "test", "examples", cwd=src)
            subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        else:
            tree = src
        # The DSL without the compiled module: an empty package __init__ beside copies of the pure-Python parts.
        pkg = os.path.join(work, "pkg")
        os.makedirs(os.path.join(pkg, "mscclpp"))
        open(os.path.join(pkg, "mscclpp", "__init__.py"), "w").close()
        shutil.copytree(os.path.join(tree, "python/mscclpp/language"), os.path.join(pkg, "mscclpp", "language"),
                        ignore=shutil.ignore_patterns("tests", "__pycache__"))
        shutil.copytree(os.path.join(tree, "python/mscclpp/default_algos"),
                        os.path.join(pkg, "mscclpp", "default_algos"), ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(os.path.join(tree, "python/mscclpp/__main__.py"), os.path.join(pkg, "mscclpp", "__main__.py"))
        with open(os.path.join(work, "gen_example_runner.py"), "w") as fh:
            fh.write(EXAMPLE_RUNNER)

        jobs = build_jobs()
        for job in jobs:
            run_job(job, tree, pkg, work, a.python)
            state = "error: " + job.error if job.error else ("written" if job.keep else "measured")
            print("%-58s %s" % (job.out or job.source, state), file=sys.stderr)

        shipped = []
        for d in SHIPPED_DIRS:
            listing = git("ls-tree", "-r", "-l", commit, d + "/", cwd=src).decode().splitlines()
            for line in listing:
                meta, path = line.split("\t", 1)
                if path.endswith(".json"):
                    _, _, blob, size = meta.split()
                    data = git("cat-file", "blob", blob, cwd=src)
                    shipped.append((path, blob, int(size), data))
        if a.copy_shipped:
            for path, _, _, data in shipped:
                p = os.path.join(dest, path)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "wb") as fh:
                    fh.write(data)

    # Rewrite the corpus directory: only the entries this script writes.
    if os.path.isdir(out):
        for name in os.listdir(out):
            p = os.path.join(out, name)
            shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    os.makedirs(out, exist_ok=True)

    kept = [j for j in jobs if j.keep and j.text is not None]
    for job in kept:
        p = os.path.join(out, job.out)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as fh:
            fh.write(job.text)

    summaries = {j.out: summarize(json.loads(j.text)) for j in kept}

    # Which shipped files the corpus reproduces.
    reproduced = {}
    for path, blob, size, data in shipped:
        match = ""
        try:
            want = json.loads(data)
        except ValueError:
            want = None
        for job in kept:
            if job.text.rstrip("\n").encode() == data.rstrip(b"\n"):
                match = "byte-identical to `%s`" % job.out
                break
            if want is not None and json.loads(job.text) == want:
                match = "same JSON as `%s`" % job.out
        reproduced[path] = match or "not reproduced by any program at this commit"

    total = sum(len(j.text.encode()) for j in kept)
    L = []
    L.append("# MSCCL++ execution plans written by MSCCL++'s own programs")
    L.append("")
    L.append("Generated by `scripts/gen_mscclpp_corpus.py` — do not edit; rerun it instead:")
    L.append("")
    L.append("    scripts/gen_mscclpp_corpus.py MSCCLPP %s" % commit)
    L.append("")
    L.append("where `MSCCLPP` is a work tree or bare git directory of github.com/microsoft/mscclpp.")
    L.append("")
    L.append("* MSCCL++ commit: `%s` (%s, \"%s\")." % (commit, commit_date, commit_subject))
    L.append("* Python %s, sortedcontainers %s, `PYTHONHASHSEED=0`." % (py_version, sc_version))
    L.append("* %d plans, %d bytes. MSCCL++ is MIT-licensed (Microsoft); these files are the output of its "
             "programs, run unmodified." % (len(kept), total))
    L.append("* Format reference: `docs/mscclpp.md` (section numbers below refer to it).")
    L.append("")
    L.append("## How the programs are run")
    L.append("")
    L.append("`$PKG` is a temporary directory holding `mscclpp/__init__.py` (empty: the real one imports the "
             "compiled `_mscclpp` module, which is not built here) and copies of MSCCL++'s "
             "`python/mscclpp/language/` (without `tests/`), `python/mscclpp/default_algos/` and "
             "`python/mscclpp/__main__.py`. That is the only stand-in for the DSL programs: they run unmodified with")
    L.append("")
    L.append("    env -i PATH=$PATH HOME=$WORK LC_ALL=C.UTF-8 PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 "
             "PYTHONPATH=$PKG <command>")
    L.append("")
    L.append("in `$WORK` (another temporary directory), and the plan is what the program prints on stdout "
             "(`print(JSON())` or `print(prog.to_json())`: indented JSON).")
    L.append("")
    L.append("The two `examples/torch-integration` programs import torch and call `mscclpp.compile`, "
             "which needs the compiled module. `gen_example_runner.py` (the `EXAMPLE_RUNNER` text in the "
             "script) loads the example with stand-ins for `torch`, `netifaces`, `mscclpp.ext`, `mscclpp.utils` "
             "and `mscclpp.compile`, and calls the example's own `setup_plan(...)` with the arguments shown. "
             "The stand-in `compile` does what `python/mscclpp/_core/compiler.py:114-149` does to produce the "
             "plan file — `post_process_operations()` and then `to_json(indent=None, separators=(\",\", \":\"))` — "
             "so these plans are compact JSON and, because `to_json` post-processes again, replicated "
             "instances² times (docs/mscclpp.md §8 item 8). They are the files `mscclpp.compile` caches.")
    L.append("")
    L.append("The executor-test programs are given the plan names of the JSON files MSCCL++ ships next to "
             "them, and reproduce those files byte for byte (table at the end). Other programs are given "
             "their file name as `--name`.")
    L.append("")
    L.append("## Plans")
    L.append("")
    L.append("Columns: ranks; collective; protocol (LL = packets); `inplace`; r = `reuse_resources`, "
             "d = `use_double_scratch_buffer`; most threadblocks of a rank; most ops in one threadblock "
             "(pipeline inner ops counted, as the executor counts them against its limit of 64); op types "
             "with their number of occurrences over all ranks.")
    L.append("")
    L.append("| file | source | command | ranks | collective | protocol | inplace | r/d | tbs | ops/tb | op types |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for job in kept:
        s = summaries[job.out]
        rd = ("r" if s["reuse"] else "-") + ("d" if s["double"] else "-")
        L.append("| `%s` | `%s` | `%s` | %d | %s | %s | %s | %s | %d | %d | %s |" % (
            job.out, job.source, job.command(), s["ranks"], s["collective"], s["protocol"],
            "yes" if s["inplace"] else "no", rd, s["max_tbs"], s["max_ops"], fmt_ops(s["ops"])))
    L.append("")
    L.append("## What an executor must support for this corpus")
    L.append("")
    union = {}
    for job in kept:
        for name in summaries[job.out]["ops"]:
            union.setdefault(name, []).append(job.out)
    L.append("| op | plans using it |")
    L.append("|---|---|")
    for name in sorted(union):
        L.append("| `%s` | %d |" % (name, len(union[name])))
    never = sorted(PARSER_OPS - set(union))
    L.append("")
    L.append("Op names the parser accepts that no plan here uses: %s." % (
        ", ".join("`%s`" % n for n in never) if never else "none"))
    ctypes = sorted({t for s in summaries.values() for t in s["channel_types"]})
    L.append("")
    L.append("Channel types used: %s. Rank counts: %s." % (
        ", ".join("`%s`" % t for t in ctypes),
        ", ".join(str(n) for n in sorted({s["ranks"] for s in summaries.values()}))))
    L.append("")
    L.append("## Limits (docs/mscclpp.md §7, §8) that plans here break")
    L.append("")
    L.append("Checked by this script against the rules of docs/mscclpp.md, not by running MSCCL++. Most DSL unit "
             "tests use `TestCollective` with an input or output size of 0; MSCCL++'s parser cannot load such "
             "a plan at all. They are kept: they are what the DSL writes, and a reader must refuse them cleanly.")
    L.append("")
    any_prob = False
    for job in kept:
        if summaries[job.out]["problems"]:
            L.append("* `%s`: %s." % (job.out, "; ".join(summaries[job.out]["problems"])))
            any_prob = True
    if not any_prob:
        L.append("None.")
    L.append("")
    L.append("## Not in the corpus")
    L.append("")
    L.append("| source | command | why |")
    L.append("|---|---|---|")
    for job in jobs:
        if job.error:
            L.append("| `%s` | `%s` | fails at this commit: %s |" % (
                job.source, job.command(), job.error.replace("|", "\\|")))
        elif not job.keep and job.files:
            for f in sorted(job.files):
                pl = json.loads(job.files[f])
                L.append("| `%s` | `%s` | writes `%s`: %d ranks, %d bytes — too large to keep |" % (
                    job.source, job.command(), f, len(pl["gpus"]), len(job.files[f].encode())))
        elif not job.keep:
            pl = json.loads(job.text)
            L.append("| `%s` | `%s` | %d ranks, %d bytes — too large to keep |" % (
                job.source, job.command(), len(pl["gpus"]), len(job.text.encode())))
    L.append("| `python/mscclpp/default_algos/reducescatter_multi_nodes.py` | — | a library function with no command "
             "line of its own and no caller in MSCCL++ at this commit |")
    L.append("| single-node programs at 8 ranks | — | not generated (at 1f5f065: 47–442 KB each, 1.5–1.9 MB for the "
             "alltoall rings); the same programs are kept at 2 and 4 ranks |")
    L.append("")
    L.append("## MSCCL++'s own plan files")
    L.append("")
    L.append("Not copied here (`--copy-shipped DIR` copies them elsewhere). Blob hashes at the commit above:")
    L.append("")
    L.append("| file | blob | bytes | reproduced? |")
    L.append("|---|---|---|---|")
    for path, blob, size, _ in shipped:
        L.append("| `%s` | `%s` | %d | %s |" % (path, blob, size, reproduced[path]))
    L.append("")
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(L))
    print("wrote %d plans (%d bytes) and README.md to %s" % (len(kept), total, out), file=sys.stderr)


if __name__ == "__main__":
    main()
