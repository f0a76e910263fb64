# tabletrack - build, test, install. The one build description: every
# binary (daemon, tools, unit tests, GPU test and bench, fuzz targets, soak)
# is built from the rules here.
#
#   make                 build the daemon, tools and tests into build/
#   make run             install missing packages, build, run on camera or demo
#   make test            install missing packages, build, run every test
#   make deps            install the missing Debian packages (tools/deps.sh)
#   make SAN=address,undefined test    the same under sanitizers (also SAN=thread)
#   make CUDA=0|1|auto   build the GPU stage never / always / when nvcc exists
#   make UI=0 PNG=0 ...  leave out an optional library (auto: when pkg-config
#                        finds it); OPTIONAL=0 leaves out all of them
#   make gpu-test gpu-bench   the GPU stage against the CPU, and its bench (CUDA=1)
#   make fuzz            build the libFuzzer targets (clang) into build/fuzz/
#   make soak            30 minutes under ASan and TSan (tools/soak.sh)
#   make check-layers    the include rules of architecture.md (also in make test)
#   make install PREFIX=/usr/local DESTDIR=
#   make format          clang-format every source file
#
# Every room's .c files are picked up by wildcard: a new file needs no edit here.
#
# Each flag set (CUDA, SAN, the optional libraries) compiles into its own
# folder, $(BUILD)/obj-<variant>/, so a sanitizer build never reuses plain
# objects; the binaries are linked into $(BUILD)/ and relinked when the
# variant changes ($(BUILD)/variant records the last one).
#
# Libraries. Required: libc and liblo (the TUIO transport); for `make` (all)
# also cmocka and oscpack (the tests). liblo is found by pkg-config, else in
# LIBLO_PREFIX (a folder holding usr/include/lo and usr/lib/*/liblo.a, e.g.
# the liblo-dev .deb unpacked with dpkg -x; linked statically), else through
# the compiler's own search path (CPATH, LIBRARY_PATH).
# Optional, each NAME=auto|0|1 (auto: when pkg-config finds it), and the
# daemon says what is missing when a feature needs one:
#   UI       sdl2          the calibration window (--window); else headless only
#   PNG      libpng        PNG frames and dumps; PGM works without
#   JPEG     libturbojpeg  MJPEG cameras and raw pipes
#   INIH     inih          config files (--config); command-line options work without
#   SYSTEMD  libsystemd    sd_notify readiness and watchdog pings
#   V4L2     libv4l2       format conversion for cameras; without it the camera
#                          is driven with plain V4L2 system calls
#   ZLIB     zlib          tools only (tabletrack-fiducials writes PDF)
#   OPENCV   opencv4       objects recognised by their look (src/objects/: the
#                          SIFT backend, a C++ wrapper); without it the
#                          object library loads and lists, recognition says
#                          it was built without OpenCV

CC       ?= gcc
CXX      ?= g++
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
SAN      ?=
CUDA     ?= auto
OPTIONAL ?= auto
VERSION  := 0.1.0

comma := ,
empty :=
space := $(empty) $(empty)
pc_have = $(shell pkg-config --exists $(1) 2>/dev/null && echo 1 || echo 0)

# Goals that must work before the libraries are installed.
NO_LIB_GOALS := deps run test clean format check-layers help
LIB_GOALS    := $(if $(MAKECMDGOALS),$(filter-out $(NO_LIB_GOALS),$(MAKECMDGOALS)),all)

# --- optional libraries --------------------------------------------------------
# $(call optional,VAR,pkg-config name,word for the variant folder)
OPT_PKGS :=
OPT_OFF  :=
define optional
$(1) ?= $$(OPTIONAL)
ifeq ($$($(1)),auto)
  override $(1) := $$(call pc_have,$(2))
endif
ifeq ($$($(1)),1)
  ifneq ($$(LIB_GOALS),)
    ifeq ($$(call pc_have,$(2)),0)
      $$(error $(1)=1 but pkg-config does not find $(2): run `make deps`, or build with $(1)=0)
    endif
  endif
  OPT_PKGS += $(2)
else
  override $(1) := 0
  OPT_OFF += $(3)
endif
endef
$(eval $(call optional,UI,sdl2,sdl))
$(eval $(call optional,PNG,libpng,png))
$(eval $(call optional,JPEG,libturbojpeg,jpeg))
$(eval $(call optional,INIH,inih,inih))
$(eval $(call optional,SYSTEMD,libsystemd,systemd))
$(eval $(call optional,V4L2,libv4l2,v4l2))
$(eval $(call optional,ZLIB,zlib,zlib))

# OpenCV is not one of the `optional` list: its pkg-config --libs names every
# module (and --cflags only matters to the C++ wrapper), so the three modules
# SIFT needs are named here, and its headers are system headers (-isystem:
# our warnings are not OpenCV's).
OPENCV ?= $(OPTIONAL)
ifeq ($(OPENCV),auto)
  override OPENCV := $(call pc_have,opencv4)
endif
ifeq ($(OPENCV),1)
  ifneq ($(LIB_GOALS),)
    ifeq ($(call pc_have,opencv4),0)
      $(error OPENCV=1 but pkg-config does not find opencv4: apt-get install libopencv-dev, or build with OPENCV=0)
    endif
  endif
  OPENCV_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags opencv4 2>/dev/null))
  OPENCV_LIBS   := $(shell pkg-config --libs-only-L opencv4 2>/dev/null) -lopencv_features2d -lopencv_imgproc -lopencv_core -lstdc++
else
  override OPENCV := 0
  OPT_OFF += opencv
endif

# --- required libraries --------------------------------------------------------
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
ifneq ($(LIBLO_PREFIX),)
  LO_CFLAGS := -I$(LIBLO_PREFIX)/usr/include -I$(LIBLO_PREFIX)/include
  LO_A      := $(firstword $(wildcard $(LIBLO_PREFIX)/usr/lib/$(MULTIARCH)/liblo.a $(LIBLO_PREFIX)/usr/lib/liblo.a $(LIBLO_PREFIX)/lib/liblo.a))
  LO_LIBS   := $(if $(LO_A),$(LO_A),-L$(LIBLO_PREFIX)/usr/lib/$(MULTIARCH) -L$(LIBLO_PREFIX)/lib -llo) -lpthread
  LO_FOUND  := $(if $(wildcard $(LIBLO_PREFIX)/usr/include/lo/lo.h $(LIBLO_PREFIX)/include/lo/lo.h),1,0)
else ifeq ($(call pc_have,liblo),1)
  LO_CFLAGS := $(shell pkg-config --cflags liblo)
  LO_LIBS   := $(shell pkg-config --libs liblo)
  LO_FOUND  := 1
else
  LO_CFLAGS :=
  LO_LIBS   := -llo -lpthread
  LO_FOUND  := $(shell printf '\043include <lo/lo.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1 || echo 0)
endif
ifneq ($(LIB_GOALS),)
  ifeq ($(LO_FOUND),0)
    $(error liblo not found (lo/lo.h): run `make deps` (or sh tools/deps.sh), or point LIBLO_PREFIX, PKG_CONFIG_PATH or CPATH/LIBRARY_PATH at it)
  endif
endif
# The tests need cmocka and oscpack; only goals that build them ask.
ifneq ($(filter all tests,$(LIB_GOALS)),)
  ifeq ($(call pc_have,cmocka),0)
    $(error cmocka not found (the unit tests): run `make deps` (or sh tools/deps.sh), or build the daemon alone: make build/tabletrack)
  endif
endif

PKG_CFLAGS := $(if $(strip $(OPT_PKGS)),$(shell pkg-config --cflags $(OPT_PKGS)))
PKG_LIBS   := $(if $(strip $(OPT_PKGS)),$(shell pkg-config --libs $(OPT_PKGS)))

WARN     := -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror
CFLAGS   ?= -O2 -g
HAVE     := -DTT_HAVE_SDL=$(UI) -DTT_HAVE_PNG=$(PNG) -DTT_HAVE_JPEG=$(JPEG) -DTT_HAVE_INIH=$(INIH) \
            -DTT_HAVE_SYSTEMD=$(SYSTEMD) -DTT_HAVE_V4L2=$(V4L2) -DTT_HAVE_OPENCV=$(OPENCV)
TT_CFLAGS = -std=c11 $(WARN) -D_GNU_SOURCE -DTT_VERSION=\"$(VERSION)\" -MMD -MP $(HAVE) \
            -DTT_HAVE_CUDA=$(CUDA) $(LO_CFLAGS) $(PKG_CFLAGS)
LDLIBS   += $(LO_LIBS) $(PKG_LIBS) $(OPENCV_LIBS) -lpthread -lm

# Undefined behaviour stops the program (UBSan only prints and goes on by
# default, so a run with a report still passed).
SAN_FLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer -O1 \
	$(if $(findstring undefined,$(SAN)),-fno-sanitize-recover=undefined))
ifneq ($(SAN),)
TT_CFLAGS += $(SAN_FLAGS)
LDFLAGS   += -fsanitize=$(SAN)
endif

# --- CUDA seam: cuda/*.cu when nvcc is there (CUDA=auto) or demanded (CUDA=1),
# else cuda/none.c, which reports the GPU path as not built.
# The runtime library's folder comes from nvcc itself: the nvcc on PATH may be
# a wrapper script outside the toolkit (CI has /usr/local/bin/nvcc), so its
# own path says nothing about where libcudart_static.a lives.
ifneq ($(NVCC),)
  CUDA_LIBDIR ?= $(shell sh tests/gpu/cuda_libdir.sh $(NVCC))
endif
ifeq ($(CUDA),auto)
  ifneq ($(wildcard $(CUDA_LIBDIR)/libcudart_static.a),)
    override CUDA := 1
  else
    ifneq ($(NVCC),)
      $(info nvcc found but not libcudart_static.a; building without the GPU stage)
    endif
    override CUDA := 0
  endif
endif
ifeq ($(CUDA),1)
  ifeq ($(wildcard $(CUDA_LIBDIR)/libcudart_static.a),)
    ifneq ($(LIB_GOALS),)
      $(error CUDA=1 but no nvcc with libcudart_static.a (NVCC=$(NVCC)))
    endif
  endif
endif
CUDA_ARCH ?= -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89 \
             -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90

# --- the variant: one object folder per flag set -------------------------------
VARIANT := cuda$(CUDA)$(if $(strip $(OPT_OFF)),-no-$(subst $(space),-,$(strip $(OPT_OFF))))$(if $(SAN),-san-$(subst $(comma),-,$(SAN)))
OBJ      := $(BUILD)/obj-$(VARIANT)
STAMP    := $(BUILD)/variant
ifneq ($(LIB_GOALS),)
  $(shell mkdir -p $(BUILD); [ "$$(cat $(STAMP) 2>/dev/null)" = "$(VARIANT)" ] || echo "$(VARIANT)" >$(STAMP))
endif

ifeq ($(CUDA),1)
  CUDA_SRC  := $(wildcard cuda/*.cu)
  CUDA_OBJ  := $(CUDA_SRC:%.cu=$(OBJ)/%.o)
  LDLIBS    += -L$(CUDA_LIBDIR) -lcudart_static -ldl -lrt -lstdc++
else
  CUDA_OBJ  := $(OBJ)/cuda/none.o
  # The GPU segmenter's stand-in (label_cuda.h) without nvcc.
  CUDA_OBJ  += $(OBJ)/cuda/label_none.o
  # The GPU SIFT's stand-in (sift_cuda.h) without nvcc.
  CUDA_OBJ  += $(OBJ)/cuda/sift_none.o
endif

# The window is the only SDL user: without SDL2 ui_sdl.c is not compiled
# and ui.c offers the headless front end alone.
LIB_SRC  := $(filter-out src/main.c $(if $(filter 0,$(UI)),src/ui/ui_sdl.c),$(wildcard src/*/*.c))
GEN_SRC  := $(BUILD)/gen/default_trees.c
# The C++ of a room (the OpenCV wrapper) is compiled only with OpenCV.
LIB_CXX  := $(if $(filter 1,$(OPENCV)),$(wildcard src/*/*.cpp))
LIB_OBJ  := $(LIB_SRC:%.c=$(OBJ)/%.o) $(LIB_CXX:%.cpp=$(OBJ)/%.o) $(CUDA_OBJ) $(OBJ)/gen/default_trees.o
LIB      := $(OBJ)/libtabletrack.a

# Tools: every tools/NAME.c is build/tabletrack-NAME, linked with
# tools/common/ (as an archive: each takes what it uses). A tool that needs
# an optional library is left out without it.
TOOLS_NEED_JPEG := scenes
TOOLS_NEED_ZLIB := fiducials
TOOL_SKIP := $(if $(filter 0,$(JPEG)),$(TOOLS_NEED_JPEG)) $(if $(filter 0,$(ZLIB)),$(TOOLS_NEED_ZLIB))
TOOL_COMMON := $(filter-out $(if $(filter 0,$(ZLIB)),tools/common/sheet.c),$(wildcard tools/common/*.c))
TOOL_LIB := $(OBJ)/libtools.a
TOOL_SRC := $(filter-out $(TOOL_SKIP:%=tools/%.c),$(wildcard tools/*.c))
TOOLS    := $(TOOL_SRC:tools/%.c=$(BUILD)/tabletrack-%)

TEST_SRC := $(wildcard tests/test_*.c)
TESTS    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_CXX := $(wildcard tests/*.cpp)
TEST_CXX_BIN := $(TEST_CXX:tests/%.cpp=$(BUILD)/tests/%)

all: $(BUILD)/tabletrack $(TOOLS) $(TESTS) $(TEST_CXX_BIN)
tests: $(TESTS) $(TEST_CXX_BIN)

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(TT_CFLAGS) $(CFLAGS) -c $< -o $@

$(OBJ)/src/%.o: src/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(filter-out -Wmissing-prototypes,$(WARN)) -MMD -MP $(HAVE) $(OPENCV_CFLAGS) \
		$(SAN_FLAGS) $(CFLAGS) -c $< -o $@

$(OBJ)/cuda/%.o: cuda/%.cu $(wildcard cuda/*.h)
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -std=c++17 $(CUDA_ARCH) -lineinfo -Xcompiler -Wall,-Wextra -Werror all-warnings -DTT_HAVE_CUDA=1 -c $< -o $@

# The default symbol set is compiled into the daemon so it runs from anywhere.
$(GEN_SRC): $(wildcard fiducials/tabletrack.trees)
	@mkdir -p $(dir $@)
	@{ echo '/* Generated from fiducials/tabletrack.trees by the Makefile. */'; \
	   echo 'const char tree_set_builtin_text[] ='; \
	   if [ -f fiducials/tabletrack.trees ]; then sed 's/[^wb0-9 ]//g; s/.*/"&\\n"/' fiducials/tabletrack.trees; fi; \
	   echo '"";'; } > $@

$(OBJ)/gen/default_trees.o: $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(TT_CFLAGS) $(CFLAGS) -Wno-missing-variable-declarations -include src/fiducial/trees.h -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(TOOL_LIB): $(TOOL_COMMON:%.c=$(OBJ)/%.o)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tabletrack: $(OBJ)/src/main.o $(LIB) $(STAMP)
	$(CC) $(LDFLAGS) $(filter %.o %.a,$^) -o $@ $(LDLIBS)

$(BUILD)/tabletrack-%: $(OBJ)/tools/%.o $(TOOL_LIB) $(LIB) $(STAMP)
	$(CC) $(LDFLAGS) $(filter %.o %.a,$^) -o $@ $(LDLIBS)

$(BUILD)/tests/test_%: $(OBJ)/tests/test_%.o $(OBJ)/tests/common/testutil.o $(LIB) $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o %.a,$^) -o $@ $(LDLIBS) -lcmocka

# Independent TUIO decoder for end-to-end tests, built on Debian's oscpack.
$(BUILD)/tests/%: tests/%.cpp $(STAMP)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -g -Wall -Wextra -Werror $(if $(SAN),-fsanitize=$(SAN)) -I/usr/include/oscpack $< -o $@ -loscpack

deps:
	@sh tools/deps.sh

# `make run` and `make test` build with one job a CPU (nvcc's six
# architectures alone take minutes one at a time); a -j given on the
# command line wins.
JOBS ?= $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
JOBS_FLAG = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

run: deps
	@$(MAKE) --no-print-directory $(JOBS_FLAG) $(BUILD)/tabletrack
	$(BUILD)/tabletrack --headless

test: deps
	@$(MAKE) --no-print-directory $(JOBS_FLAG) all
	@sh tests/run.sh $(BUILD)

# The libFuzzer targets: every tests/fuzz/fuzz_NAME.c becomes
# $(BUILD)/fuzz/fuzz_NAME, linked with the library built by clang with
# -fsanitize=fuzzer-no-link,address,undefined in its own folder.
#   build/fuzz/fuzz_trees -max_total_time=60 DIR
# The targets link only the parsers' own objects (FUZZ_LIB_SRC), not the
# whole library: make test builds them, and compiling all 70 objects under
# ASan took a minute of CI's ten. A target that needs another object fails
# to link, loudly, in e2e_fuzz: add its source here.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_LIB_SRC := src/config/config.c src/core/err.c src/core/file.c src/core/image.c \
	src/core/image_io.c src/core/log.c src/core/path.c src/fiducial/trees.c \
	src/objects/library.c src/tuio/tuio_net.c
FUZZ_LIB := $(OBJ)/libfuzz.a
fuzz:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CC=clang CUDA=0 UI=0 OPENCV=0 \
		SAN=fuzzer-no-link,address,undefined CFLAGS='-O1 -gline-tables-only' fuzz-targets
fuzz-targets: $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/%)
$(FUZZ_LIB): $(FUZZ_LIB_SRC:%.c=$(OBJ)/%.o)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/fuzz_%: $(OBJ)/tests/fuzz/fuzz_%.o $(FUZZ_LIB) $(STAMP)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer $(filter %.o %.a,$^) -o $@ $(LDLIBS)

# The include rules of architecture.md (make test runs them too).
check-layers:
	@sh tools/check_layers.sh

# Installs the daemon and tools, the unit files (ExecStart pointed at
# $(PREFIX)/bin), every symbol set (subfolders kept), a man page made from
# --help, and the docs. An existing /etc/tabletrack/tabletrack.conf is kept:
# the new default goes next to it as tabletrack.conf.default (and always to
# $(PREFIX)/share/tabletrack/tabletrack.conf).
UNITDIR  ?= $(PREFIX)/lib/systemd/system
install: $(BUILD)/tabletrack $(TOOLS) $(BUILD)/tabletrack.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)/etc/tabletrack $(DESTDIR)$(PREFIX)/share/tabletrack/fiducials \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/tabletrack
	install -m 755 $(BUILD)/tabletrack $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 config/tabletrack.conf $(DESTDIR)$(PREFIX)/share/tabletrack/tabletrack.conf
	install -m 644 config/calibration-sheet*.svg $(DESTDIR)$(PREFIX)/share/tabletrack/
	@if [ -e $(DESTDIR)/etc/tabletrack/tabletrack.conf ]; then \
		echo "install: keeping $(DESTDIR)/etc/tabletrack/tabletrack.conf; the new default is tabletrack.conf.default"; \
		install -m 644 config/tabletrack.conf $(DESTDIR)/etc/tabletrack/tabletrack.conf.default; \
	else \
		echo "install -m 644 config/tabletrack.conf $(DESTDIR)/etc/tabletrack/tabletrack.conf"; \
		install -m 644 config/tabletrack.conf $(DESTDIR)/etc/tabletrack/tabletrack.conf; \
	fi
	find fiducials -type f | while read -r f; do \
		install -D -m 644 "$$f" "$(DESTDIR)$(PREFIX)/share/tabletrack/$$f" || exit 1; done
	for u in tabletrack.service tabletrack@.service; do \
		sed 's|/usr/local/bin/tabletrack|$(PREFIX)/bin/tabletrack|g' config/$$u >$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	install -m 644 $(BUILD)/tabletrack.1 $(DESTDIR)$(PREFIX)/share/man/man1/tabletrack.1
	install -m 644 $(wildcard README.md docs/*.md) $(DESTDIR)$(PREFIX)/share/doc/tabletrack/

# Everything install put down except the files in /etc/tabletrack.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tabletrack $(TOOLS:$(BUILD)/%=$(DESTDIR)$(PREFIX)/bin/%) \
		$(DESTDIR)$(UNITDIR)/tabletrack.service $(DESTDIR)$(UNITDIR)/tabletrack@.service \
		$(DESTDIR)$(PREFIX)/share/man/man1/tabletrack.1
	rm -rf $(DESTDIR)$(PREFIX)/share/tabletrack $(DESTDIR)$(PREFIX)/share/doc/tabletrack

# A man page from --help (no help2man needed): the option text as is.
$(BUILD)/tabletrack.1: $(BUILD)/tabletrack
	{ printf '.TH TABLETRACK 1 "" "tabletrack $(VERSION)" "User Commands"\n.SH NAME\ntabletrack \\- camera tracking daemon for tabletop interfaces (TUIO)\n'; \
	  printf '.SH SYNOPSIS\n.B tabletrack\n[\\fIOPTION\\fR]...\n.SH DESCRIPTION\n.nf\n'; \
	  $(BUILD)/tabletrack --help | sed -e 's/\\/\\e/g' -e "s/^[.']/\\\\\&&/"; \
	  printf '.fi\n.SH FILES\n/etc/tabletrack/tabletrack.conf, $(UNITDIR)/tabletrack.service, tabletrack@.service\n'; \
	  printf '.SH SEE ALSO\n$(PREFIX)/share/doc/tabletrack/service.md, systemctl(1), journalctl(1)\n'; } >$@

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu' '*.cpp')

clean:
	rm -rf $(BUILD)

.PHONY: all tests deps run test fuzz fuzz-targets check-layers install uninstall format clean
.SECONDARY:

# A variant's stamp is written when the Makefile is read; this rule only
# covers a goal that skipped that.
$(STAMP):
	@mkdir -p $(dir $@)
	@echo "$(VARIANT)" >$@

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

# --- GPU test and benchmarks: the library objects of a CUDA=1 build plus
# tests/gpu/NAME.c (build/gpu/NAME), with the project's warnings. They need
# only the CUDA toolkit, libc and liblo (see LIBLO_PREFIX above).
#   make gpu-test     CUDA against the CPU reference, bit for bit (GPU_FRAMES=DIR of PGM/PNG frames)
#   make gpu-bench    per-stage medians and p99, CPU and GPU (GPU_BENCH_ARGS="FRAMES [WxH]")
#   make frame-bench  build/tabletrack-bench built with the GPU stage (tests/gpu/run_frame_bench.sh runs it)
GPU_SRC := $(wildcard tests/gpu/*.c)
GPU_BIN := $(GPU_SRC:tests/gpu/%.c=$(BUILD)/gpu/%)
ifneq ($(filter gpu-test gpu-bench gpu-build gpu-ptxas frame-bench $(BUILD)/gpu/%,$(MAKECMDGOALS)),)
  ifneq ($(CUDA),1)
    $(error the GPU test and benches need the GPU stage: nvcc with libcudart_static.a (CUDA=1))
  endif
endif

$(BUILD)/gpu/%: $(OBJ)/tests/gpu/%.o $(LIB) $(STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o %.a,$^) -o $@ $(LDLIBS)

gpu-build: $(GPU_BIN)

gpu-test: $(BUILD)/gpu/gpu_test
	$(BUILD)/gpu/gpu_test $(GPU_FRAMES)

gpu-bench: $(BUILD)/gpu/gpu_bench
	$(BUILD)/gpu/gpu_bench $(GPU_BENCH_ARGS)

frame-bench: $(BUILD)/tabletrack-bench

# Registers and spills of every kernel, per architecture (ptxas -v).
gpu-ptxas:
	$(NVCC) -O3 -std=c++17 $(CUDA_ARCH) -Xptxas -v -DTT_HAVE_CUDA=1 -c $(CUDA_SRC) -o /dev/null

.PHONY: gpu-build gpu-test gpu-bench frame-bench gpu-ptxas

# --- Soak (not part of make test): the demo for SOAK_MINUTES (default 30)
# under SAN=address,undefined and SAN=thread in parallel (builds in
# build/soak/), RSS sampled every minute; fails on any sanitizer report or
# RSS growth after the warm-up. Settings: see tools/soak.sh.
soak:
	@sh tools/soak.sh

.PHONY: soak
