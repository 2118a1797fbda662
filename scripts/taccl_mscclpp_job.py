#!/usr/bin/env python3
"""taccl_mscclpp_job.py - run a taccl MSCCL++ plan directory in a PyTorch job.

A plan directory written for MSCCL++ (docs/mscclpp.md §12.5) holds one
execution plan per size range and buffer mode, COLL-LO-HI-MODE.json, and
plan.json, whose "files" entries say under "mscclpp" what MSCCL++'s selector
matches each file on.  This script

  * picks, for a call (collective, message size, buffer mode, world size,
    ranks per node), the file MSCCL++ would run, with the test of its
    matchExecutionPlan (src/ext/nccl/algorithm_selector.cc:38-50 at MSCCL++
    1f5f065): collective, world size and ranks per node equal, buffer mode
    equal, min_message_size <= size <= max_message_size (both inclusive; for
    allgather the size is NCCL's per-rank bytes times the world size);
  * with --dry-run SIZE... (no GPU, no mscclpp, standard library only) prints
    which file serves each size and why, or "NCCL fallback";
  * otherwise, inside a torchrun job with mscclpp importable, registers the
    files with MSCCL++'s AlgorithmCollectionBuilder and installs a selector
    doing the match above, then (as a demo a user adapts) initializes
    torch.distributed with the NCCL backend and runs the collective once per
    --sizes entry.  Run it under the MSCCL++ NCCL shim (docs/deploy.md):

      LD_PRELOAD=$MSCCLPP/lib/libmscclpp_nccl.so \\
      MSCCLPP_NCCL_LIB_PATH=/usr/lib/x86_64-linux-gnu/libnccl.so.2 \\
      MSCCLPP_LOG_LEVEL=INFO MSCCLPP_LOG_SUBSYS=EXEC,ALGO,NCCL \\
      torchrun --nnodes 2 --nproc_per_node 8 scripts/taccl_mscclpp_job.py PLAN_DIR

    or import it from a training script and call install(PLAN_DIR) before
    torch.distributed.init_process_group.

Exit status: 0 done; 1 the plan directory disagrees with itself (a file's own
name, collective, mode or range is not what plan.json says); 2 usage, or
PLAN_DIR is not an MSCCL++ plan directory.
"""

import argparse
import json
import os
import re
import sys

COLLECTIVES = ("allreduce", "allgather", "reducescatter")
MODES = ("inplace", "outofplace")
# The buffer mode PyTorch's calls give NCCL: dist.all_reduce(t) passes t as
# both buffers; all_gather_into_tensor / reduce_scatter_tensor pass two
# tensors.  MSCCL++'s CollectiveRequest::bufferMode (src/core/algorithm.cc:13-24)
# compares the pointers.
TORCH_MODE = {"allreduce": "inplace", "allgather": "outofplace",
              "reducescatter": "outofplace"}


class PlanError(Exception):
    """plan.json and a file disagree (exit 1)."""


class UsageError(Exception):
    """Not an MSCCL++ plan directory, or a bad argument (exit 2)."""


def parse_size(text):
    """'1048576', '64K', '1M', '1MiB', '2GB': K/M/G are powers of 1024."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgGtT]?)(i?[bB])?\s*", text)
    if not m:
        raise UsageError("bad size '%s' (want e.g. 1048576, 64K, 1MiB)" % text)
    return int(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper())


def load(plan_dir):
    """plan.json's MSCCL++ entries, each checked against its file's own
    top-level fields (what ExecutionPlan(path, rank) reads, EP:122-134):
    MSCCL++ matches on the file's values, plan.json only names them."""
    path = os.path.join(plan_dir, "plan.json")
    try:
        with open(path) as f:
            plan = json.load(f)
    except OSError as e:
        raise UsageError("%s: %s" % (path, e.strerror))
    except ValueError as e:
        raise UsageError("%s: not JSON (%s)" % (path, e))
    if plan.get("target") != "mscclpp":
        raise UsageError("%s: target is %r, not \"mscclpp\": its files are MSCCL XML, which "
                         "MSCCL++ does not read (give them to msccl-executor-nccl, "
                         "docs/deploy.md)" % (path, plan.get("target")))
    entries = []
    for e in plan.get("files", []):
        m = e.get("mscclpp")
        if not isinstance(m, dict) or "file" not in e:
            raise PlanError("%s: a files entry without \"file\" and \"mscclpp\"" % path)
        fpath = os.path.join(plan_dir, e["file"])
        try:
            with open(fpath) as f:
                own = json.load(f)
        except (OSError, ValueError) as err:
            raise PlanError("%s: %s" % (fpath, err))
        mode = "inplace" if own.get("inplace") is True else "outofplace"
        for key, mine, theirs in (("name", own.get("name"), m["name"]),
                                  ("collective", own.get("collective"), m["collective"]),
                                  ("buffer mode", mode, m["buffer_mode"]),
                                  ("min_message_size", own.get("min_message_size"),
                                   m["min_message_size"])):
            if mine != theirs:
                raise PlanError("%s: %s is %r, plan.json says %r" % (fpath, key, mine, theirs))
        lo, hi = own["min_message_size"], own.get("max_message_size")
        if not isinstance(hi, int) or hi > m["max_message_size"]:
            raise PlanError("%s: max_message_size %r beyond plan.json's %r"
                            % (fpath, hi, m["max_message_size"]))
        g0 = (own.get("gpus") or [{}])[0]
        entries.append({"file": e["file"], "path": fpath, "name": m["name"],
                        "align": own.get("buffer_alignment", 16),
                        "chunks": (g0.get("input_chunks", 0), g0.get("output_chunks", 0)),
                        "collective": m["collective"], "world_size": m["world_size"],
                        "n_ranks_per_node": m["n_ranks_per_node"], "mode": mode,
                        "lo": lo, "hi": hi, "planned_hi": m["max_message_size"]})
    names = [x["name"] for x in entries]
    if len(set(names)) != len(names):
        # AlgorithmCollection keys algorithms by name (src/core/algorithm.cc:93-96)
        raise PlanError("%s: two files share a plan name" % path)
    return plan, entries


def effective_size(collective, nbytes, world_size):
    """The size matchExecutionPlan compares (algorithm_selector.cc:43-44):
    NCCL's count x type size, times the world size for allgather."""
    return nbytes * world_size if collective == "allgather" else nbytes


def refusal(e, collective, nbytes, world_size):
    """Why MSCCL++ refuses a size its selector gave this file, or None: the
    load wants both buffers' bytes multiples of buffer_alignment and of it
    times their chunk counts (ExecutionPlan::Impl::checkMessageSize,
    src/core/executor/execution_plan.cc:299-304); it throws, the call fails
    (nothing falls back)."""
    inb, outb = nbytes, nbytes
    if collective == "allgather":
        outb = nbytes * world_size
    elif collective == "reducescatter":
        outb = nbytes // world_size if nbytes % world_size == 0 else None
    a, (ic, oc) = e["align"], e["chunks"]
    for what, b, c in (("input", inb, ic), ("output", outb, oc)):
        if b is None or c <= 0 or b % (a * c):
            return "%s bytes %s not a multiple of %d x %d chunks" % (what, b, a, c)
    return None


def select(entries, collective, nbytes, mode, world_size, n_ranks_per_node):
    """The entry MSCCL++'s matchExecutionPlan accepts, or None."""
    size = effective_size(collective, nbytes, world_size)
    for e in entries:
        if (e["collective"] == collective and e["world_size"] == world_size and
                e["n_ranks_per_node"] == n_ranks_per_node and e["mode"] == mode and
                e["lo"] <= size <= e["hi"]):
            return e
    return None


def fallback_reason(plan, entries, collective, nbytes, mode, world_size, rpn):
    size = effective_size(collective, nbytes, world_size)
    mine = [e for e in entries if e["collective"] == collective]
    if not mine:
        return "no file for %s" % collective
    if not any(e["world_size"] == world_size and e["n_ranks_per_node"] == rpn for e in mine):
        return ("the files are for world_size %d, n_ranks_per_node %d; the job has %d, %d"
                % (mine[0]["world_size"], mine[0]["n_ranks_per_node"], world_size, rpn))
    why = "no %s file holds %d bytes" % (mode, size)
    span = plan.get("sizes") or []
    if len(span) == 2 and not span[0] <= size <= span[1]:
        return why + " (outside the plan's sizes %d..%d)" % (span[0], span[1])
    for r in plan.get("nccl_fallback", []):
        if r.get("mode") in (mode, "both") and r["min_bytes"] <= size < r["max_bytes_excl"]:
            why += " (plan.json, [%d, %d): %s)" % (
                r["min_bytes"], r["max_bytes_excl"],
                r.get("reason") or "NCCL's own schedule is predicted fastest")
            break
    else:
        capped = [e for e in mine if e["mode"] == mode and e["hi"] < size <= e["planned_hi"]]
        if capped:
            why += " (%s stops at %d: the 32-bit offset cap, docs/mscclpp.md §12.2)" % (
                capped[0]["file"], capped[0]["hi"])
    return why


def dry_run(plan, entries, args):
    coll = args.collective
    world = args.world_size
    rpn = args.ranks_per_node
    modes = MODES if args.buffer_mode == "both" else (args.buffer_mode,)
    single = world == rpn
    rows = []
    for text in args.dry_run:
        nbytes = parse_size(text)
        for mode in modes:
            e = select(entries, coll, nbytes, mode, world, rpn)
            size = effective_size(coll, nbytes, world)
            if e:
                row = {"size": nbytes, "mode": mode, "file": e["file"], "name": e["name"],
                       "why": "%s, world_size %d, n_ranks_per_node %d, %s, %d <= %d <= %d"
                              % (coll, world, rpn, mode, e["lo"], size, e["hi"]),
                       "refused": refusal(e, coll, nbytes, world)}
            else:
                row = {"size": nbytes, "mode": mode, "file": None,
                       "why": fallback_reason(plan, entries, coll, nbytes, mode, world, rpn)}
            rows.append(row)
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for r in rows:
        if r["file"] and r["refused"]:
            print("%d %s -> %s (%s) but MSCCL++ refuses the size: %s; the call fails"
                  % (r["size"], r["mode"], r["file"], r["why"], r["refused"]))
        elif r["file"]:
            print("%d %s -> %s (%s)" % (r["size"], r["mode"], r["file"], r["why"]))
        elif single:
            # one node: the shim's own selection comes first (SEL:91-161)
            print("%d %s -> NCCL fallback or an MSCCL++ native algorithm (%s)"
                  % (r["size"], r["mode"], r["why"]))
        else:
            print("%d %s -> NCCL fallback (%s)" % (r["size"], r["mode"], r["why"]))
    return 0


# ---------------------------------------------------------------------------
# Inside the job: needs mscclpp (and for the demo torch); imported here only.

def install(plan_dir, rank=None, world_size=None, n_ranks_per_node=None, buffer_mode=None,
            collective=None, log=print):
    """Register plan_dir's files with MSCCL++ and install the selector.
    Call before torch.distributed.init_process_group: the shim builds its
    algorithm collection in ncclCommInitRank (src/ext/nccl/nccl.cc:308-314).
    rank, world_size and n_ranks_per_node default to torchrun's RANK,
    WORLD_SIZE and LOCAL_WORLD_SIZE.  Returns the entries registered."""
    import mscclpp                      # noqa: F401  (lazy: not needed for --dry-run)
    import mscclpp.ext
    from mscclpp._mscclpp import CppCollectiveBufferMode

    plan, entries = load(plan_dir)
    rank = int(os.environ["RANK"]) if rank is None else rank
    world_size = int(os.environ["WORLD_SIZE"]) if world_size is None else world_size
    if n_ranks_per_node is None:
        n_ranks_per_node = int(os.environ.get("LOCAL_WORLD_SIZE", world_size))
    coll = collective or plan["collective"]
    mode = buffer_mode or TORCH_MODE.get(coll, "outofplace")
    # DslAlgorithm::bufferMode() keeps its answer in a function-local static
    # (src/core/algorithm.cc:165-170): every DSL plan of the process reports
    # the mode of the first one asked.  Our selector does not ask, but the
    # shim's fallback selector does; registering one mode keeps it right.
    use = [e for e in entries if mode == "both" or e["mode"] == mode]
    if mode == "both":
        log("taccl: warning: both buffer modes registered; a call no file of its own mode "
            "covers may run a file of the other mode (MSCCL++ algorithm.cc:165-170)")
    builder = mscclpp.ext.AlgorithmCollectionBuilder()
    for e in use:
        plan_obj = mscclpp.ExecutionPlan(e["path"], rank)
        algo = mscclpp.Algorithm(
            id=e["name"], execution_plan=plan_obj,
            constraint=mscclpp.Algorithm.Constraint(e["world_size"], e["n_ranks_per_node"]))
        builder.add_algorithm_builder(algo)
        if rank == 0:
            log("taccl: registered %s (%s, %s, bytes %d..%d)"
                % (e["name"], e["collective"], e["mode"], e["lo"], e["hi"]))
    if world_size != (use[0]["world_size"] if use else world_size) or (
            use and n_ranks_per_node != use[0]["n_ranks_per_node"]):
        log("taccl: warning: job is world_size %d, %d per node; the plan is for %d, %d: "
            "no file will match" % (world_size, n_ranks_per_node, use[0]["world_size"],
                                    use[0]["n_ranks_per_node"]))

    def selector(algorithms, req):
        if req.collective not in algorithms:
            return None
        m = req.buffer_mode()
        mode_of_req = "inplace" if m == CppCollectiveBufferMode.IN_PLACE else "outofplace"
        e = select(use, req.collective, req.message_size, mode_of_req, req.world_size,
                   req.n_ranks_per_node)
        if e is None:
            return None                 # the shim's algoSelector, then NCCL
        return algorithms[req.collective].get(e["name"])

    builder.set_algorithm_selector(selector)
    return use


def run_demo(args):
    import torch
    import torch.distributed as dist

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    install(args.plan_dir, buffer_mode=args.buffer_mode if args.buffer_mode != "auto" else None,
            collective=args.collective)
    dist.init_process_group(backend="nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    coll = args.collective
    for text in args.sizes:
        nbytes = parse_size(text)
        n = max(1, nbytes // 4)
        x = torch.ones(n, dtype=torch.float32, device="cuda")
        if coll == "allreduce":
            dist.all_reduce(x)
            ok = bool((x == world).all())
        elif coll == "allgather":
            out = torch.empty(n * world, dtype=torch.float32, device="cuda")
            dist.all_gather_into_tensor(out, x)
            ok = bool((out == 1).all())
        else:
            big = torch.ones(n * world, dtype=torch.float32, device="cuda")
            dist.reduce_scatter_tensor(x, big)
            ok = bool((x == world).all())
        torch.cuda.synchronize()
        if rank == 0:
            print("taccl: %s %d bytes: %s" % (coll, n * 4, "correct" if ok else "WRONG"))
    dist.destroy_process_group()
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="taccl_mscclpp_job.py",
        description="taccl_mscclpp_job.py: pick the file of a taccl MSCCL++ plan directory that "
                    "MSCCL++ runs for each call, and register the files in a PyTorch job "
                    "(docs/deploy.md).",
        epilog="Without --dry-run it must run inside the job (torchrun, mscclpp and torch "
               "importable, under libmscclpp_nccl.so).")
    ap.add_argument("plan_dir", metavar="PLAN_DIR",
                    help="a plan directory written for MSCCL++ (plan.json target \"mscclpp\")")
    ap.add_argument("--dry-run", nargs="+", metavar="SIZE",
                    help="print which file serves each size and why, or NCCL fallback; SIZE "
                         "is MSCCL++'s message size: allreduce the buffer, allgather one "
                         "rank's input, reducescatter the whole input (K/M/G = 1024^n); "
                         "needs no GPU and no mscclpp")
    ap.add_argument("--collective", choices=COLLECTIVES,
                    help="default: plan.json's collective")
    ap.add_argument("--buffer-mode", choices=MODES + ("both", "auto"), default="auto",
                    help="--dry-run: modes to show (auto = both); in a job: files to register "
                         "(auto = the mode PyTorch's call uses: allreduce in place, "
                         "allgather and reducescatter out of place)")
    ap.add_argument("--world-size", type=int,
                    help="--dry-run: the job's world size (default: the plan's)")
    ap.add_argument("--ranks-per-node", type=int,
                    help="--dry-run: the job's ranks per node (default: the plan's)")
    ap.add_argument("--sizes", nargs="+", default=["1M"], metavar="SIZE",
                    help="in a job: run the collective once at each size (default 1M)")
    ap.add_argument("--json", action="store_true", help="--dry-run: print JSON rows")
    args = ap.parse_args(argv)
    try:
        plan, entries = load(args.plan_dir)
        args.collective = args.collective or plan.get("collective")
        if args.dry_run is None:
            try:
                return run_demo(args)
            except ImportError as e:
                raise UsageError("%s: without --dry-run this runs inside the job, with "
                                 "mscclpp and torch importable (docs/deploy.md)" % e)
        if args.buffer_mode == "auto":
            args.buffer_mode = "both"
        first = entries[0] if entries else {"world_size": plan.get("ngpus", 0),
                                            "n_ranks_per_node": plan.get("ngpus", 0)}
        args.world_size = args.world_size or first["world_size"]
        args.ranks_per_node = args.ranks_per_node or first["n_ranks_per_node"]
        return dry_run(plan, entries, args)
    except UsageError as e:
        print("taccl_mscclpp_job.py: %s" % e, file=sys.stderr)
        return 2
    except PlanError as e:
        print("taccl_mscclpp_job.py: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
