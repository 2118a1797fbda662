# taccl — build, test and run.
#
#   make run     install missing dependencies, build, run the bundled example
#   make test    build and run the unit tests (cmocka) alone: the
#                edit-compile-test loop, under a minute
#   make check   install missing dependencies, build, run every test (the
#                loops over every bundled sketch on a few of them), and
#                beside it (the second core) the suite under ASan + UBSan
#                without the scripts marked "tier: full" or "tier: plain";
#                ends with one line "N passed, N failed" over both runs.
#                What CI runs; 8 minutes at most
#   make check-full     every test plain, then every test under ASan + UBSan
#                (CI may run it when it fits its budget)
#   make check-asan     the whole sanitized suite alone, built with
#                -fsanitize=address,undefined into build-asan/; any
#                sanitizer report fails its test
#   make check-valgrind the CLI tests with build/bin (and the fuzz replay
#                programs) under valgrind memcheck
#   make all     build the tools into build/bin
#   make bench   baselines and bounds over size sweeps: results.md and
#                plots in build/bench/ (QUICK=1 for a short run; UPDATE=1
#                regenerates the tracked bench/ instead; TOPO=T.json
#                [SKETCHES="a.json ..."] [COLLECTIVES="allgather ..."]: the
#                same for your topology, in build/bench/<its name>/)
#   make bench-plan  plans made with no sketch against NCCL and every
#                baseline at every size (TOPOS="T ...", BUDGET=S per plan,
#                default 120; all 15 bundled machines x 4 collectives take
#                one to two hours), then issue 14's targets with TACCL's
#                sketches given (scripts/bench_plan_targets.py, ~10 min)
#   make bench-forestcoll  ForestColl's own schedules (tests/data/forestcoll)
#                beside our plans made with --tiles, on its MI250 x2 and
#                A100 x2, AllGather and ReduceScatter, 64M / 256M / 1G, with
#                the exact bound and its optimum (~10 min), then our 1 GiB
#                plans against the exact bound on every bundled GPU machine,
#                for MSCCL XML and for MSCCL++ (--mscclpp; --time-budget 60
#                each, about an hour and a half): build/bench/
#                forestcoll.md, or with UPDATE=1 the tracked bench/forestcoll.md;
#                make bench runs it too (not with TOPO=)
#   make bench-mscclpp  the same schedules as MSCCL XML and as MSCCL++
#                plans (every multi-node GPU machine, its first bundled
#                sketch and --algo nccl, allgather/reducescatter/allreduce,
#                SIZES, default 1M; 7 min on two idle cores, 36-57 shared), time, bound
#                and what makes them differ: build/bench/mscclpp.md, or
#                with UPDATE=1 the tracked bench/mscclpp.md; make bench
#                runs it too (not with TOPO=)
#   make bench-nccl-model  our executor's time of every --algo nccl schedule
#                beside NCCL's own tuning estimate for it (every bundled GPU
#                machine x allgather/reducescatter/allreduce x 1K, 4K, ..
#                1G; ALL=1 every power of two), and the rows outside x/ 1.25
#                run again under each changed assumption: build/bench/
#                nccl-model.md, or with UPDATE=1 the tracked bench/nccl-model.md;
#                make bench runs it too (not with TOPO=)
#   make bench-yardstick  issue 41's plan target: plans with no sketch on
#                DGX H100 x1, x2, x4 and DGX A100 x2 (allgather,
#                reducescatter, allreduce; --time-budget 60) swept 1K-1G in
#                both buffer modes against NCCL's schedule in every model
#                variant (~10 min): build/bench/yardstick.md, or with
#                UPDATE=1 the tracked bench/yardstick.md; make bench runs it
#                too (not with TOPO=)
#   make bench-nccl-published  published nccl-tests measurements on A100
#                and H100 machines (tests/data/published, with sources)
#                beside the model's --algo nccl at the same sizes, rows
#                outside x/ 1.15 (>= 64 MiB) or x/ 1.5 run again under each
#                changed assumption (~3 min idle, 11 shared): build/bench/nccl-published.md,
#                or with UPDATE=1 the tracked bench/nccl-published.md; make
#                bench runs it too (not with TOPO=)
#   make speed   executor speed next to memcpy
#   make fuzz    libFuzzer on the sketch, topology and XML loaders, each for
#                SECONDS seconds (default 60), in build-fuzz/ (clang)
#   make scale   time and peak memory of taccl-run and taccl-synth as the
#                ranks grow (BASE=REV: the same for REV beside this tree)
#   make scale-targets  the cluster-scale targets (issue 42 item 5,
#                scripts/scale_targets.sh): plans on DGX H100 x16, DGX A100
#                x16 and DGX H100 x128 within their budgets, their picks
#                against NCCL's schedule at every size (hours on 2 cores):
#                build/bench/scale-targets.md, or with UPDATE=1 the tracked
#                bench/scale-targets.md
#
# Sources are found by wildcard: every src/**/*.c except src/cli/ goes into
# build/libtaccl.a; each src/cli/<tool>.c is a program; each tests/test_*.c a
# cmocka test binary; each tests/cli/*.sh a CLI test script; each
# tests/fuzz/fuzz_<x>.c a libFuzzer target (make fuzz) and, linked with
# tests/fuzz/replay.c, a replay program that make check runs on tests/bad.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
CFLAGS  ?=
WARN    := -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L
# cbc: the second LP/MILP backend (coinor-libcbc-dev); its --libs bring CLP,
# Cgl, Osi and CoinUtils.  Debian's GLPK ships no pkg-config file; fall back
# to plain -lglpk.
PKGS    := libxml-2.0 libcjson cbc
PC_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PC_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) \
            $(shell pkg-config --libs glpk 2>/dev/null || echo -lglpk) -lm
ALL_CFLAGS = $(WARN) $(OPT) -g $(CFLAGS) $(PC_CFLAGS) -Isrc -MMD -MP

LIB_SRC  := $(shell find src -name '*.c' -not -path 'src/cli/*' | sort)
CLI_SRC  := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
BINS     := $(CLI_SRC:src/cli/%.c=$(BUILD)/bin/%)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
REPLAYS  := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=$(BUILD)/fuzz/replay_%)
FUZZERS  := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
LIB      := $(BUILD)/libtaccl.a

# The sanitized build: same sources and rules in its own directory, with
# clang (its UBSan honours log_path, which run_tests.sh scans; GCC 12's does
# not).  -O1 keeps stack traces readable and the suite quick enough for CI;
# -gline-tables-only (after ALL_CFLAGS' -g) keeps file:line in the reports
# and builds in 97 s where full debug information took 112 (one core).
ASAN_BUILD ?= build-asan
ASAN_CC    ?= clang
SAN_FLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer \
              -fno-sanitize-recover=all -DTC_CHECKS -gline-tables-only
TALLY      := $(BUILD)/tally

.PHONY: all tests deps run check check-full check-asan check-valgrind test clean bench bench-plan bench-forestcoll bench-mscclpp bench-nccl-model bench-nccl-published bench-yardstick speed fuzz fuzzers scale scale-targets
.SECONDARY:

all: $(BINS)

tests: $(TESTS) $(REPLAYS)

deps:
	@scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/%: $(BUILD)/src/cli/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -g $(CFLAGS) $< $(LIB) $(PC_LIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -g $(CFLAGS) $< $(LIB) $(PC_LIBS) -lcmocka -o $@

$(BUILD)/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz_common.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) -g $(CFLAGS) $(PC_CFLAGS) -Isrc $< tests/fuzz/replay.c $(LIB) $(PC_LIBS) -o $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) -g $(CFLAGS) $(PC_CFLAGS) -Isrc $< $(LIB) $(PC_LIBS) -o $@

# The dependency step runs first, in its own make, so pkg-config sees what
# it installed.
run: deps
	@$(MAKE) --no-print-directory all
	@scripts/run_example.sh $(BUILD)/bin

ASAN_MAKE = $(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) CC=$(ASAN_CC) OPT=-O1 \
	    CFLAGS="$(CFLAGS) $(SAN_FLAGS)"
ASAN_LOG  := $(BUILD)/check-asan.log

# check: the normal build of the tools and the replay programs test_bad.sh
# runs (both cores; its lane runs no unit binary, so they are not built:
# 21 s where all of them took 29), then two lanes side by side, one
# per core: the normal suite, and the sanitized build (one job) followed by
# the quick sanitized suite, whose output -- the build's too -- is kept in
# $(ASAN_LOG) and printed after.  The sanitized build overlaps the normal
# suite instead of holding both lanes up.  Each run prints its own "N
# passed, N failed" and adds it to $(TALLY); the last line sums both (a run
# that printed no count, a failed sanitized build included, fails the
# total).  The normal suite runs the loops over bundled sketches, machines
# and seeds on a few (TACCL_FEW, tests/cli/lib.sh) and leaves out the
# scripts marked "tier: sanitized" and the unit binaries; the quick sanitized one runs the same
# few (TACCL_QUICK) and leaves out those marked "tier: full" or "tier:
# plain".  make check's budget is 8 minutes on 2 cores.

check: deps
	@$(MAKE) --no-print-directory -j2 all $(REPLAYS)
	@mkdir -p $(BUILD) && rm -f $(TALLY)
	@( { $(ASAN_MAKE) all tests && TACCL_TALLY=$(abspath $(TALLY)) TACCL_TIER=quick \
	    scripts/run_tests.sh --asan $(ASAN_BUILD); } >$(ASAN_LOG) 2>&1 || true) & \
	 TACCL_TALLY=$(abspath $(TALLY)) TACCL_TIER=few TACCL_FEW=1 scripts/run_tests.sh $(BUILD) || true; \
	 wait; cat $(ASAN_LOG)
	@scripts/run_tests.sh --total $(TALLY) 2

# check-full: everything, plain then sanitized, one after the other.
check-full: deps
	@$(MAKE) --no-print-directory -j2 all tests
	@mkdir -p $(BUILD) && rm -f $(TALLY)
	@TACCL_TALLY=$(abspath $(TALLY)) scripts/run_tests.sh $(BUILD) || true
	@TACCL_TALLY=$(abspath $(TALLY)) $(MAKE) --no-print-directory check-asan || true
	@scripts/run_tests.sh --total $(TALLY) 2

check-asan: deps
	@$(ASAN_MAKE) -j2 all tests
	@scripts/run_tests.sh --asan $(ASAN_BUILD)

check-valgrind: deps
	@$(MAKE) --no-print-directory all $(REPLAYS)
	@scripts/run_tests.sh --valgrind $(BUILD)

test: deps
	@$(MAKE) --no-print-directory -j2 tests
	@scripts/run_tests.sh --units $(BUILD)

speed: deps
	@$(MAKE) --no-print-directory all
	@scripts/speed.sh $(BUILD)/bin

scale: deps
	@$(MAKE) --no-print-directory all
	@scripts/scale.sh $(BUILD)/bin $(if $(BASE),--base $(BASE))

scale-targets: deps
	@$(MAKE) --no-print-directory all
	@scripts/scale_targets.sh $(BUILD)/bin $(if $(UPDATE),--page bench/scale-targets.md)

bench: deps
	@$(MAKE) --no-print-directory all
	@QUICK=$(QUICK) UPDATE=$(UPDATE) TOPO=$(TOPO) SKETCHES="$(SKETCHES)" \
	    COLLECTIVES="$(COLLECTIVES)" scripts/bench.sh $(BUILD)/bin
	$(if $(TOPO),,@$(MPP_BENCH))
	$(if $(TOPO),,@$(PUB_BENCH))
	$(if $(TOPO),,@$(MODEL_BENCH))
	$(if $(TOPO),,@$(YARD_BENCH))
	$(if $(TOPO),,@$(MAKE) --no-print-directory bench-forestcoll UPDATE=$(UPDATE))

# issue 41's plan target: on DGX H100 x1, x2, x4 and DGX A100 x2 the plan's
# worst case over the model variants against NCCL's schedule, at every size
# 1 KiB-1 GiB, AllGather, ReduceScatter and AllReduce, both buffer modes
YARD_BENCH = mkdir -p $(BUILD)/bench && scripts/bench_plan.sh $(BUILD)/bin \
	    --topos "dgx-h100-x1 dgx-h100-x2 dgx-h100-x4 dgx-a100-x2" \
	    --collectives "allgather reducescatter allreduce" --budget 60 \
	    --out $(if $(filter 1 yes true,$(UPDATE)),bench/yardstick.md,$(BUILD)/bench/yardstick.md)

bench-yardstick: deps
	@$(MAKE) --no-print-directory all
	@$(YARD_BENCH)

# issue 38 item 6: XML and MSCCL++ plan of each schedule side by side
MPP_BENCH = mkdir -p $(BUILD)/bench && scripts/bench_mscclpp.py $(BUILD)/bin \
	    --sizes $(or $(SIZES),1M) --first-sketch --jobs 2 \
	    --out $(if $(filter 1 yes true,$(UPDATE)),bench/mscclpp.md,$(BUILD)/bench/mscclpp.md)

bench-mscclpp: deps
	@$(MAKE) --no-print-directory all
	@$(MPP_BENCH)

# issue 41 item 4b: the executor against NCCL's tuning model
MODEL_BENCH = mkdir -p $(BUILD)/bench && scripts/bench_nccl_model.py $(BUILD)/bin --jobs 2 \
	    $(if $(filter 1 yes true,$(ALL)),--all-sizes) \
	    --out $(if $(filter 1 yes true,$(UPDATE)),bench/nccl-model.md,$(BUILD)/bench/nccl-model.md)

bench-nccl-model: deps
	@$(MAKE) --no-print-directory all
	@$(MODEL_BENCH)

# issue 41 item 4a: published NCCL measurements beside the model
PUB_BENCH = mkdir -p $(BUILD)/bench && scripts/bench_nccl_published.py $(BUILD)/bin \
	    --out $(if $(filter 1 yes true,$(UPDATE)),bench/nccl-published.md,$(BUILD)/bench/nccl-published.md)

bench-nccl-published: deps
	@$(MAKE) --no-print-directory all
	@$(PUB_BENCH)

bench-plan: deps
	@$(MAKE) --no-print-directory all
	@scripts/bench_plan.sh $(BUILD)/bin --budget $(or $(BUDGET),120) \
	    $(if $(TOPOS),--topos "$(TOPOS)") $(if $(COLLECTIVES),--collectives "$(COLLECTIVES)") \
	    --out $(BUILD)/bench-plan.md
	@scripts/bench_plan_targets.py $(BUILD)/bin --out $(BUILD)/bench-plan-targets.md

bench-forestcoll: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p $(BUILD)/bench
	@scripts/bench_forestcoll.py $(BUILD)/bin \
	    $(if $(filter 1 yes true,$(UPDATE)),bench/forestcoll.md,$(BUILD)/bench/forestcoll.md) \
	    --mscclpp $(if $(PLANS),--plans $(PLANS))

# libFuzzer: the library and the targets built with clang and the fuzzer,
# address and undefined-behaviour sanitizers into their own directory, then
# each target run for SECONDS seconds (scripts/fuzz.sh).  Not part of check.
FUZZ_BUILD ?= build-fuzz
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SECONDS    ?= 60

fuzz: deps
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 CFLAGS="$(FUZZ_FLAGS)" fuzzers
	@scripts/fuzz.sh $(FUZZ_BUILD) $(SECONDS)

fuzzers: $(FUZZERS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

-include $(LIB_OBJ:.o=.d) $(TESTS:%=%.d) $(CLI_SRC:src/cli/%.c=$(BUILD)/src/cli/%.d)
