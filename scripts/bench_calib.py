#!/usr/bin/env python3
"""bench_calib.py — the calibration's two extra measurements (used by
bench_run.py after the sweeps, reported by bench_report.py).

1. Protocols.  NCCL picks LL, LL128 or Simple per call; so may we (TACCL's
   runtime runs LL for small buffers).  At every size of a calibration row
   up to 64 MiB, each anchor schedule of the row's sketch is also timed with
   its `proto` set to LL and to LL128 (the same steps, so the data check of
   its Simple run stands; these runs are timing only), and the row's
   synthesized time is the fastest of all.

2. Model assumptions.  Where our ratio is far from TACCL's, which assumption
   of the model moves it?  At the two ends of each row's range the NCCL
   schedule and the best synthesized schedule are run again on a variant of
   the topology that changes one assumption:
     ports    a switch port carries one transfer at a time (model/cost.h).  Variant: the switch replaced by a link
              between every pair of its ranks at the port's bandwidth and
              alpha (transfers to different peers no longer wait for each
              other: an upper end for an NVSwitch that shares its ports).
     latency  a hop costs the topology's alpha (TE-CCL's figures, 0.35-2.6
              us).  Variant: each hop's alpha is NCCL's own per-step hardware
              latency (src/graph/tuning.cc, ring, Simple: 3.4 us over NVLink,
              14 us over the network; LL/LL128 scale it as usual).
     launch   a call costs only its transfers and local work: no GPU-side
              cost per call.  Variant (arithmetic on the measured times, at
              every size of the range): each call also pays NCCL's base
              latency (src/graph/tuning.cc baseLatencies: ring LL 6.6,
              LL128 14, Simple 8.4 us; tree LL 6.8, LL128 14, Simple 8.4),
              NCCL's row for its algorithm and protocol, the synthesized
              schedule the ring's for its protocol (MSCCL's schedules run as
              an NCCL kernel, launched and set up the same way).
     proto    NCCL's schedule runs the protocol NCCL's tuning model picks
              (its constants: LL128 capped per channel, 14 us base), while
              the synthesized side takes the fastest of three in the
              executor.  Variant (at the range's ends): NCCL's schedule too
              under each protocol (the same steps, proto rewritten, as for
              the anchors), the fastest.
     launch+proto  both of the last two: each side's time under proto plus
              NCCL's base latency for the protocol it then runs.
     delay    a hop holds its link, ports or NICs for its whole alpha +
              bytes / B, so messages through one NIC or port pay their
              alphas in turn.  Variant (at the range's ends): the topology
              with "alpha_mode": "delay" (alpha is latency, not occupancy:
              TE-CCL's model; docs/design.md section 4).
     latency+delay  both the latency and the delay changes.
     reserve  a transfer that finds a resource busy waits without booking
              any, so no port or NIC idles while a transfer that could use
              it waits (work-conserving, "arbitration": "ready").  Variant:
              "arbitration": "reserve", each request books the first
              instant all its resources are free and they idle until then
              (the executor's rule before this variant existed).
     nccl-2.8.4  as nccl-model, with the tuning model of NCCL 2.8.4, the
              version TACCL measured (NVIDIA/nccl tag v2.8.4-1,
              src/graph/tuning.cc: its base and hardware latencies, LL/LL128
              and tree caps, tree correction factors and ring plateau;
              nccl_284_time below), for the communicator our NCCL model
              saw (ranks, nodes, channels, per-channel bandwidths); the
              synthesized side plus 2.8.4's ring base latency.
     nccl-model  NCCL's call takes what our executor times its schedule
              at.  Variant (arithmetic, every size): NCCL's call takes
              what NCCL's own tuning model estimates for the algorithm,
              protocol and channels it picks (base latency, per-hop
              latencies, bandwidth; `taccl-synth --algo nccl --json`'s
              nccl.estimate_us) -- NVIDIA's fit of its own machines -- and
              the synthesized schedule its executor time plus NCCL's ring
              base latency for its protocol, as in launch.
   The report names, for a row not reproduced, the variant that brings the
   ratio nearest the published range, and the ratio under it.

3. NCCL's NIC rate.  For a row beyond the model's ceiling (bench_report's
   ceiling_note: no schedule could show the published speed-up over the
   model's NCCL), the assumption that causes it is the model's NCCL
   itself, run at the topology's rates.  Its network side changed: at every
   size of each row's range, NCCL's schedule (built for the topology as
   is) is run on the topology with every NIC at f x its bandwidth, for f
   in NIC_RATES; the report names the highest f at which the row is
   reproduced against the synthesized schedule at the model's rates.  A
   loss that grows with the number of steps (a published range far wider
   than the model's) needs NCCL's per-step latencies too: at the range's
   ends the same ladder on the latency variant's topology (NCCL's per-step
   latencies for every hop, its NICs at f x their bandwidth) against the
   synthesized schedule on the latency variant ("latency+nic-rate"); the
   report also takes NCCL 2.8.4's estimate with its network bandwidth at f
   x the NICs' (arithmetic, nccl_284_time).

Python 3 standard library only.  Not a program of its own (--help says so).
"""
import concurrent.futures
import json
import os
import re
import sys

PROTO_MAX = 64 << 20     # LL/LL128 variants up to this size
NIC_RATES = tuple(round(0.95 - 0.05 * i, 2) for i in range(14))  # .95-.30
NVLINK_LAT_US = 3.4      # NCCL hwLatencies, NVLink, ring, Simple
NET_LAT_US = 14.0        # NCCL hwLatencies, network, ring, Simple

VARIANTS = [
    ("ports", "switch ports carry one transfer at a time (FCFS): with each "
              "switch as a link per pair of its ranks at the port's "
              "bandwidth"),
    ("latency", "hop latency is the topology's alpha (TE-CCL's 0.35-2.6 us): "
                "with NCCL's per-step latencies (3.4 us NVLink, 14 us "
                "network)"),
    ("launch", "no GPU-side cost per call: with NCCL's base latency added to "
               "both calls (6.6-14 us by algorithm and protocol)"),
    ("proto", "NCCL runs the protocol its tuning model picks: with NCCL's "
              "schedule under the protocol the executor times fastest, as "
              "the synthesized side's"),
    ("launch+proto", "no GPU-side cost per call and NCCL's protocol by its "
                     "tuning model: with both changes"),
    ("delay", "a hop's alpha holds its link, port or NIC: with alpha as "
              "latency only (alpha_mode delay, TE-CCL's model)"),
    ("latency+delay", "hop latency is the topology's alpha and holds the "
                      "hop's resources: with NCCL's per-step latencies as "
                      "latency only"),
    ("reserve", "a transfer that finds a resource busy waits without "
                "booking it (work-conserving ports and NICs): with each "
                "request booking its resources ahead, idle until then "
                "(arbitration reserve)"),
    ("nccl-model", "NCCL's call takes our executor's time of its schedule: "
                   "with NCCL's own tuning-model estimate for its pick, the "
                   "synthesized schedule plus NCCL's ring base latency"),
    ("nccl-2.8.4", "NCCL's call takes our executor's time of its schedule: "
                   "with the estimate of NCCL 2.8.4's tuning model (the "
                   "version TACCL measured) for its fastest pick, the "
                   "synthesized schedule plus 2.8.4's ring base latency"),
]
ARITHMETIC = ("launch", "launch+proto", "nccl-model", "nccl-2.8.4")   # no runs of their own

# NCCL's baseLatencies (us), by algorithm and protocol (the launch variant)
BASE_LAT_US = {"tree": {"LL": 6.8, "LL128": 14.0, "Simple": 8.4},
               "ring": {"LL": 6.6, "LL128": 14.0, "Simple": 8.4}}


def anchor_proto(x):
    """The protocol of a calibration size entry's synthesized schedule: its
    anchor label's LL/LL128 suffix, else Simple."""
    m = re.search(r" (LL128|LL)$", x.get("anchor") or "")
    return m.group(1) if m else "Simple"


def launch_variant(sizes):
    """{size: (nccl_us, synth_us)} with NCCL's base latency added to each
    (the launch variant), from calibration_rows' per-size entries: NCCL's
    by the algorithm and protocol it chose, the synthesized schedule's the
    ring's for its protocol (the anchor label's LL/LL128 suffix, else
    Simple)."""
    out = {}
    for x in sizes:
        c = x.get("nccl_choice") or {}
        nb = BASE_LAT_US.get(c.get("algo"), {}).get(c.get("proto"))
        sb = BASE_LAT_US["ring"][anchor_proto(x)]
        if nb is None or not x.get("nccl_us") or not x.get("synth_us"):
            continue
        out[x["size_bytes"]] = (x["nccl_us"] + nb, x["synth_us"] + sb)
    return out


def nccl_model_variant(sizes):
    """{size: (nccl_us, synth_us)} for nccl-model, from calibration_rows'
    per-size entries: NCCL's own estimate for its pick (nccl_choice's
    estimate_us), and the synthesized time plus NCCL's ring base latency
    for its protocol (as launch_variant)."""
    out = {}
    for x in sizes:
        est = (x.get("nccl_choice") or {}).get("estimate_us")
        sb = BASE_LAT_US["ring"][anchor_proto(x)]
        if not est or not x.get("synth_us"):
            continue
        out[x["size_bytes"]] = (est, x["synth_us"] + sb)
    return out


# NCCL 2.8.4's tuning model (NVIDIA/nccl tag v2.8.4-1, src/graph/tuning.cc
# ncclTopoTuneModel and ncclTopoGetAlgoTime), transcribed: index [algo][proto]
# with algo 0 tree, 1 ring and proto 0 LL, 1 LL128, 2 Simple.
N284_BASE = ((4.4, 4.4, 0.0), (3.6, 10.0, 8.4))
N284_NVLINK = ((.52, 1.25, 28.0), (.47, 1.9, 3.4))
N284_NET = ((5.0, 8.5, 28.0), (2.7, 4.0, 9.6))
N284_LL128_PER_CH = {"allgather": 18.3, "reducescatter": 15.2,
                     "allreduce": 16.9}
N284_LL_MAX = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0))  # [ampere 1 node][nodes]
N284_TREE_PER_CH = ((26.5, 18.5, 10.0), (24.0, 22.5, 16.0))  # [ampere][nodes]
N284_TREE_CORR = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7,
     .8, .9, 1.0, 1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7,
     .7, .8, .9, .9, .92, .92),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8,
     .7, .7, .8, .9, .9))
N284_PROTOS = ("LL", "LL128", "Simple")


def nccl_284_time(coll, nranks, nnodes, nchannels, bw_intra, bw_inter,
                  nbytes, ampere=False):
    """NCCL 2.8.4's estimate (us) of its fastest (algorithm, protocol)
    for `coll` ("allgather", "reducescatter", "allreduce") on nbytes (the
    larger per-rank buffer, NCCL's nBytes), and that pair: (us, algo,
    proto).  On two nodes, as 2.8.4's search.cc builds its graphs, a ring
    runs at min(bw_intra, bw_inter) and a tree inside a node at most twice
    bw_inter.  Assumed: NVLink inside a node, an Intel host, LL128 enabled
    (2.8.4 enables it on Volta or Ampere over NVLink with the NIC at most a
    PCIe switch away)."""
    i2 = nnodes - 1 if nnodes <= 2 else 2
    i1 = int(ampere) if nnodes == 1 else 0
    ll_max = N284_LL_MAX[i1][i2]
    tree_per_ch = N284_TREE_PER_CH[int(ampere)][i2]
    ppn = nranks / nnodes
    ar = coll == "allreduce"
    nsteps = 2 * (nranks - 1) if ar else nranks - 1
    inter_steps = 2 * (nnodes - 1) if ar else nnodes - 1
    log_size = max(0, (nbytes >> 6).bit_length() - 1)
    best = None
    for a in ((0, 1) if ar else (1,)):
        for p in range(3):
            bw_ch = bw_intra if nnodes <= 2 else bw_inter
            if nnodes == 2:     # search.cc: a ring's one speed; a tree's
                bw_ch = min(bw_intra, bw_inter * (1 if a == 1 else 2))
            bus = nchannels * bw_ch
            if ampere:
                bus = min(bus, 235.0)
            if a == 1 and p == 0:
                bus = min(ll_max, bus * (0.25 if nnodes > 1 or ar else 1 / 3))
            if a == 1 and p == 1:
                bus = min(bus * (0.7 if ppn < 2 else 0.92),
                          N284_LL128_PER_CH[coll] * nchannels)
            if a == 0:
                bus = min(bus * .92, nchannels * tree_per_ch)
            if a == 0 and p == 0:
                bus = min(bus / 3.8, ll_max)
            if a == 0 and p == 1:
                bus = min(bus * (7 / 9 if nnodes == 1 else 0.915),
                          N284_LL128_PER_CH[coll] * nchannels)
            bw = bus * (.5 if a == 0 else nranks / nsteps)
            lat = N284_BASE[a][p]
            intra, inter = N284_NVLINK[a][p], N284_NET[a][p]
            if nnodes > 1 and p == 0:
                intra *= 1.8
            if a == 1:
                lat += (nsteps - inter_steps) * intra + inter_steps * inter
            else:
                lat += 2 * ((nranks // nnodes - 1) * intra +
                            (nnodes.bit_length() - 1) * inter)
            if a == 0 and log_size < 23:
                bw *= N284_TREE_CORR[p][log_size]
            if a == 1 and p == 2 and nnodes > 1 and ar and \
                    nbytes >= nranks / 16.0 * 65536:
                lat *= 1.9
            us = lat + nbytes / (1000.0 * bw)
            if bw > 0 and (best is None or us < best[0]):
                best = (us, ("tree", "ring")[a], N284_PROTOS[p])
    return best


def nccl_284_variant(sizes, coll, nranks, nnodes, ampere=False, net=1.0):
    """{size: (nccl_us, synth_us)} for nccl-2.8.4: NCCL 2.8.4's estimate
    of its pick for the communicator our NCCL model saw (nccl_choice's
    channels_max, bw_intra_gbps, bw_inter_gbps; the last times net, the
    NIC-rate ladder's f), and the synthesized time plus 2.8.4's ring base
    latency for its protocol."""
    out = {}
    for x in sizes:
        c = x.get("nccl_choice") or {}
        if not c.get("channels_max") or not c.get("bw_intra_gbps") or \
                not x.get("synth_us") or coll not in N284_LL128_PER_CH:
            continue
        est = nccl_284_time(coll, nranks, nnodes, c["channels_max"],
                            c["bw_intra_gbps"], c["bw_inter_gbps"] * net,
                            x["size_bytes"], ampere)
        p = N284_PROTOS.index(anchor_proto(x))
        out[x["size_bytes"]] = (est[0], x["synth_us"] + N284_BASE[1][p])
    return out


def launch_proto_variant(sizes, proto, picks):
    """{size: (nccl_us, synth_us)} for launch+proto: the proto variant's
    times (proto: {size: (nccl_us, synth_us)}, picks: {size: (NCCL's
    protocol, the synthesized schedule's)}) plus NCCL's base latency, by
    NCCL's algorithm at that size (calibration_rows' entries) and each
    side's protocol."""
    algo = {x["size_bytes"]: (x.get("nccl_choice") or {}).get("algo")
            for x in sizes}
    out = {}
    for size, (n, y) in proto.items():
        pk = picks.get(size)
        if not n or not y or not pk or algo.get(size) not in BASE_LAT_US:
            continue
        out[size] = (n + BASE_LAT_US[algo[size]][pk[0]],
                     y + BASE_LAT_US["ring"][pk[1]])
    return out


def proto_of(xml):
    """The proto attribute of a schedule file (Simple when absent)."""
    with open(xml) as f:
        m = re.search(r'proto="([A-Za-z0-9]+)"', f.read(4096))
    return m.group(1) if m else "Simple"


def set_latencies(t):
    """Topology dict t with NCCL's per-step latencies as every hop's alpha
    (the latency variant)."""
    for group, lat in (("links", NVLINK_LAT_US), ("switches", NVLINK_LAT_US),
                       ("nics", NET_LAT_US)):
        for g in t.get(group, []):
            g.pop("alpha", None)
            g["alpha_us"] = lat
    t.pop("runtime_latency", None)     # instead of the runtime's, not on top


def variant_topology(path, which, out):
    """Write topology `path` with one assumption changed into out; False
    if the change does not apply (no switch for 'ports')."""
    with open(path) as f:
        t = json.load(f)
    if which == "ports":
        sws = t.pop("switches", None)
        if not sws:
            return False
        links = t.setdefault("links", [])
        for s in sws:
            r = s["ranks"]
            pair = {"pairs": [[a, b] for i, a in enumerate(r) for b in r[i + 1:]],
                    "source": "calibration variant: switch ports shared"}
            for k in ("alpha_us", "bandwidth_gbps", "alpha", "bandwidth"):
                if k in s:
                    pair[k] = s[k]
            links.append(pair)
    elif "nic-rate:" in which:
        f = float(which.split(":", 1)[1])
        nics = t.get("nics") or []
        if not nics or any("bandwidth_gbps" not in n for n in nics):
            return False
        for n in nics:
            n["bandwidth_gbps"] *= f
        if which.startswith("latency+"):
            set_latencies(t)
            t.pop("runtime_latency", None)
    elif which == "reserve":
        t["arbitration"] = "reserve"
    elif which == "no-rt-lat":
        if t.pop("runtime_latency", "none") == "none":
            return False     # the topology has no runtime latency to take away
    elif which not in ("latency", "delay", "latency+delay"):
        return False     # launch, proto, nccl-model: no topology of their own
    else:
        if which != "delay":
            set_latencies(t)
        if which != "latency":
            t["alpha_mode"] = "delay"
    t["name"] = "%s-%s" % (t.get("name", "topo"), which)
    with open(out, "w") as f:
        json.dump(t, f)
    return True


def with_proto(xml, proto, out):
    with open(xml) as f:
        text = f.read()
    text, n = re.subn(r'proto="[A-Za-z0-9]*"', 'proto="%s"' % proto, text,
                      count=1)
    if n == 0:
        text = text.replace("<algo ", '<algo proto="%s" ' % proto, 1)
    with open(out, "w") as f:
        f.write(text)


def run_time(runner, xml, topo, size, target):
    cmd = [runner.run, xml, "--topo", topo, "--size", str(size), "--no-data",
           "--json", "-q"] + target
    rc, out, err, secs = runner.sh(cmd)
    try:
        j = json.loads(out)
    except ValueError:
        return None
    return j.get("time_us") if rc == 0 else None


def nic_rates(runner, work, rid, size, which, rates, sec, target):
    """{f: time} of NCCL's schedule for sec's topology at size run on each
    variant (f, topology with its NICs at f x their bandwidth)."""
    nx = os.path.join(work, "calib.%s.%s.%d.nccl.xml" % (rid, which, size))
    rc, o, err, secs = runner.sh([runner.synth, "--algo", "nccl",
                                  sec.topo_path, "--collective", sec.coll,
                                  "--size", str(size), "-o", nx, "-q"] +
                                 target)
    got = {}
    if rc == 0:
        for f, vt in rates:
            us = run_time(runner, nx, vt, size, target)
            if us:
                got[f] = us
    if os.path.exists(nx):
        os.remove(nx)
    return got


def anchor_xml(work, res):
    return os.path.join(work, "%s.%s.xml" % (
        res["key"], re.sub(r"[^A-Za-z0-9_.-]", "_", res["label"])))


def experiments(runner, work, secs, results, calibration, data):
    """{row id: {"protos": {size: (us, label)}, "variants": {name:
    {size: (nccl_us, synth_us)}}}} for bench_report.calibration_rows."""
    jobs = []
    out = {}
    for row in calibration:
        rid, topo, coll, stem, inst, lo, hi = row[0], row[1], row[2], \
            row[3], row[5], row[6], row[7]
        sec = data.section(topo, coll)
        if stem is None or sec is None:
            continue
        target = ["--target", sec.target] if sec.target else []
        anchors = [r for r in data.ok(sec) if r["kind"] == "sketch" and
                   r["spec"]["sketch"] == stem and
                   r["spec"].get("instances", 1) == inst]
        sizes = []
        s = lo
        while s <= hi:
            if data.nccl_time(sec, s) and data.taccl_best(sec, s, stem, inst):
                sizes.append(s)
            s *= 2
        if not sizes or not anchors:
            continue
        e = out.setdefault(rid, {"protos": {}, "variants": {}})
        for a in anchors:
            xml = anchor_xml(work, a)
            if not os.path.exists(xml):
                continue
            for proto in ("LL", "LL128"):
                px = "%s.%s.xml" % (xml[:-4], proto)
                if not os.path.exists(px):
                    with_proto(xml, proto, px)
                for size in sizes:
                    if size <= PROTO_MAX and data.row(a, size):
                        jobs.append(("proto", rid, size, px, sec.topo_path,
                                     target, "%s %s" % (a["label"], proto)))
        for v, _ in VARIANTS:
            if v in ARITHMETIC:
                continue     # arithmetic on measured times (the report)
            vt = sec.topo_path if v == "proto" else \
                os.path.join(work, "%s.%s.json" % (topo, v))
            if not os.path.exists(vt) and not variant_topology(sec.topo_path, v, vt):
                continue
            for size in sorted({sizes[0], sizes[-1]}):
                jobs.append(("variant", rid, size, v, vt, target,
                             (sec, stem, inst)))
        for v, at in (("nic-rate", sizes),
                      ("latency+nic-rate", sorted({sizes[0], sizes[-1]}))):
            rates = []
            for f in NIC_RATES:
                vt = os.path.join(work, "%s.%s-%g.json" % (topo, v, f))
                if os.path.exists(vt) or variant_topology(
                        sec.topo_path, "%s:%g" % (v, f), vt):
                    rates.append((f, vt))
            for size in at if rates else ():
                jobs.append(("nic-rate", rid, size, v, rates, sec, target))
    lock = __import__("threading").Lock()

    def one(job):
        kind, rid, size = job[0], job[1], job[2]
        if kind == "nic-rate":
            got = nic_rates(runner, work, rid, size, *job[3:])
            with lock:
                key = {"nic-rate": "nic_rate",
                       "latency+nic-rate": "latency_nic_rate"}[job[3]]
                out[rid].setdefault(key, {})[size] = got
            return
        if kind == "proto":
            us = run_time(runner, job[3], job[4], size, job[5])
            if us:
                with lock:
                    cur = out[rid]["protos"].get(size)
                    if cur is None or us < cur[0]:
                        out[rid]["protos"][size] = (us, job[6])
            return
        v, vt, target, (sec, stem, inst) = job[3], job[4], job[5], job[6]
        nx = os.path.join(work, "calib.%s.%s.%d.nccl.xml" % (rid, v, size))
        rc, o, err, secs = runner.sh([runner.synth, "--algo", "nccl",
                                      sec.topo_path, "--collective", sec.coll,
                                      "--size", str(size), "-o", nx, "-q"] +
                                     target)
        nus, npick = None, None
        if rc == 0 and v != "proto":
            nus, npick = run_time(runner, nx, vt, size, target), proto_of(nx)
        elif rc == 0:       # its own protocol is one of the three
            for q in ("LL", "LL128", "Simple"):
                px = "%s.%s.xml" % (nx[:-4], q)
                with_proto(nx, q, px)
                us = run_time(runner, px, vt, size, target)
                os.remove(px)
                if us and (nus is None or us < nus):
                    nus, npick = us, q
        if os.path.exists(nx):
            os.remove(nx)
        best, spick = None, None
        for a in data.ok(sec):
            if a["kind"] != "sketch" or a["spec"]["sketch"] != stem or \
                    a["spec"].get("instances", 1) != inst or \
                    not data.row(a, size):
                continue
            xml = anchor_xml(work, a)
            for p in [xml] + ["%s.%s.xml" % (xml[:-4], q) for q in
                              ("LL", "LL128") if size <= PROTO_MAX]:
                if os.path.exists(p):
                    us = run_time(runner, p, vt, size, target)
                    if us and (best is None or us < best):
                        best, spick = us, proto_of(p)
        with lock:
            out[rid]["variants"].setdefault(v, {})[size] = (nus, best)
            out[rid].setdefault("picks", {}).setdefault(v, {})[size] = \
                (npick, spick)

    with concurrent.futures.ThreadPoolExecutor(max(1, runner.jobs)) as ex:
        list(ex.map(one, jobs))
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    print("bench_calib.py is used by scripts/bench_run.py (make bench); "
          "see --help", file=sys.stderr)
    sys.exit(2)
